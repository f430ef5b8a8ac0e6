package policy

// The differential test of the runners' options with the real go,
// make, npm and pytest: lines are decided under the three configurations
// of bashdiff_oracle_test.go, and every line one of them approves runs
// under real bash and strace with the real tools first on PATH (the stubs
// after them, so that pwnd, the program an option names, shows up as an
// exec). What the runner does on its own (go's compiler and linker, the
// test binary it builds, node and python running the tools, the project's
// own code, here the stub projcode and tools/wrap.sh) is declared; every
// other program it starts is judged alone, as in the main oracle, without
// the variables the runner set for it, and must be approved by the
// configuration that approved the line. The files a runner reads are not
// checked: they are its own installation.
//
// It needs bash, strace, go, make, npm (with node), pytest and python3;
// without them it skips, unless CI, BRABO_REQUIRE_BASH_STRACE=1 or
// BRABO_REQUIRE_RUNNERS=1 is set, when it fails.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// bashRunnerTools are the real programs the test puts first on PATH.
var bashRunnerTools = []string{"go", "make", "npm", "node", "pytest", "python3"}

// bashRunnerFixture is the project the runners run: one test of each.
var bashRunnerFixture = map[string]string{
	"go.mod":         "module proj\n\ngo 1.21\n",
	"proj_test.go":   "package proj\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
	"Makefile":       "test:\n\tprojcode test\n\nbuild:\n\tprojcode build\n",
	"package.json":   `{"name": "proj", "version": "1.0.0", "scripts": {"test": "projcode test", "build": "projcode build"}}` + "\n",
	"test_x.py":      "def test_x():\n    pass\n",
	"tools/wrap.sh":  "#!/bin/sh\nexec \"$@\"\n",
	"tools/empty.mk": "test:\n\tprojcode test\n",
}

// bashRunnerLines are the lines: plain ones each configuration with the
// seeded rules must approve, and tricky ones whose option runs pwnd.
var bashRunnerLines = []struct {
	text  string
	plain bool
	pwnd  bool // running it under bash starts pwnd
}{
	{"go test ./...", true, false},
	{"go test -run TestX ./...", true, false},
	{"go vet ./...", true, false},
	{"go test -exec ./tools/wrap.sh ./...", true, false},
	{"make test", true, false},
	{"make test -f tools/empty.mk", true, false},
	{"npm test", true, false},
	{"npm run build", true, false},
	{"pytest -q", true, false},
	{"pytest -q -p no:cacheprovider", true, false},
	{"go test -exec pwnd ./...", false, true},
	{"go test -exec=pwnd -run TestX ./...", false, true},
	{"go test -toolexec pwnd ./...", false, true},
	{"go vet -vettool=pwnd ./...", false, true},
	{"make test SHELL=pwnd", false, true},
	{"make test CC=pwnd --eval='test: ; $(CC)'", false, true},
	{"npm test --script-shell=pwnd", false, true},
	{"npm run build --script-shell pwnd", false, true},
	{"echo 'test: ; pwnd' > M && make test -f M", false, true},
	{"pytest -q -p evil", false, false},
}

func bashRunnersRequired() bool {
	return bashRequired() || os.Getenv("BRABO_REQUIRE_RUNNERS") == "1"
}

func TestBashDifferentialRunners(t *testing.T) {
	env := newBashEnv(t)
	real := map[string]string{}
	for _, n := range bashRunnerTools {
		p, err := exec.LookPath(n)
		if err != nil {
			if bashRunnersRequired() {
				t.Fatalf("the runners' differential test needs the real %s: %v", n, err)
			}
			t.Skipf("skipped: the runners' differential test needs the real %s (%v); set CI or BRABO_REQUIRE_RUNNERS=1 to fail instead", n, err)
		}
		if p, err = filepath.Abs(p); err != nil {
			t.Fatal(err)
		}
		real[n] = p
	}
	goroot, err := exec.Command(real["go"], "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	w, _ := bashRunnerWorker(t, env, real)
	declared := bashRunnerDeclared(real, strings.TrimSpace(string(goroot)), w.root)

	configs, err := bashConfigs()
	if err != nil {
		t.Fatal(err)
	}
	lines := bashRunnerLines
	if testing.Short() {
		lines = append(lines[:0:0], lines[0], lines[4], lines[6], lines[8], lines[10], lines[14], lines[16])
	}
	failures, pwndRan, plain, plainApproved := bashRunnerCheck(t, w, Decide, configs, declared, lines)
	for _, f := range failures {
		t.Error(f)
	}
	// The self-test: a Decide that approves the runner's option under the
	// seeded rules must fail the line, or the oracle sees nothing.
	planted := func(in Input) brabo.Decision {
		d := Decide(in)
		if strings.HasPrefix(in.Command, "go test -exec pwnd") {
			d.Policy, d.Reason = brabo.AutoApprove, "planted mistake"
		}
		return d
	}
	if got, _, _, _ := bashRunnerCheck(t, w, planted, configs[:1], declared, bashRunnerLines[10:11]); len(got) == 0 {
		t.Errorf("a planted approval of go test -exec pwnd passed the oracle: it does not see what the runner starts")
	}
	t.Logf("%d lines, %d plain (%d approved by the seeded rules), pwnd started %d times", len(lines), plain, plainApproved, pwndRan)
	// The harness must see what the options run, or the test proves nothing.
	wantPwnd := 0
	for _, l := range lines {
		if l.pwnd {
			wantPwnd++
		}
	}
	if pwndRan < wantPwnd/2 {
		t.Errorf("pwnd started %d times for %d lines whose option runs it: the harness does not see what the runners start", pwndRan, wantPwnd)
	}
}

// bashRunnerCheck decides every line with decide under configs, runs the
// approved ones, and returns what bash ran that an approving
// configuration did not cover, how often pwnd started, and how many plain
// lines the first configuration approved.
func bashRunnerCheck(t *testing.T, w *bashWorker, decide func(Input) brabo.Decision, configs []bashConfig,
	declared func(bashExec) bool, lines []struct {
		text  string
		plain bool
		pwnd  bool
	}) (failures []string, pwndRan, plain, plainApproved int) {
	t.Helper()
	o := &bashOracle{decide: Decide, configs: configs}
	for _, l := range lines {
		v := &bashVerdict{class: "runner", line: l.text}
		approvedAny := false
		for _, c := range configs {
			d := decide(c.input(l.text, w.root, w.root))
			v.decisions = append(v.decisions, d)
			approvedAny = approvedAny || v.approved(len(v.decisions)-1)
		}
		if l.plain {
			plain++
			if v.approved(0) {
				plainApproved++
			} else {
				failures = append(failures, fmt.Sprintf("%q: the seeded rules ask (%s); a plain runner line must be approved", l.text, v.decisions[0].Reason))
			}
		}
		if !approvedAny {
			continue
		}
		run, err := w.runUnderBash(l.text)
		if err != nil {
			t.Fatalf("running %q: %v", l.text, err)
		}
		if run.timedOut {
			failures = append(failures, fmt.Sprintf("%q: killed after %v", l.text, w.timeout))
		}
		var rest []bashExec
		for _, x := range run.execs {
			if x.prog == "pwnd" {
				pwndRan++
			}
			if !declared(x) {
				if x.by == "program" {
					// The variables a runner sets for what it starts
					// (GOROOT, npm_config_*, PATH with node_modules/.bin)
					// are the runner's, not the line's.
					x.env = nil
				}
				rest = append(rest, x)
			}
		}
		// What a runner reads of its own installation (GOROOT, npm's
		// modules, /usr/etc/npmrc) is not the line's: the class is about
		// the programs it starts.
		run.execs, run.outside = rest, nil
		for i, c := range configs {
			if !v.approved(i) {
				continue
			}
			if did := o.uncovered(c, run); len(did) > 0 {
				failures = append(failures, fmt.Sprintf("configuration %s approved %q (%s), and bash ran what it did not cover:\n\t%s",
					c.name, l.text, v.decisions[i].Reason, strings.Join(did, "\n\t")))
			}
		}
	}
	return failures, pwndRan, plain, plainApproved
}

// bashRunnerWorker is a worker whose PATH holds the real tools before the
// stubs, with a Go build cache warmed once so that a traced go test only
// links and runs.
func bashRunnerWorker(t *testing.T, env *bashEnv, real map[string]string) (*bashWorker, string) {
	t.Helper()
	w, err := env.newWorker("runners")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(env.base, "runners-bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, p := range real {
		if err := os.Symlink(p, filepath.Join(bin, n)); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(env.base, "gocache")
	gopath := filepath.Join(env.base, "gopath")
	for _, d := range []string{cache, gopath} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if env.nobody {
			if err := os.Chown(d, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.path = bin + ":" + env.stubDir
	w.extraEnv = []string{"GOCACHE=" + cache, "GOPATH=" + gopath, "GOFLAGS=-mod=mod -count=1", "GOTOOLCHAIN=local",
		"GOPROXY=off", "GOTELEMETRY=off", "CGO_ENABLED=0", "GO111MODULE=on", "PYTHONDONTWRITEBYTECODE=1",
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false"}
	w.timeout = 60 * time.Second
	w.fixture = bashRunnerFixture
	if err := w.reset(); err != nil {
		t.Fatal(err)
	}
	// Warm the cache as the user the lines run as.
	warm := exec.Command(real["go"], "test", "./...")
	if env.nobody {
		warm = exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", real["go"], "test", "./...")
	}
	warm.Dir = w.root
	warm.Env = append([]string{"PATH=" + w.path, "HOME=" + w.home}, w.extraEnv...)
	if out, err := warm.CombinedOutput(); err != nil {
		t.Fatalf("warming the Go build cache: %v: %s", err, out)
	}
	return w, cache
}

// bashRunnerDeclared says which execs are the runner at work: its own
// tools, the programs it builds, the interpreters of the tools, the
// project's own code (projcode, a program inside the project), and a
// shell running the project's script.
func bashRunnerDeclared(real map[string]string, goroot, root string) func(bashExec) bool {
	reals := map[string]bool{"/usr/bin/env": true}
	for _, p := range real {
		reals[p] = true
		if r, err := filepath.EvalSymlinks(p); err == nil {
			reals[r] = true
		}
	}
	return func(x bashExec) bool {
		p := bashResolve(x.cwd, x.path)
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			r = p
		}
		switch {
		case x.prog == "projcode", reals[p], reals[r], reals[filepath.Join(filepath.Dir(p), filepath.Base(r))]:
			return true
		case bashWithin(p, goroot), strings.HasPrefix(p, "/tmp/go-build"), bashWithin(p, root):
			return true
		case bashIsShellLink(filepath.Base(r)) && len(x.argv) >= 3 && x.argv[1] == "-c" && strings.HasPrefix(x.argv[len(x.argv)-1], "projcode"):
			return true
		}
		return false
	}
}
