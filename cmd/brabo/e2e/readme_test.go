package e2e

// TestREADME runs the README's shell blocks the way a newcomer does, on
// this checkout: in order, in one bash session (so the variables a block
// sets are there for the next), with a home folder of its own, real
// binaries, a real brabo serve and real HTTP. A command that fails, a
// variable that was never set (set -u) or an HTTP answer that is not 2xx
// fails the test, naming the block's line in the README.
//
// What it changes, and nothing else: the address 127.0.0.1:8080 (and
// localhost:8080) becomes a free port of its own, and BRABO_ADDR is that
// address, so that it never takes another process's port; the home folder
// is a temporary one; BRABO_TOKEN is exported from what the first start of
// brabo serve prints, as the README tells a person to do.
//
// Tags, an HTML comment on the line before a block's fence:
//
//	<!-- readme-test: skip (why) -->          not run; at most maxSkipped of them
//	<!-- readme-test: background (why) -->    run in the background (it serves until
//	                                            Ctrl-C); the next blocks run once it
//	                                            prints "brabo serving on"
//	<!-- readme-test: illustration (why) -->  a console transcript that is not run
//	<!-- readme-test: file ~/PATH -->         the block's text is written to that file
//
// Blocks fenced ```sh, ```bash or ```shell run. A ```console block is a
// transcript, and it runs too: each "$ " line is a command, run in the same
// session, and the lines after it are what it must print, line for line,
// "…" standing for anything inside a line (ids, hashes, paths) and a line
// "…" alone for any number of lines. Plain ``` blocks are synopses.
//
// What a block says it prints, in comments "# → …" (continued on lines
// "#    …"), must be in what it printed, on one line, with "…" standing for
// anything: the README shows real answers.
//
// The README is the newcomer's path; docs/api.md (with docs/hooks.md after
// it) is run the same way, in a session of its own, and so is
// docs/check.md, whose transcripts are brabo check's examples.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// maxSkipped is how many README blocks may be tagged skip: a few that
// need what a test machine lacks (an agent's account), never a way out.
const maxSkipped = 3

// readmeBlock is one runnable block of the README.
type readmeBlock struct {
	line int    // of the opening fence, counted from 1
	tag  string // "", "skip", "background" or "illustration"
	why  string
	text string
	// expect are the outputs the block's "# →" comments show.
	expect []string
	kind   string        // "sh", "console" or "file"
	steps  []consoleStep // a console block's commands
	file   string        // a file block's path, ~/…
}

// expectations reads a block's "# → …" comments, each joined with its
// "#    …" continuation lines.
func expectations(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "# → "):
			out = append(out, strings.TrimPrefix(l, "# → "))
		case strings.HasPrefix(l, "#    ") && len(out) > 0:
			out[len(out)-1] += strings.TrimSpace(strings.TrimPrefix(l, "#"))
		}
	}
	return out
}

// expectRE is the pattern of an expected output: literal, "…" for anything
// on the line.
func expectRE(want string) *regexp.Regexp {
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, ".*?"))
}

var (
	readmeTag  = regexp.MustCompile(`^<!-- readme-test: (skip|background|illustration) \((.+)\) -->$`)
	readmeFile = regexp.MustCompile(`^<!-- readme-test: file (~/\S+) -->$`)
)

// consoleStep is one command of a console block and what it must print.
type consoleStep struct {
	cmd  string
	want []string
}

// consoleSteps reads a console transcript.
func consoleSteps(text string) []consoleStep {
	var out []consoleStep
	for _, l := range strings.Split(text, "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			out = append(out, consoleStep{cmd: c})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].want = append(out[len(out)-1].want, l)
		}
	}
	for i := range out {
		w := out[i].want
		for len(w) > 0 && strings.TrimSpace(w[len(w)-1]) == "" {
			w = w[:len(w)-1]
		}
		out[i].want = w
	}
	return out
}

// transcriptMatches reports whether printed is what a console step says,
// line for line ("…" inside a line is anything, a line "…" any lines).
func transcriptMatches(want []string, printed string) bool {
	got := strings.Split(strings.TrimRight(printed, "\n"), "\n")
	if printed == "" {
		got = nil
	}
	var match func(w, g []string) bool
	match = func(w, g []string) bool {
		if len(w) == 0 {
			return len(g) == 0
		}
		if strings.TrimSpace(w[0]) == "…" {
			for i := 0; i <= len(g); i++ {
				if match(w[1:], g[i:]) {
					return true
				}
			}
			return false
		}
		if len(g) == 0 {
			return false
		}
		re := regexp.MustCompile("^" + expectRE(strings.TrimRight(w[0], " ")).String() + "$")
		return re.MatchString(strings.TrimRight(g[0], " ")) && match(w[1:], g[1:])
	}
	return match(want, got)
}

// readmeBlocks reads the runnable blocks of a Markdown file and their tags.
// A malformed tag (no reason, an unknown kind) is an error, not ignored.
func readmeBlocks(path string) ([]readmeBlock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []readmeBlock
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "<!-- readme-test") && !readmeTag.MatchString(l) && !readmeFile.MatchString(l) {
			return nil, fmt.Errorf("%s:%d: a tag is <!-- readme-test: skip|background|illustration (why) --> or <!-- readme-test: file ~/PATH -->: %q", path, i+1, l)
		}
		if !strings.HasPrefix(l, "```") {
			continue
		}
		lang := strings.TrimSpace(strings.TrimPrefix(l, "```"))
		start := i
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: a block that never ends", path, start+1)
		}
		tagLine := ""
		if start > 0 {
			tagLine = lines[start-1]
		}
		b := readmeBlock{line: start + 1, text: strings.Join(body, "\n"), kind: lang}
		if m := readmeFile.FindStringSubmatch(tagLine); m != nil {
			if lang == "sh" || lang == "bash" || lang == "shell" || lang == "console" {
				return nil, fmt.Errorf("%s:%d: a file tag on a %q block, which is run", path, start, lang)
			}
			b.kind, b.file = "file", m[1]
			out = append(out, b)
			continue
		}
		m := readmeTag.FindStringSubmatch(tagLine)
		switch lang {
		case "sh", "bash", "shell":
			b.kind = "sh"
			if m != nil && m[1] == "illustration" {
				return nil, fmt.Errorf("%s:%d: an illustration tag on a %q block: skip it instead, saying why", path, start, lang)
			}
		case "console":
			if m != nil && m[1] == "background" {
				return nil, fmt.Errorf("%s:%d: a console block cannot run in the background", path, start)
			}
			b.steps = consoleSteps(b.text)
			if len(b.steps) == 0 && m == nil {
				return nil, fmt.Errorf("%s:%d: a console block with no \"$ \" command: tag it as an illustration", path, start+1)
			}
		default:
			if m != nil {
				return nil, fmt.Errorf("%s:%d: a readme-test tag on a %q block, which is never run", path, start, lang)
			}
			continue
		}
		b.expect = expectations(b.text)
		if m != nil {
			b.tag, b.why = m[1], m[2]
		}
		out = append(out, b)
	}
	return out, nil
}

func TestREADMEBlocksParse(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "x.md")
		writeFile(t, p, s)
		return p
	}
	blocks, err := readmeBlocks(write("text\n```sh\necho a\n```\n<!-- readme-test: skip (no account) -->\n```bash\necho b\n```\n```console\n$ echo c\nc\n```\n```\nbrabo serve [flags]\n```\n<!-- readme-test: file ~/x/p.json -->\n```json\n{}\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 4 || blocks[0].text != "echo a" || blocks[0].tag != "" || blocks[1].tag != "skip" || blocks[1].why != "no account" || blocks[1].line != 6 ||
		blocks[2].kind != "console" || len(blocks[2].steps) != 1 || blocks[2].steps[0].cmd != "echo c" || blocks[3].kind != "file" || blocks[3].file != "~/x/p.json" {
		t.Errorf("blocks: %+v", blocks)
	}
	for _, bad := range []string{
		"<!-- readme-test: skip -->\n```sh\necho\n```\n",             // no reason
		"<!-- readme-test: later (x) -->\n```sh\necho\n```\n",        // no such kind
		"<!-- readme-test: skip (x) -->\n```json\n{}\n```\n",         // a tag on a block never run
		"<!-- readme-test: file ~/a -->\n```sh\necho\n```\n",         // a file tag on a block that runs
		"<!-- readme-test: illustration (x) -->\n```sh\necho\n```\n", // an illustration that would run
		"```console\nno command\n```\n",                              // a transcript that runs nothing
		"```sh\necho\n",                                              // never ends
	} {
		if _, err := readmeBlocks(write(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, c := range []struct {
		want    []string
		printed string
		ok      bool
	}{
		{[]string{"a", "b"}, "a\nb\n", true},
		{[]string{"a"}, "a\nb\n", false},
		{[]string{"id act_…"}, "id act_12ab\n", true},
		{[]string{"x", "…", "z"}, "x\n1\n2\nz\n", true},
		{[]string{"x", "…"}, "x\n", true},
		{[]string{"deny: x"}, "auto_approve: x\n", false},
		{nil, "", true},
		{nil, "out\n", false},
	} {
		if got := transcriptMatches(c.want, c.printed); got != c.ok {
			t.Errorf("transcriptMatches(%q, %q) = %v", c.want, c.printed, got)
		}
	}
}

// readmePrelude is bash run before the blocks: strict mode, the failing
// block named, and curl failing on an answer that is not 2xx (a 307 from
// an empty $P in a path, a 400 for a bad root) while printing it as is.
const readmePrelude = `set -euo pipefail
__block=0
__rc=0
__trap() { trap 'echo "README test: the block at $__doc:$__block failed (status $?)" >&2' ERR; }
__trap
curl() {
	local body code
	body=$(mktemp)
	code=$(command curl -o "$body" -w '%{http_code}' "$@") || { rm -f "$body"; return 1; }
	cat "$body"
	rm -f "$body"
	case $code in
	2*) ;;
	*) echo "README test: HTTP $code from curl $*" >&2; return 1 ;;
	esac
}
__background() { # $1: the block's line; its text is on stdin
	local out="$__dir/background-$1"
	{ echo 'set -euo pipefail'; cat; } >"$out.sh"
	bash "$out.sh" >"$out.out" 2>"$out.err" &
	echo $! >>"$__dir/background.pids"
	local i
	for i in $(seq 1200); do
		grep -q 'brabo serving on' "$out.out" 2>/dev/null && break
		kill -0 $! 2>/dev/null || { echo "README test: the background block at $__doc:$1 ended:" >&2; cat "$out.err" >&2; return 1; }
		sleep 0.05
	done
	grep -q 'brabo serving on' "$out.out" || { echo "README test: the background block at $__doc:$1 never served" >&2; return 1; }
	# What a person does when the first start says "export BRABO_TOKEN=…".
	local token
	token=$(sed -n 's/.*(export BRABO_TOKEN=\(brb_[0-9a-f]*\)).*/\1/p' "$out.out" | head -1)
	if [ -n "$token" ]; then export BRABO_TOKEN=$token; fi
}
# __console runs one command of a transcript as a person types it: its
# exit status is not a failure, and $? is the one before it.
__console() { # the command is on stdin
	local cmd
	cmd=$(cat)
	trap - ERR
	set +e
	(exit $__rc)
	eval "$cmd" 2>&1
	__rc=$?
	set -e
	__trap
}
`

// readmeSession is documents run in order in one bash session, and what
// must hold of the session's home folder afterwards.
type readmeSession struct {
	docs  []string // relative to the repository
	after func(t *testing.T, home, report string)
}

var readmeSessions = []readmeSession{
	{docs: []string{"README.md"}, after: func(t *testing.T, home, report string) {
		// The approved touch ran through Claude Code's hook as the agent
		// would: the hook said allow; the denied one was refused.
		if b, err := os.ReadFile(filepath.Join(home, "shop", "todo.answer")); err != nil || !strings.Contains(string(b), "no TODO files") {
			t.Errorf("the denied call's answer does not carry the reason: %q %v\n%s", b, err, report)
		}
		if _, err := os.Stat(filepath.Join(home, "shop", "permissions.json")); err != nil {
			t.Errorf("brabo init wrote no permissions.json: %v", err)
		}
	}},
	{docs: []string{"docs/api.md", "docs/hooks.md"}, after: func(t *testing.T, home, report string) {
		// What the session claims happened, happened: the approved command
		// ran in the project folder, and the project is where it was made.
		if _, err := os.Stat(filepath.Join(home, "myproj", "hello.txt")); err != nil {
			t.Errorf("the approved touch hello.txt left no file in ~/myproj: %v\n%s", err, report)
		}
		if _, err := os.Stat(filepath.Join(home, ".local", "state", "brabo", "brabo.db")); err != nil {
			t.Errorf("the database is not in the default data folder ~/.local/state/brabo: %v", err)
		}
	}},
	// brabo check's examples: transcripts only, no server.
	{docs: []string{"docs/check.md"}},
}

func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README's commands build and serve brabo; the full run takes them")
	}
	for _, tool := range []string{"bash", "curl", "jq", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("BRABO_REQUIRE_README_TOOLS") != "" {
				t.Fatalf("the README's commands need %s: %v", tool, err)
			}
			t.Skipf("the README's commands need %s (.ci/run installs it; BRABO_REQUIRE_README_TOOLS fails this): %v", tool, err)
		}
	}
	if n := countLines(t, "../../../README.md"); n >= 400 {
		t.Errorf("README.md has %d lines: the newcomer's README stays under 400 (the rest belongs in docs/)", n)
	}
	for _, s := range readmeSessions {
		t.Run(strings.Join(s.docs, "+"), func(t *testing.T) { runReadmeSession(t, s) })
	}
}

func countLines(t *testing.T, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

func runReadmeSession(t *testing.T, s readmeSession) {
	repo, _ := filepath.Abs("../../..")
	type docBlocks struct {
		doc    string
		blocks []readmeBlock
	}
	var all []docBlocks
	skipped, run := 0, 0
	for _, doc := range s.docs {
		blocks, err := readmeBlocks(filepath.Join(repo, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.tag == "skip" || b.tag == "illustration" {
				skipped++
			} else {
				run++
			}
		}
		all = append(all, docBlocks{doc, blocks})
	}
	if skipped > maxSkipped {
		t.Fatalf("%d blocks of %s are tagged skip or illustration, more than %d: make them run", skipped, s.docs, maxSkipped)
	}
	if run < 4 {
		t.Fatalf("only %d blocks of %s run: the extraction is broken", run, s.docs)
	}

	tmp := t.TempDir()
	home, gopath := filepath.Join(tmp, "home"), filepath.Join(tmp, "gopath")
	for _, d := range []string{home, gopath} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	fix := strings.NewReplacer("127.0.0.1:8080", addr, "localhost:8080", addr)
	var script strings.Builder
	fmt.Fprintf(&script, "__dir=%s\n__doc=%s\n%s", shq(tmp), shq(s.docs[0]), readmePrelude)
	key := func(doc string, line, step int) string { return fmt.Sprintf("%s:%d.%d", doc, line, step) }
	for _, d := range all {
		fmt.Fprintf(&script, "\n__doc=%s\n", shq(d.doc))
		for _, b := range d.blocks {
			if b.tag == "skip" || b.tag == "illustration" {
				continue
			}
			text := fix.Replace(b.text)
			fmt.Fprintf(&script, "\n__block=%d\n", b.line)
			switch {
			case b.kind == "file":
				fmt.Fprintf(&script, "mkdir -p \"$(dirname %s)\"\ncat >%s <<'__README_BLOCK_END'\n%s\n__README_BLOCK_END\n",
					"$HOME/"+strings.TrimPrefix(b.file, "~/"), "\"$HOME/"+strings.TrimPrefix(b.file, "~/")+"\"", text)
			case b.kind == "console":
				for i, st := range b.steps {
					fmt.Fprintf(&script, "echo '@@README-BLOCK %s@@'\n__console <<'__README_BLOCK_END'\n%s\n__README_BLOCK_END\n", key(d.doc, b.line, i), fix.Replace(st.cmd))
				}
			case b.tag == "background":
				fmt.Fprintf(&script, "echo '@@README-BLOCK %s@@'\n__background %d <<'__README_BLOCK_END'\n%s\n__README_BLOCK_END\n", key(d.doc, b.line, 0), b.line, text)
			default:
				fmt.Fprintf(&script, "echo '@@README-BLOCK %s@@'\n%s\n", key(d.doc, b.line, 0), text)
			}
		}
	}
	script.WriteString("\necho '@@README-BLOCK end@@'\necho README-TEST-DONE\n")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = repo // "From a clone of this repository"
	cmd.Env = readmeEnv(t, home, gopath, addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// At the deadline the whole session ends, and a background command
	// still holding the output pipes does not keep the test waiting.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	stopBackground(t, tmp)
	report := fmt.Sprintf("--- stdout:\n%s--- stderr:\n%s%s", out.String(), errOut.String(), backgroundLogs(tmp))
	if runErr != nil || !strings.Contains(out.String(), "README-TEST-DONE") {
		t.Fatalf("the commands of %s failed: %v\n%s", s.docs, runErr, report)
	}
	// Each block printed what its "# →" comments and its transcript show.
	printed := map[string]string{}
	for _, part := range strings.Split(out.String(), "@@README-BLOCK ")[1:] {
		k, rest, _ := strings.Cut(part, "@@\n")
		printed[k] = rest
	}
	for _, d := range all {
		for _, b := range d.blocks {
			if b.tag != "" {
				continue
			}
			for _, want := range b.expect {
				if got := printed[key(d.doc, b.line, 0)]; !expectRE(want).MatchString(got) {
					t.Errorf("%s:%d says it prints\n    %s\nbut it printed\n%s", d.doc, b.line, want, got)
				}
			}
			for i, st := range b.steps {
				if got := printed[key(d.doc, b.line, i)]; !transcriptMatches(st.want, got) {
					t.Errorf("%s:%d: $ %s\nsays it prints\n%s\nbut it printed\n%s", d.doc, b.line, st.cmd, strings.Join(st.want, "\n"), got)
				}
			}
		}
	}
	// The server the session started logged no error while its commands ran.
	if logs := backgroundLogs(tmp); strings.Contains(logs, "level=ERROR") {
		t.Errorf("brabo serve logged an error while the commands of %s ran:\n%s", s.docs, logs)
	}
	if s.after != nil {
		s.after(t, home, report)
	}
	if t.Failed() || testing.Verbose() {
		t.Log(report)
	}
}

// readmeEnv is the session's environment: this process's, with a home
// folder of its own, the README's bin folder first on PATH, no BRABO_*
// or XDG_* setting of this machine, and the go command's caches kept (a
// new home would otherwise rebuild every package).
func readmeEnv(t *testing.T, home, gopath, addr string) []string {
	t.Helper()
	goenv := map[string]string{}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	for i, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN"} {
		if v := strings.Split(string(out), "\n"); i < len(v) {
			goenv[name] = v[i]
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "BRABO_"), strings.HasPrefix(name, "XDG_"), strings.HasPrefix(name, "GO"),
			name == "HOME", name == "PATH", name == "CODEX_HOME", name == "GEMINI_CLI_HOME", name == "PWD", name == "OLDPWD":
			continue
		}
		env = append(env, kv)
	}
	for name, v := range goenv {
		if name != "GOPATH" {
			env = append(env, name+"="+v)
		}
	}
	// A GOPATH of the session's own, so go install puts brabo where the
	// README's PATH line looks ($(go env GOPATH)/bin), never into this
	// machine's; the caches above are kept. A document that installs
	// nothing finds the test's build on PATH.
	return append(env, "HOME="+home, "GOPATH="+gopath, "BRABO_ADDR="+addr, "BRABO_URL=http://"+addr,
		"PATH="+filepath.Dir(braboBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// freeAddr returns a loopback address no one listens on at the moment.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// stopBackground ends what the background blocks started, as Ctrl-C would,
// and waits for them to exit.
func stopBackground(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "background.pids"))
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var pid int
		if _, err := fmt.Sscan(sc.Text(), &pid); err != nil || pid <= 0 {
			continue
		}
		// The block's bash and what it started (brabo serve) are its
		// children; SIGINT reaches brabo, which shuts down gracefully.
		for _, child := range children(pid) {
			_ = syscall.Kill(child, syscall.SIGINT)
		}
		deadline := time.Now().Add(30 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("a background block (pid %d) did not end after SIGINT", pid)
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// children returns the pids of pid's children (Linux's /proc).
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(data)) {
			var c int
			if _, err := fmt.Sscan(w, &c); err == nil && c > 0 {
				out = append(out, c)
			}
		}
	}
	return out
}

// backgroundLogs is what the background blocks printed.
func backgroundLogs(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "background-*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&b, "--- %s:\n%s", filepath.Base(f), data)
	}
	return b.String()
}

// Every document under docs/ is reachable from the README, and every link
// of the README to a document names one that exists: what moved out of the
// README is one click away.
func TestREADMELinksEveryDocument(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob("../../../docs/*.md")
	if len(docs) < 10 {
		t.Fatalf("only %d documents under docs/", len(docs))
	}
	for _, d := range docs {
		if name := "docs/" + filepath.Base(d); !strings.Contains(string(readme), "("+name+")") {
			t.Errorf("README.md links no %s", name)
		}
	}
	for _, m := range regexp.MustCompile(`\]\((docs/[^)#]+)`).FindAllStringSubmatch(string(readme), -1) {
		if _, err := os.Stat("../../../" + m[1]); err != nil {
			t.Errorf("README.md links %s, which does not exist", m[1])
		}
	}
}

// shq quotes s for a POSIX shell: one word, nothing expanded.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
