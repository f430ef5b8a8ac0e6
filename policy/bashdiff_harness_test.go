package policy

// The harness of the differential test against real bash: it
// runs a command line under `bash --noprofile --norc -c` in a throwaway
// project folder, with strace -f recording every execve attempt and every
// file system call, and says what bash really ran and touched
// (bashdiff_trace_test.go reads the log). The oracle
// (bashdiff_oracle_test.go) compares that with what Decide approved.
//
// Why it is built the way it is:
//   - PATH holds only stubs (testdata/bashdiff/stub), so a program bash runs
//     does nothing but show up as an execve; bash, sh and dash are the real
//     shells (a script piped into `sh` must really run to be seen).
//   - The environment is `env -i` plus PATH and HOME (a private home
//     outside the project), as strace's own environment.
//   - When the tests run as root, strace -u nobody runs the line as nobody:
//     a line the policy wrongly approves, such as `echo hi; > /etc/passwd`,
//     must fail on the machine that runs the test, not truncate its files.
//   - Every line gets a fresh project folder and home, so what one line
//     writes cannot change what the next does.
//   - Stdin is /dev/null; a line gets bashTimeout, then its process group
//     is killed.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// bashStubNames are the programs on the stub PATH. A name missing here is a
// command bash does not find: it runs nothing and the harness sees nothing,
// so every program the generator writes is listed.
var bashStubNames = strings.Fields(`
	git ls cat echo grep find head tail wc pwd true false printf test curl wget
	python3 python node npm npx pnpm yarn make go cargo rm cp mv tee sed awk touch
	chmod chown ln mkdir rmdir xargs env timeout nice nohup stdbuf sudo doas kubectl
	helm terraform docker gh glab ssh scp rsync nc tar sort uniq cut tr diff patch
	pytest mix id whoami date sleep kill which dirname basename realpath readlink
	stat base64 dd install mktemp jq perl ruby zsh less vi pwnd projcode vitest`)

// bashShellLinks are names on the stub PATH that are the real shells.
var bashShellLinks = []string{"bash", "sh", "dash"}

// bashTimeout bounds one line; the process group is killed past it.
const bashTimeout = 2 * time.Second

// bashTraceSyscalls are the calls strace records: program starts, every
// call that names a path, forks (to know each process's parent and
// directory) and connect (bash's /dev/tcp).
const bashTraceSyscalls = "execve,execveat,open,openat,openat2,creat,rename,renameat,renameat2," +
	"unlink,unlinkat,rmdir,mkdir,mkdirat,link,linkat,symlink,symlinkat,chdir,fchdir,truncate," +
	"chmod,fchmodat,clone,clone3,fork,vfork,connect"

// bashEnv is what every run shares: the stub folder, the tools, and what
// each real shell reads when it starts.
type bashEnv struct {
	base    string // a temporary folder holding everything below
	stubDir string
	bash    string // the real bash, an absolute path
	strace  string
	nobody  bool // run the line as nobody (the tests run as root)
	seccomp bool // strace --seccomp-bpf works here (much faster)
	// shells maps a real shell binary to its start-up reads (what it opens
	// on its own before it reads its script), learnt by tracing `-c :`.
	shells map[string][]string
}

// bashRequired says whether a missing bash or strace fails the test
// rather than skipping it: under CI, or when asked for.
func bashRequired() bool {
	return os.Getenv("CI") != "" || os.Getenv("BRABO_REQUIRE_BASH_STRACE") == "1"
}

// newBashEnv builds the stubs and learns the shells' start-up reads; it
// skips the test (fails it under CI) when bash or strace is missing.
func newBashEnv(t testing.TB) *bashEnv {
	t.Helper()
	missing := func(what string, err error) {
		t.Helper()
		if bashRequired() {
			t.Fatalf("the differential test needs %s: %v", what, err)
		}
		t.Skipf("skipped: the differential test needs %s (%v); set CI or BRABO_REQUIRE_BASH_STRACE=1 to fail instead", what, err)
	}
	e := &bashEnv{shells: map[string][]string{}}
	var err error
	if e.bash, err = bashLookReal("bash"); err != nil {
		missing("bash", err)
	}
	if e.strace, err = exec.LookPath("strace"); err != nil {
		missing("strace", err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		missing("the go tool (to build the stub program)", err)
	}
	if e.base, err = os.MkdirTemp("", "brabo-bashdiff-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(e.base) })
	if e.base, err = filepath.EvalSymlinks(e.base); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.base, 0o755); err != nil {
		t.Fatal(err)
	}
	e.nobody = os.Geteuid() == 0
	if e.nobody {
		if _, err := user.Lookup("nobody"); err != nil {
			t.Fatalf("running as root, the differential test runs lines as nobody, which this machine lacks: %v", err)
		}
	}
	if err := e.buildStubs(goTool); err != nil {
		t.Fatalf("building the stub programs: %v", err)
	}
	e.seccomp = true
	if err := e.learnShells(); err != nil {
		e.seccomp = false
		if err2 := e.learnShells(); err2 != nil {
			missing("a strace that can trace bash here", fmt.Errorf("%v (with --seccomp-bpf: %v)", err2, err))
		}
	}
	return e
}

func bashLookReal(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}

// buildStubs compiles the stub once and hard-links it under every name.
func (e *bashEnv) buildStubs(goTool string) error {
	src, err := os.ReadFile(filepath.Join("testdata", "bashdiff", "stub", "main.go"))
	if err != nil {
		return err
	}
	dir := filepath.Join(e.base, "build")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module stub\n\ngo 1.21\n"), 0o644); err != nil {
		return err
	}
	bin := filepath.Join(dir, "stub")
	cmd := exec.Command(goTool, "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=", "GO111MODULE=on", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	e.stubDir = filepath.Join(e.base, "bin")
	if err := os.MkdirAll(e.stubDir, 0o755); err != nil {
		return err
	}
	for _, n := range bashStubNames {
		if err := os.Link(bin, filepath.Join(e.stubDir, n)); err != nil {
			return err
		}
	}
	for _, n := range bashShellLinks {
		if real, err := bashLookReal(n); err == nil {
			if err := os.Symlink(real, filepath.Join(e.stubDir, n)); err != nil {
				return err
			}
			e.shells[real] = nil
		}
	}
	return nil
}

// learnShells traces each real shell running `:` and keeps what it opened
// for reading: those are the reads a shell does on its own when it starts
// (the dynamic loader, libc's nsswitch and passwd lookups).
func (e *bashEnv) learnShells() error {
	w, err := e.newWorker("learn")
	if err != nil {
		return err
	}
	for real := range e.shells {
		argv := []string{real, "-c", ":"}
		if real == e.bash {
			argv = []string{real, "--noprofile", "--norc", "-c", ":"}
		}
		calls, _, err := w.trace(argv)
		if err != nil {
			return err
		}
		var reads []string
		started := false
		for _, c := range calls {
			switch {
			case !started:
				started = c.name == "execve" && c.ok()
			case c.name == "openat" || c.name == "open":
				pi, fi := 1, 2
				if c.name == "open" {
					pi, fi = 0, 1
				}
				if len(c.args) > fi && !straceOpenWrites(c.args[fi]) {
					if p, ok := straceString(c.args[pi]); ok {
						reads = append(reads, p)
					}
				}
			}
		}
		if !started {
			return fmt.Errorf("tracing %s -c : recorded no execve", real)
		}
		e.shells[real] = reads
	}
	return nil
}

// bashWorker is one lane of runs: its own project folder, home and log.
type bashWorker struct {
	env     *bashEnv
	root    string // the project folder, the scope root Decide is given
	home    string
	logFile string
	// The runners' worker (bashdiff_runners_test.go): PATH when not the
	// stubs alone, more variables, a longer bound, more project files.
	path     string
	extraEnv []string
	timeout  time.Duration
	fixture  map[string]string
}

func (e *bashEnv) newWorker(name string) (*bashWorker, error) {
	dir := filepath.Join(e.base, "w-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &bashWorker{env: e, root: filepath.Join(dir, "proj"), home: filepath.Join(dir, "home"),
		logFile: filepath.Join(dir, "strace.log")}
	return w, w.reset()
}

// bashFixture is the project every line starts from: a few files, sub
// folders, and run.sh, whose content is a push (what `source run.sh` or
// `bash < run.sh` would really run).
var bashFixture = map[string]string{
	"a.txt":           "hello\nworld\n",
	"b.md":            "# b\n",
	"run.sh":          "git push origin main\n",
	"src/main.go":     "package main\n",
	"src/app/util.go": "package app\n",
	"docs/readme.md":  "docs\n",
	"build/out.txt":   "out\n",
}

// reset gives the worker a fresh project folder and home.
func (w *bashWorker) reset() error {
	for _, d := range []string{w.root, w.home} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, files := range []map[string]string{bashFixture, w.fixture} {
		for name, content := range files {
			p := filepath.Join(w.root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if strings.HasPrefix(content, "#!") {
				mode = 0o755
			}
			if err := os.WriteFile(p, []byte(content), mode); err != nil {
				return err
			}
		}
	}
	if !w.env.nobody {
		return nil
	}
	for _, d := range []string{w.root, w.home} {
		err := filepath.Walk(d, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, 65534, 65534)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// trace runs argv under strace in the project folder with the line's
// environment (PATH = the stubs, HOME = the worker's home, nothing else)
// and returns the calls it recorded.
func (w *bashWorker) trace(argv []string) (calls []*straceCall, timedOut bool, err error) {
	e := w.env
	args := []string{"-f", "-qq", "-xx", "-y", "-v", "-s", "65536", "-e", "signal=none",
		"-e", "trace=" + bashTraceSyscalls, "-o", w.logFile}
	if e.seccomp {
		args = append([]string{"--seccomp-bpf"}, args...)
	}
	if e.nobody {
		args = append(args, "-u", "nobody")
	}
	args = append(append(args, "--"), argv...)
	cmd := exec.Command(e.strace, args...)
	cmd.Dir = w.root
	pathEnv, limit := e.stubDir, bashTimeout
	if w.path != "" {
		pathEnv = w.path
	}
	if w.timeout > 0 {
		limit = w.timeout
	}
	cmd.Env = append([]string{"PATH=" + pathEnv, "HOME=" + w.home}, w.extraEnv...)
	var out bashCapBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Start(); err != nil {
		return nil, false, err
	}
	var killed atomic.Bool
	timer := time.AfterFunc(limit, func() {
		killed.Store(true)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	waitErr := cmd.Wait()
	timer.Stop()
	timedOut = killed.Load()
	f, err := os.Open(w.logFile)
	if err != nil {
		return nil, timedOut, err
	}
	defer f.Close()
	calls = readStrace(f)
	if timedOut {
		// a process that left the group (setsid, set -m) outlives the
		// group kill: end each one the log names, by its id
		for _, c := range calls {
			syscall.Kill(c.pid, syscall.SIGKILL)
		}
	}
	if len(calls) == 0 {
		return nil, timedOut, fmt.Errorf("strace recorded nothing (%v): %s", waitErr, out.String())
	}
	return calls, timedOut, nil
}

// bashCapBuffer keeps the first 4 KiB written to it.
type bashCapBuffer struct{ bytes.Buffer }

func (b *bashCapBuffer) Write(p []byte) (int, error) {
	if room := 4096 - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// bashRun is what bash really did with one line.
type bashRun struct {
	line     string
	root     string // the project folder it ran in
	execs    []bashExec
	outside  []bashTouch // what a shell touched outside the project
	timedOut bool
}

// bashExec is one execve attempt, failed ones included.
type bashExec struct {
	cwd   string
	path  string   // the file given to execve
	argv  []string // as given
	env   []string // NAME=value the line added or changed
	errno string   // "" when it succeeded
	prog  string   // the program as the oracle names it: the basename for a stub, else path
	by    string   // which kind of process asked: "shell", "stub" (a wrapper), "program"
}

func (x bashExec) String() string {
	s := bashCommandText(x.env, x.prog, x.argv)
	if x.errno != "" {
		s += " (failed: " + x.errno + ")"
	}
	return s
}

// runUnderBash runs line in a fresh project folder and says what bash did.
func (w *bashWorker) runUnderBash(line string) (*bashRun, error) {
	if strings.IndexByte(line, 0) >= 0 {
		return nil, errors.New("a NUL byte cannot be passed to bash -c")
	}
	if err := w.reset(); err != nil {
		return nil, err
	}
	calls, timedOut, err := w.trace([]string{w.env.bash, "--noprofile", "--norc", "-c", line})
	if err != nil {
		return nil, err
	}
	run := &bashRun{line: line, root: w.root, timedOut: timedOut}
	w.interpret(calls, run)
	return run, nil
}
