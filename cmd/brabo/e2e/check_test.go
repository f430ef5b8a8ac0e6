package e2e

// These tests run `brabo check` the way a user or a script does: the real
// binary, built once, as a real process in real temporary project folders
// with real permissions.json files. They read the exit code, standard
// output and standard error, nothing else.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"github.com/brabo-dev/brabo/policy"
)

// braboBin is the binary built by TestMain.
var braboBin string

// TestMain builds brabo and its slim binaries for the tests that run
// them, and lets the test binary be the sandbox's root helper, the
// Landlock launcher and the egress forwarder, as brabo's main does, for
// the envs opened in this process by the one wiring (e2e_helpers_test.go).
func TestMain(m *testing.M) {
	switch {
	case confine.IsLauncher(os.Args):
		confine.Main(os.Args)
	case sandbox.IsHelper(os.Args):
		sandbox.Main(os.Args)
	case egress.IsForwarder(os.Args):
		egress.Main(os.Args)
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "brabo-check-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "brabo check tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	braboBin = filepath.Join(dir, "brabo")
	build := exec.Command("go", "build", "-o", braboBin, "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "brabo check tests: go build:", err)
		return 1
	}
	// The slim hook beside brabo, where brabo install finds it.
	build = exec.Command("go", "build", "-o", filepath.Join(dir, "brabo-hook"), "../../brabo-hook")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "brabo check tests: go build brabo-hook:", err)
		return 1
	}
	// The slim checker beside brabo: brabo check's code in a binary
	// that links none of the server's dependencies.
	build = exec.Command("go", "build", "-o", filepath.Join(dir, "brabo-check"), "../../brabo-check")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "brabo check tests: go build brabo-check:", err)
		return 1
	}
	// The slim sandbox binary beside brabo, which brabo starts on every
	// sandboxed command's path (sandboxBinary).
	build = exec.Command("go", "build", "-o", filepath.Join(dir, "brabo-sandbox"), "../../brabo-sandbox")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "brabo check tests: go build brabo-sandbox:", err)
		return 1
	}
	return m.Run()
}

// result is what one run of the binary left.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// runBrabo runs the binary in dir with args; stdin is nil for no input.
func runBrabo(t *testing.T, dir string, stdin []byte, args ...string) result {
	t.Helper()
	return runBinary(t, braboBin, dir, stdin, args...)
}

// runBinary runs the binary bin in dir with args; stdin is nil for no
// input. An exit other than a normal one fails the test.
func runBinary(t *testing.T, bin, dir string, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		r.code = exit.ExitCode()
	default:
		t.Fatalf("%s %q: %v\n%s", filepath.Base(bin), args, err, r)
	}
	return r
}

// check runs `brabo check args…` in dir and fails unless it exits with want.
func check(t *testing.T, dir string, want int, args ...string) result {
	t.Helper()
	r := runBrabo(t, dir, nil, append([]string{"check"}, args...)...)
	if r.code != want {
		t.Fatalf("brabo check %q: exit %d, want %d\n%s", args, r.code, want, r)
	}
	return r
}

// project makes a project folder; permissions is written to its
// permissions.json unless it is "-" (no file at all).
func project(t *testing.T, permissions string) string {
	t.Helper()
	dir := t.TempDir()
	if permissions != "-" {
		writeFile(t, filepath.Join(dir, "permissions.json"), permissions)
	}
	return dir
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// decision decodes the --json output of a run.
func decision(t *testing.T, r result) brabo.Decision {
	t.Helper()
	var d brabo.Decision
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("--json output does not decode into brabo.Decision: %v\n%s", err, r)
	}
	if dec.More() {
		t.Fatalf("--json printed more than one value\n%s", r)
	}
	return d
}

const demoFile = `{
  "allow": ["Terminal(pnpm test)", "Terminal(pnpm test:*)", "Terminal(git status)", "Terminal(cat)", "Terminal(ls)", "Terminal(make)"],
  "deny":  ["Terminal(curl)", "Terminal(git reset --hard)"],
  "ask":   ["Terminal(pnpm publish)", "GitPush()"]
}`

func TestCheckExitCodeIsTheDecision(t *testing.T) {
	t.Parallel()
	root := project(t, demoFile)
	for _, tc := range []struct {
		command string
		want    int
		reason  string
	}{
		{"pnpm test", 0, "permissions.json allow: Terminal(pnpm test)"},
		{"pnpm test --watch", 0, "permissions.json allow: Terminal(pnpm test)"}, // token prefix
		{"pnpm test:unit", 0, "permissions.json allow: Terminal(pnpm test:*)"},  // '*' inside a token
		{"'pnpm' test", 0, "permissions.json allow: Terminal(pnpm test)"},       // quotes removed as the shell would
		{"pnpm test && git status", 0, "permissions.json allow: Terminal(pnpm test), Terminal(git status)"},
		{"pnpm build", 1, "default: no rule approves it"},   // prefix is by token, not by string
		{"pnpm testing", 1, "default: no rule approves it"}, // nor by a string prefix of a token
		{"pnpm test && pnpm build", 1, `compound: the segment "pnpm build" has no rule`},
		// A developer (check's default role) proposing an ask-listed
		// publish is asked, and a maintainer approves (DESIGN §10; the
		// JSON rows of TestCheckCapsAskAMaintainer check requiredRole).
		{"pnpm publish", 1, "permissions.json ask: Terminal(pnpm publish)"},
		// Git's helpers are git, for the denies too.
		{"/usr/lib/git-core/git-reset --hard HEAD~1", 2, "permissions.json deny: Terminal(git reset --hard)"},
		{"git-reset --hard", 2, "permissions.json deny: Terminal(git reset --hard)"},
		{"curl -fsSL https://example.com/x.sh", 2, "permissions.json deny: Terminal(curl)"},
		{"pnpm test && /usr/bin/curl x", 2, "permissions.json deny: Terminal(curl)"}, // deny by basename
		{"pnpm test; git reset --hard HEAD~1", 2, "permissions.json deny: Terminal(git reset --hard)"},
		{"ls $(curl x)", 2, "permissions.json deny: Terminal(curl)"}, // a nested command is a segment
		{"rm -rf /", 2, "built-in deny: Terminal(rm -rf /)"},
	} {
		r := check(t, root, tc.want, "--root", root, "--json", "--", tc.command)
		if d := decision(t, r); d.Reason != tc.reason {
			t.Errorf("%q: reason %q, want %q", tc.command, d.Reason, tc.reason)
		}
	}
}

func TestCheckHumanOutput(t *testing.T) {
	t.Parallel()
	root := project(t, demoFile)
	command := "pnpm test && cat README.md | sh"
	r := check(t, root, 1, "--root", root, "--", command)
	want := `require_approval: compound: the segment "sh" has no rule (opaque: a shell reading its script from standard input)
  1. allow   pnpm test  — permissions.json allow: Terminal(pnpm test)
  2. allow   cat README.md  — permissions.json allow: Terminal(cat)
  3. opaque  sh  — opaque: a shell reading its script from standard input
decided with: ` + filepath.Join(root, "permissions.json") + ` (as on disk, sha256 ` + policy.ContentHash([]byte(demoFile)) + `)
`
	if r.stdout != want {
		t.Errorf("human output:\n%s\nwant:\n%s", r.stdout, want)
	}
	if r.stderr != "" {
		t.Errorf("stderr is not empty: %q", r.stderr)
	}

	// Whatever the command, the human output is the JSON decision: the
	// decision line, then one line per segment with its verdict and rule.
	for _, command := range []string{
		"pnpm test",
		"pnpm test && git status && curl x",
		"cat /etc/passwd",
		"if true; then ls; fi; (cd sub && make) > out.txt 2>&1",
		"bash -c 'ls && pnpm test' | cat",
	} {
		human := runBrabo(t, root, nil, "check", "--root", root, "--", command)
		asJSON := runBrabo(t, root, nil, "check", "--root", root, "--json", "--", command)
		if human.code != asJSON.code {
			t.Errorf("%q: exit %d with --json, %d without", command, asJSON.code, human.code)
		}
		d := decision(t, asJSON)
		lines := strings.Split(strings.TrimSuffix(human.stdout, "\n"), "\n")
		if len(lines) != 2+len(d.Segments) {
			t.Errorf("%q: %d lines, want the decision line, %d segments and the version line:\n%s", command, len(lines), len(d.Segments), human.stdout)
			continue
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "decided with: ") || !strings.HasSuffix(last, "sha256 "+policy.ContentHash([]byte(demoFile))+")") {
			t.Errorf("%q: the last line %q does not name the content decided with", command, last)
		}
		if head := string(d.Policy) + ": " + d.Reason; lines[0] != head {
			t.Errorf("%q: decision line %q, want %q", command, lines[0], head)
		}
		for i, s := range d.Segments {
			line := fmt.Sprintf("  %d. %-7s %s  — %s", i+1, s.Verdict, s.Text, s.Rule)
			if len(s.Notes) > 0 {
				line += " [" + strings.Join(s.Notes, "; ") + "]"
			}
			if lines[i+1] != line {
				t.Errorf("%q: segment line %q, want %q", command, lines[i+1], line)
			}
		}
	}
}

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	root := project(t, demoFile)
	r := check(t, root, 1, "--root", root, "--json", "--", `pnpm test --watch 2>/dev/null && env "git" status; cat "a&b<c>.txt" | curl-like x`)
	d := decision(t, r)
	if d.Policy != brabo.RequireApproval {
		t.Errorf("policy %q", d.Policy)
	}
	if d.Reason != `compound: the segment "env \"git\" status" has no rule` {
		t.Errorf("reason %q", d.Reason)
	}
	type seg struct {
		text    string
		tokens  string
		verdict brabo.Verdict
		rule    string
	}
	want := []seg{
		{"pnpm test --watch", "pnpm|test|--watch", brabo.VerdictAllow, "permissions.json allow: Terminal(pnpm test)"},
		{`env "git" status`, "env|git|status", brabo.VerdictNoRule, "no rule"},
		{"git status", "git|status", brabo.VerdictAllow, "permissions.json allow: Terminal(git status)"},
		{`cat "a&b<c>.txt"`, "cat|a&b<c>.txt", brabo.VerdictAllow, "permissions.json allow: Terminal(cat)"},
		{"curl-like x", "curl-like|x", brabo.VerdictNoRule, "no rule"},
	}
	if len(d.Segments) != len(want) {
		t.Fatalf("%d segments, want %d\n%s", len(d.Segments), len(want), r)
	}
	for i, w := range want {
		s := d.Segments[i]
		got := seg{s.Text, strings.Join(s.Tokens, "|"), s.Verdict, s.Rule}
		if got != w {
			t.Errorf("segment %d: %+v, want %+v", i+1, got, w)
		}
	}
	// The scope root is named by its mode and folder name, never its path.
	if d.ScopeRoot != (brabo.ScopeRoot{Mode: brabo.ModeLocal, ID: filepath.Base(root)}) {
		t.Errorf("scopeRoot %+v", d.ScopeRoot)
	}
	if strings.Contains(r.stdout, root) {
		t.Errorf("the JSON holds the absolute project path %s:\n%s", root, r.stdout)
	}
	// Shell operators read as written, not as \u003e and \u0026.
	if !strings.Contains(r.stdout, `"cat \"a&b<c>.txt\""`) {
		t.Errorf("the JSON escapes the command's operators:\n%s", r.stdout)
	}
}

func TestCheckStdin(t *testing.T) {
	t.Parallel()
	root := project(t, demoFile)
	stdin := func(input []byte, want int, args ...string) brabo.Decision {
		t.Helper()
		args = append([]string{"check", "--root", root, "--stdin", "--json"}, args...)
		r := runBrabo(t, root, input, args...)
		if r.code != want {
			t.Fatalf("--stdin %q %q: exit %d, want %d\n%s", input, args, r.code, want, r)
		}
		return decision(t, r)
	}

	// The bytes are the command as is: no shell of ours in between.
	if d := stdin([]byte("pnpm test --filter 'a b'\n"), 0); d.Segments[0].Tokens[3] != "a b" {
		t.Errorf("tokens %q", d.Segments[0].Tokens)
	}
	if d := stdin([]byte("ls\nrm -rf /"), 2); d.Reason != "built-in deny: Terminal(rm -rf /)" {
		t.Errorf("a newline separates segments: reason %q", d.Reason)
	}

	// Input brabo will not analyse requires approval — never exit 0, even
	// where everything else would auto-approve.
	for _, tc := range []struct {
		name  string
		input []byte
		why   string
	}{
		{"NUL byte", []byte("ls\x00 && curl x"), "NUL"},
		{"NUL byte after an allowed command", []byte("pnpm test\x00"), "NUL"},
		{"invalid UTF-8", []byte("ls \xff\xfe"), "UTF-8"},
		{"invalid UTF-8 in a quoted word", []byte("pnpm test '\xc3\x28'"), "UTF-8"},
		{"over 64 KiB", append([]byte("ls "), bytes.Repeat([]byte("a"), 64<<10)...), "limit"},
		{"empty", []byte{}, "empty"},
		{"does not parse", []byte("ls 'unterminated"), "cannot be analysed"},
	} {
		for _, extra := range [][]string{nil, {"--auto-mode"}, {"--container-running"}, {"--autonomy", "auto_approve"}} {
			d := stdin(tc.input, 1, extra...)
			if d.Policy != brabo.RequireApproval || !strings.Contains(d.Reason, tc.why) {
				t.Errorf("%s %q: %s: %s, want require_approval naming %q", tc.name, extra, d.Policy, d.Reason, tc.why)
			}
			if len(d.Segments) != 0 {
				t.Errorf("%s: segments of a command that was not analysed: %+v", tc.name, d.Segments)
			}
		}
	}

	// The command comes from one place only.
	r := runBrabo(t, root, []byte("ls"), "check", "--root", root, "--stdin", "--", "ls")
	if r.code != 3 || !strings.Contains(r.stderr, "not both") {
		t.Errorf("--stdin with a command after --: want exit 3 naming the conflict\n%s", r)
	}
}

func TestCheckBadUsage(t *testing.T) {
	t.Parallel()
	root := project(t, demoFile)
	for _, tc := range []struct {
		args   []string
		stderr string // a part of what standard error must say
	}{
		{[]string{"check", "--bogus", "--", "ls"}, "flag provided but not defined: --bogus"},
		{[]string{"check", "--type", "git_yolo", "--", "ls"}, `--type: unknown action type "git_yolo"`},
		{[]string{"check", "--type", "GitPush"}, `--type: unknown action type "GitPush"`}, // the type, not the label
		{[]string{"check", "--role", "admin", "--", "ls"}, `--role: unknown role "admin"`},
		{[]string{"check", "--autonomy", "yes", "--", "ls"}, `--autonomy: unknown policy "yes"`},
		{[]string{"check"}, "no command"},
		{[]string{"check", "--root", "."}, "no command"},
		{[]string{"check", "--permissions", "does-not-exist.json", "--", "ls"}, "--permissions: open does-not-exist.json: no such file or directory"},
		{[]string{"check", "--root", "no-such-folder", "--", "ls"}, "--root: stat"},
		{[]string{"check", "--root", "permissions.json", "--", "ls"}, "is not a directory"},
		{[]string{"check", "--auto-mode=maybe", "--", "ls"}, "invalid boolean value"},
		// Help among other arguments is not a decision: it must never read
		// as exit 0 (help alone does, TestCLIHelp).
		{[]string{"check", "--json", "-h"}, "ask for help alone"},
		{[]string{"check", "--help", "--", "ls"}, "ask for help alone"},
		// Flags after a command given without -- would be part of it.
		{[]string{"check", "ls", "--json"}, `["--json"] after the command is not read as a flag`},
		{[]string{"check", "ls", "--root", ".", "-h"}, "brabo check --root . -h -- 'ls'"},
	} {
		r := runBrabo(t, root, nil, tc.args...)
		if r.code != 3 {
			t.Errorf("brabo %q: exit %d, want 3\n%s", tc.args, r.code, r)
			continue
		}
		if !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("brabo %q: stderr does not say %q\n%s", tc.args, tc.stderr, r)
		}
		if r.stdout != "" {
			t.Errorf("brabo %q: a usage error printed on standard output\n%s", tc.args, r)
		}
	}
}

func TestCheckInvalidPermissions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, content string
		stderr        []string // parts of the message after the file name
	}{
		{"not JSON", "{\n  \"allow\": [\"Terminal(ls)\",]\n}", []string{"not valid JSON at line 2, column"}},
		{"truncated", `{"allow": [`, []string{"not valid JSON"}},
		{"not an object", `["Terminal(ls)"]`, []string{"must be a JSON object"}},
		{"unknown label", `{"allow": ["Terminal(ls)", "Shell(ls)"]}`, []string{`allow[1] "Shell(ls)"`, "unknown label Shell"}},
		{"not a pattern", `{"deny": ["rm -rf"]}`, []string{`deny[0] "rm -rf"`, "Label(content)"}},
		{"empty Terminal", `{"ask": ["Terminal()"]}`, []string{`ask[0] "Terminal()"`, "needs a command"}},
		{"a list of operators", `{"allow": ["Terminal(ls && rm x)"]}`, []string{`allow[0]`, "one simple command"}},
		{"not a string", `{"allow": ["Terminal(ls)", 42]}`, []string{`allow[1] "42"`, "must be a string"}},
		{"not a list", `{"deny": "Terminal(curl)"}`, []string{"deny: must be a list"}},
		{"two bad entries", `{"allow": ["Nope()"], "deny": ["Terminal(ls"]}`, []string{`allow[0] "Nope()"`, `deny[0] "Terminal(ls"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := project(t, "-")
			file := filepath.Join(t.TempDir(), "perms.json")
			writeFile(t, file, tc.content)
			// Everything that could approve is on: a bad file still never
			// approves, and the exit code says the file must be fixed.
			r := check(t, root, 3, "--root", root, "--permissions", file, "--json",
				"--auto-mode", "--container-running", "--", "ls")
			want := append([]string{"brabo check: " + file + ": "}, tc.stderr...)
			for _, w := range want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q\n%s", w, r)
				}
			}
			d := decision(t, r)
			if d.Policy != brabo.RequireApproval || !strings.HasPrefix(d.Reason, "permissions.json invalid: ") {
				t.Errorf("decision with an invalid file: %s: %s", d.Policy, d.Reason)
			}
			if strings.Contains(d.Reason, file) {
				t.Errorf("the reason holds the file's absolute path: %s", d.Reason)
			}
		})
	}

	t.Run("at the root", func(t *testing.T) {
		t.Parallel()
		root := project(t, `{"allow": ["Terminal(ls)"], "deny": ["Terminl(curl)"]}`)
		r := check(t, root, 3, "--", "ls")
		want := "brabo check: " + filepath.Join(root, "permissions.json") + `: deny[0] "Terminl(curl)": unknown label Terminl`
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q\n%s", want, r)
		}
		if !strings.HasPrefix(r.stdout, "require_approval: permissions.json invalid: ") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
	})

	t.Run("built-in denies still hold", func(t *testing.T) {
		t.Parallel()
		root := project(t, `{"allow": ["Terminal(rm)"], "deny": [`)
		r := check(t, root, 3, "--json", "--", "rm -rf /")
		if d := decision(t, r); d.Policy != brabo.Deny {
			t.Errorf("rm -rf / with an invalid file: %s: %s", d.Policy, d.Reason)
		}
	})
}

func TestCheckMissingPermissionsIsEmpty(t *testing.T) {
	t.Parallel()
	missing := project(t, "-")
	for _, content := range []string{"", "  \n", "{}", `{"allow": [], "deny": null}`} {
		empty := project(t, content)
		for _, tc := range []struct {
			args []string
			want int
		}{
			{[]string{"--", "ls"}, 1},
			{[]string{"--", "rm -rf /"}, 2},
			{[]string{"--", "rm -fr /"}, 2},
			{[]string{"--container-running", "--", "make"}, 0},
			{[]string{"--container-running", "--", "sudo make install"}, 1}, // a developer is asked too (a maintainer approves)
			{[]string{"--role", "maintainer", "--container-running", "--", "sudo make install"}, 1},
		} {
			a := check(t, missing, tc.want, append([]string{"--json"}, tc.args...)...)
			b := check(t, empty, tc.want, append([]string{"--json"}, tc.args...)...)
			if da, db := decision(t, a), decision(t, b); da.Reason != db.Reason {
				t.Errorf("%q: missing file says %q, file %q says %q", tc.args, da.Reason, content, db.Reason)
			}
		}
	}
}

func TestCheckDefaultRootIsTheCurrentDirectory(t *testing.T) {
	t.Parallel()
	root := project(t, `{"allow": ["Terminal(cat)"]}`)
	other := project(t, `{"deny": ["Terminal(cat)"]}`)
	inside := filepath.Join(root, "src", "a.go")
	outside := filepath.Join(other, "a.go")

	// The file read is the current directory's, and so is the scope.
	check(t, root, 0, "--", "cat "+inside)
	r := check(t, root, 1, "--", "cat "+outside)
	if !strings.HasPrefix(r.stdout, "require_approval: scope: outside the project folder: "+outside+"\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	check(t, root, 1, "--", "cat ../x")
	check(t, other, 2, "--", "cat "+outside)
	d := decision(t, check(t, root, 0, "--json", "--", "cat README.md"))
	if d.ScopeRoot.ID != filepath.Base(root) {
		t.Errorf("scopeRoot %+v, want the current directory's name", d.ScopeRoot)
	}

	// --root moves both, and a relative --root is relative to where brabo runs.
	check(t, root, 2, "--root", other, "--", "cat "+outside)
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	check(t, filepath.Join(root, "sub"), 0, "--root", "..", "--", "cat "+inside)
	check(t, filepath.Join(root, "sub"), 1, "--", "cat "+inside) // sub has no file, and inside is outside sub
	// --permissions replaces the root's file but not the scope.
	check(t, root, 2, "--permissions", filepath.Join(other, "permissions.json"), "--", "cat "+inside)
}

func TestCheckCwd(t *testing.T) {
	t.Parallel()
	root := project(t, `{"allow": ["Terminal(cat)", "Terminal(ls)"]}`)
	sub := filepath.Join(root, "pkg", "a")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	check(t, root, 1, "--", "cat ../x")                   // from the root, .. leaves it
	check(t, root, 0, "--cwd", sub, "--", "cat ../x")     // from pkg/a it does not
	check(t, root, 0, "--cwd", "pkg/a", "--", "cat ../x") // relative to where brabo runs
	check(t, root, 1, "--cwd", sub, "--", "cat ../../../x")
	r := check(t, root, 1, "--cwd", os.TempDir(), "--", "ls")
	if !strings.Contains(r.stdout, "scope: runs in "+filepath.Clean(os.TempDir())) {
		t.Errorf("a cwd outside the project folder:\n%s", r.stdout)
	}
	// cd moves the directory later segments are resolved against.
	check(t, root, 0, "--", "cd pkg/a && cat ../x")
	check(t, root, 1, "--", "cd pkg && cat ../../x")
}

func TestCheckTypedActions(t *testing.T) {
	t.Parallel()
	root := project(t, `{"allow": ["GitMerge()", "ContainerRemove()", "Spend()"], "ask": ["GitPush()"], "deny": ["GitRepoCreate()"]}`)
	none := project(t, "-")
	for _, tc := range []struct {
		dir    string
		args   []string
		want   int
		reason string
	}{
		// IAM comes first: the file cannot grant what the role does not have.
		{none, []string{"--role", "developer", "--type", "git_push"}, 2, "iam: git_push requires maintainer"},
		{none, []string{"--type", "git_push"}, 2, "iam: git_push requires maintainer"}, // developer is the default
		{root, []string{"--role", "developer", "--type", "git_merge", "--target-branch", "feature/x", "--auto-mode"}, 2, "iam: git_merge requires maintainer"},
		{root, []string{"--role", "maintainer", "--type", "spend"}, 2, "iam: spend requires owner"},
		{none, []string{"--role", "developer", "--type", "git_commit"}, 1, "default: no rule approves it"},
		// Auto mode approves a merge into a feature branch, never into a protected one.
		{none, []string{"--role", "maintainer", "--type", "git_merge", "--target-branch", "main", "--auto-mode"}, 1, "cap: git_merge into the protected branch main"},
		{none, []string{"--role", "maintainer", "--type", "git_merge", "--target-branch", "refs/heads/rc", "--auto-mode"}, 1, "cap: git_merge into the protected branch rc"},
		{none, []string{"--role", "maintainer", "--type", "git_merge", "--target-branch", "feature/login", "--auto-mode"}, 0, "agent_autonomy: auto_approve (wildcard)"},
		{none, []string{"--role", "maintainer", "--type", "git_merge", "--auto-mode"}, 1, "cap: git_merge names no target branch"},
		{root, []string{"--role", "owner", "--type", "git_merge", "--target-branch", "feature/login"}, 0, "permissions.json allow: GitMerge()"},
		{root, []string{"--role", "owner", "--type", "git_merge", "--target-branch", "dev"}, 1, "cap: git_merge into the protected branch dev"},
		// The file: ask asks even in auto mode, deny denies whatever the autonomy.
		{root, []string{"--role", "owner", "--type", "git_push", "--auto-mode"}, 1, "permissions.json ask: GitPush()"},
		{none, []string{"--role", "owner", "--type", "git_push", "--autonomy", "auto_approve"}, 1, "cap: git_push leaves the machine; a human approves every one"},
		{root, []string{"--role", "owner", "--type", "git_repo_create", "--autonomy", "auto_approve"}, 2, "permissions.json deny: GitRepoCreate()"},
		{root, []string{"--role", "owner", "--type", "container_remove"}, 1, "cap: container_remove (forces a full reprovision)"},
		{root, []string{"--role", "owner", "--type", "spend"}, 0, "permissions.json allow: Spend()"},
		// The container floor is for terminal actions only.
		{none, []string{"--role", "owner", "--type", "container_start", "--container-running"}, 1, "default: no rule approves it"},
	} {
		r := check(t, tc.dir, tc.want, append([]string{"--json"}, tc.args...)...)
		d := decision(t, r)
		if d.Reason != tc.reason {
			t.Errorf("%q: reason %q, want %q", tc.args, d.Reason, tc.reason)
		}
		if d.Segments != nil {
			t.Errorf("%q: a typed action has segments: %+v", tc.args, d.Segments)
		}
	}
}

func TestCheckAutonomyAndModes(t *testing.T) {
	t.Parallel()
	root := project(t, `{"allow": ["Terminal(cat)", "Terminal(make)"], "ask": ["Terminal(make deploy)"], "deny": ["Terminal(rm)"]}`)
	for _, tc := range []struct {
		args   []string
		want   int
		reason string
	}{
		{[]string{"--", "make"}, 0, "permissions.json allow: Terminal(make)"},
		{[]string{"--autonomy", "deny", "--", "make"}, 2, "agent_autonomy: deny (specific)"},
		// The file comes after agent_autonomy: its allow replaces the
		// agent's require_approval (DESIGN §4.1).
		{[]string{"--autonomy", "require_approval", "--", "make"}, 0, "permissions.json allow: Terminal(make)"},
		{[]string{"--autonomy", "require_approval", "--", "ls"}, 1, "agent_autonomy: require_approval (specific)"},
		{[]string{"--autonomy", "require_approval", "--container-running", "--", "ls"}, 1, "agent_autonomy: require_approval (specific)"},
		{[]string{"--autonomy", "require_approval", "--auto-mode", "--", "ls"}, 1, "agent_autonomy: require_approval (specific)"}, // specific beats wildcard
		{[]string{"--auto-mode", "--", "ls -la"}, 0, "agent_autonomy: auto_approve (wildcard)"},
		{[]string{"--auto-mode", "--", "make deploy"}, 1, "permissions.json ask: Terminal(make deploy)"},
		{[]string{"--auto-mode", "--", "rm -rf build"}, 2, "permissions.json deny: Terminal(rm)"},
		// Auto mode frees the path scope and the compound opinion; a
		// specific auto_approve does neither.
		{[]string{"--auto-mode", "--", "cat /etc/hostname"}, 0, "permissions.json allow: Terminal(cat)"},
		{[]string{"--autonomy", "auto_approve", "--", "cat /etc/hostname"}, 1, "scope: outside the project folder: /etc/hostname"},
		{[]string{"--", "cat /etc/hostname"}, 1, "scope: outside the project folder: /etc/hostname"},
		{[]string{"--auto-mode", "--", "make && ls"}, 0, "agent_autonomy: auto_approve (wildcard)"},
		{[]string{"--", "make && ls"}, 1, `compound: the segment "ls" has no rule`},
		// Caps: what leaves the machine, gains privilege or cannot be seen
		// (for a maintainer; a developer may not do the first two at all).
		{[]string{"--role", "maintainer", "--auto-mode", "--", "make && git push origin main"}, 1, "cap: external-effect git push (use the typed action git_push)"},
		{[]string{"--role", "maintainer", "--auto-mode", "--", "git -C sub push"}, 1, "cap: external-effect git push (use the typed action git_push)"},
		{[]string{"--role", "maintainer", "--container-running", "--", "sudo make install"}, 1, `compound: the segment "sudo make install" has no rule`},
		{[]string{"--role", "maintainer", "--auto-mode", "--", "sudo make install"}, 1, "cap: privileged command sudo (a human approves every privilege gain)"},
		{[]string{"--container-running", "--", "make"}, 0, "permissions.json allow: Terminal(make)"},
		{[]string{"--role", "maintainer", "--container-running", "--", "npm publish"}, 1, "cap: external-effect command npm publish (leaves the machine)"},
		// A developer's capped segment asks too (a maintainer approves it).
		{[]string{"--auto-mode", "--", "make && git push origin main"}, 1, "cap: external-effect git push (use the typed action git_push)"},
		{[]string{"--container-running", "--", "sudo make install"}, 1, `compound: the segment "sudo make install" has no rule`},
		{[]string{"--auto-mode", "--", "/usr/lib/git-core/git-push origin main"}, 1, "cap: external-effect git push (use the typed action git_push)"},
		{[]string{"--auto-mode", "--", "$CMD push"}, 1, `cap: opaque segment "$CMD push" (the program is an expansion, glob or brace expansion: $CMD)`},
	} {
		r := check(t, root, tc.want, append([]string{"--json"}, tc.args...)...)
		if d := decision(t, r); d.Reason != tc.reason {
			t.Errorf("%q: reason %q, want %q", tc.args, d.Reason, tc.reason)
		}
	}
}

func TestCheckHumanOutputIsOneLinePerSegment(t *testing.T) {
	t.Parallel()
	root := project(t, "-")
	// A command from an agent must not rewrite what the human reads: a
	// newline, a carriage return, an escape sequence or a bidi override in
	// a segment is shown escaped, on the segment's own line.
	input := []byte("echo \"one\ntwo\rthree\" && printf '\x1b[2Jgone' && echo \u202eevil")
	r := runBrabo(t, root, input, "check", "--stdin")
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	want := []string{
		"require_approval: default: no rule approves it",
		`  1. none    echo "one\ntwo\rthree"  — no rule`,
		`  2. none    printf '\x1b[2Jgone'  — no rule`,
		`  3. none    echo \u202eevil  — no rule`,
		"decided with: " + filepath.Join(root, "permissions.json") + " (missing: the empty file, sha256 " + policy.ContentHash(nil) + ")",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, strings.Join(want, "\n"))
	}
	// --json keeps the text exact.
	d := decision(t, runBrabo(t, root, input, "check", "--stdin", "--json"))
	if len(d.Segments) != 3 || d.Segments[1].Text != "printf '\x1b[2Jgone'" {
		t.Errorf("--json segments %+v", d.Segments)
	}
}

func TestCheckWarnings(t *testing.T) {
	t.Parallel()
	root := project(t, `{"allow": ["Terminal(ls)", "Spend(100)"]}`)
	r := check(t, root, 0, "--", "ls")
	want := "warning: " + filepath.Join(root, "permissions.json") + `: allow[1] "Spend(100)": content is only used for Terminal`
	if !strings.Contains(r.stdout, want) {
		t.Errorf("stdout does not warn %q\n%s", want, r)
	}
	d := decision(t, check(t, root, 0, "--json", "--", "ls"))
	if len(d.Warnings) != 1 {
		t.Errorf("warnings %q", d.Warnings)
	}
	// The entry that matches nothing grants nothing.
	check(t, root, 1, "--role", "owner", "--type", "spend")
}

// TestCheckCapsAskAMaintainer: a developer's terminal git push, sudo, git
// remote add and ask-listed pnpm publish are not denied (terminal needs
// only a developer): they ask, and the approver must be a maintainer
// (DESIGN §10).
func TestCheckCapsAskAMaintainer(t *testing.T) {
	t.Parallel()
	root := project(t, demoFile)
	for _, args := range [][]string{
		{"--auto-mode", "--", "git push origin main"},
		{"--auto-mode", "--", "sudo make install"},
		{"--auto-mode", "--", "git remote add origin https://example.com/x.git"},
		{"--", "pnpm publish"},
		{"--auto-mode", "--", "/usr/lib/git-core/git-push origin main"},
	} {
		r := check(t, root, 1, append([]string{"--json", "--root", root, "--role", "developer"}, args...)...)
		d := decision(t, r)
		if d.Policy != brabo.RequireApproval || d.RequiredRole != brabo.Maintainer {
			t.Errorf("%q: %s (%s) with requiredRole %q, want require_approval for a maintainer", args, d.Policy, d.Reason, d.RequiredRole)
		}
	}
}
