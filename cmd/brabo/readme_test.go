package main

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
//	<!-- readme-test: skip (why) -->        not run; at most maxSkipped of them
//	<!-- readme-test: background (why) -->  run in the background (it serves until
//	                                          Ctrl-C); the next blocks run once it
//	                                          prints "brabo serving on"
//
// Blocks fenced ```sh, ```bash or ```shell run; ```console blocks are
// transcripts and plain ``` blocks synopses, neither is run.
//
// What a block says it prints, in comments "# → …" (continued on lines
// "#    …"), must be in what it printed, on one line, with "…" standing for
// anything: the README shows real answers.

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
	tag  string // "", "skip" or "background"
	why  string
	text string
	// expect are the outputs the block's "# →" comments show.
	expect []string
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

var readmeTag = regexp.MustCompile(`^<!-- readme-test: (skip|background) \((.+)\) -->$`)

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
		if strings.HasPrefix(l, "<!-- readme-test") && !readmeTag.MatchString(l) {
			return nil, fmt.Errorf("%s:%d: a tag is <!-- readme-test: skip (why) --> or <!-- readme-test: background (why) -->: %q", path, i+1, l)
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
		m := readmeTag.FindStringSubmatch(tagLine)
		switch lang {
		case "sh", "bash", "shell":
		default:
			if m != nil {
				return nil, fmt.Errorf("%s:%d: a readme-test tag on a %q block, which is never run", path, start, lang)
			}
			continue
		}
		b := readmeBlock{line: start + 1, text: strings.Join(body, "\n")}
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
	blocks, err := readmeBlocks(write("text\n```sh\necho a\n```\n<!-- readme-test: skip (no account) -->\n```bash\necho b\n```\n```console\n$ echo c\n```\n```\nbrabo serve [flags]\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].text != "echo a" || blocks[0].tag != "" || blocks[1].tag != "skip" || blocks[1].why != "no account" || blocks[1].line != 6 {
		t.Errorf("blocks: %+v", blocks)
	}
	for _, bad := range []string{
		"<!-- readme-test: skip -->\n```sh\necho\n```\n",            // no reason
		"<!-- readme-test: later (x) -->\n```sh\necho\n```\n",       // no such kind
		"<!-- readme-test: skip (x) -->\n```console\n$ echo\n```\n", // a tag on a block never run
		"```sh\necho\n", // never ends
	} {
		if _, err := readmeBlocks(write(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// readmePrelude is bash run before the blocks: strict mode, the failing
// block named, and curl failing on an answer that is not 2xx (a 307 from
// an empty $P in a path, a 400 for a bad root) while printing it as is.
const readmePrelude = `set -euo pipefail
__block=0
trap 'echo "README test: the block at README.md:$__block failed (status $?)" >&2' ERR
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
		kill -0 $! 2>/dev/null || { echo "README test: the background block at README.md:$1 ended:" >&2; cat "$out.err" >&2; return 1; }
		sleep 0.05
	done
	grep -q 'brabo serving on' "$out.out" || { echo "README test: the background block at README.md:$1 never served" >&2; return 1; }
	# What a person does when the first start says "export BRABO_TOKEN=…".
	local token
	token=$(sed -n 's/.*(export BRABO_TOKEN=\(brb_[0-9a-f]*\)).*/\1/p' "$out.out" | head -1)
	if [ -n "$token" ]; then export BRABO_TOKEN=$token; fi
}
`

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
	readme, err := filepath.Abs("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := readmeBlocks(readme)
	if err != nil {
		t.Fatal(err)
	}
	skipped := 0
	for _, b := range blocks {
		if b.tag == "skip" {
			skipped++
		}
	}
	if skipped > maxSkipped {
		t.Fatalf("%d README blocks are tagged skip, more than %d: make them run", skipped, maxSkipped)
	}
	if len(blocks)-skipped < 8 {
		t.Fatalf("only %d README blocks run: the extraction is broken", len(blocks)-skipped)
	}

	tmp := t.TempDir()
	home, bin := filepath.Join(tmp, "home"), filepath.Join(tmp, "bin")
	for _, d := range []string{home, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	var script strings.Builder
	fmt.Fprintf(&script, "__dir=%s\n%s", shellQuote(tmp), readmePrelude)
	for _, b := range blocks {
		if b.tag == "skip" {
			continue
		}
		text := strings.NewReplacer("127.0.0.1:8080", addr, "localhost:8080", addr).Replace(b.text)
		fmt.Fprintf(&script, "\n__block=%d\necho '@@README-BLOCK %d@@'\n", b.line, b.line)
		if b.tag == "background" {
			fmt.Fprintf(&script, "__background %d <<'__README_BLOCK_END'\n%s\n__README_BLOCK_END\n", b.line, text)
			continue
		}
		script.WriteString(text + "\n")
	}
	script.WriteString("\necho README-TEST-DONE\n")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	repo, _ := filepath.Abs("../..")
	cmd.Dir = repo // "From a clone of this repository"
	cmd.Env = readmeEnv(t, home, bin, addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	stopBackground(t, tmp)
	report := fmt.Sprintf("--- stdout:\n%s--- stderr:\n%s%s", out.String(), errOut.String(), backgroundLogs(tmp))
	if runErr != nil || !strings.Contains(out.String(), "README-TEST-DONE") {
		t.Fatalf("the README's commands failed: %v\n%s", runErr, report)
	}
	// Each block printed what its "# →" comments show.
	printed := map[int]string{}
	for _, part := range strings.Split(out.String(), "@@README-BLOCK ")[1:] {
		var line int
		fmt.Sscan(part, &line)
		_, rest, _ := strings.Cut(part, "@@\n")
		printed[line] = rest
	}
	for _, b := range blocks {
		for _, want := range b.expect {
			if b.tag == "" && !expectRE(want).MatchString(printed[b.line]) {
				t.Errorf("README.md:%d says it prints\n    %s\nbut it printed\n%s", b.line, want, printed[b.line])
			}
		}
	}
	// The server the README started logged no error while its commands ran.
	if logs := backgroundLogs(tmp); strings.Contains(logs, "level=ERROR") {
		t.Errorf("brabo serve logged an error while the README's commands ran:\n%s", logs)
	}
	// What the session claims happened, happened: the approved command ran
	// in the project folder, and the project is where the README made it.
	if _, err := os.Stat(filepath.Join(home, "myproj", "hello.txt")); err != nil {
		t.Errorf("the approved touch hello.txt left no file in ~/myproj: %v\n%s", err, report)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "state", "brabo", "brabo.db")); err != nil {
		t.Errorf("the database is not in the default data folder ~/.local/state/brabo: %v", err)
	}
	if t.Failed() || testing.Verbose() {
		t.Log(report)
	}
}

// readmeEnv is the session's environment: this process's, with a home
// folder of its own, the README's bin folder first on PATH, no BRABO_*
// or XDG_* setting of this machine, and the go command's caches kept (a
// new home would otherwise rebuild every package).
func readmeEnv(t *testing.T, home, bin, addr string) []string {
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
		env = append(env, name+"="+v)
	}
	return append(env, "HOME="+home, "GOBIN="+bin, "BRABO_ADDR="+addr,
		"PATH="+bin+string(os.PathListSeparator)+filepath.Dir(braboBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
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
