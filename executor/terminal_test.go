package executor_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
)

func terminal(root, cwd, command string) brabo.ExecRequest {
	return request(root, brabo.Terminal, brabo.Payload{Command: command, Cwd: cwd})
}

func TestTerminalExitCodeAndCombinedOutput(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	res := mustRun(t, e, terminal(root, "", "echo to-stdout; echo to-stderr >&2; exit 3"))
	if res.ExitCode != 3 {
		t.Errorf("ExitCode = %d, want 3", res.ExitCode)
	}
	if res.Error != "" || res.TimedOut || res.Truncated {
		t.Errorf("a nonzero exit is not a failure of the executor: %+v", res)
	}
	if res.Output != "to-stdout\nto-stderr\n" {
		t.Errorf("Output = %q", res.Output)
	}
	if res.Detail["executedAs"] != ada.ID {
		t.Errorf("executedAs = %q", res.Detail["executedAs"])
	}

	res = mustSucceed(t, e, terminal(root, "", "true"))
	if res.ExitCode != 0 || res.Output != "" {
		t.Errorf("true: %+v", res)
	}
}

func TestTerminalRunsInCwd(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	if err := os.MkdirAll(filepath.Join(root, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A symlink that stays inside the root is fine; the command runs in
	// the directory it resolves to.
	if err := os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "inlink")); err != nil {
		t.Fatal(err)
	}
	for cwd, want := range map[string]string{
		"":                         root,
		".":                        root,
		"sub/deeper":               filepath.Join(root, "sub", "deeper"),
		"sub/deeper/..":            filepath.Join(root, "sub"),
		"inlink":                   filepath.Join(root, "sub"),
		filepath.Join(root, "sub"): filepath.Join(root, "sub"),
	} {
		res := mustSucceed(t, e, terminal(root, cwd, "pwd -P"))
		if got := strings.TrimSpace(res.Output); got != want {
			t.Errorf("cwd %q: ran in %q, want %q", cwd, got, want)
		}
	}
}

func TestTerminalCwdOutsideRootIsRefused(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	base := realDir(t)
	root := filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside, root + "-sibling"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(outside, "ran")
	cmd := "touch " + marker
	for _, cwd := range []string{"..", "../outside", "sub/../../outside", outside, "/", root + "-sibling"} {
		se := mustRefuse[*executor.ScopeError](t, e, terminal(root, cwd, cmd))
		if se.Field != "cwd" || !strings.Contains(se.Error(), "outside the project folder") {
			t.Errorf("cwd %q: %v", cwd, se)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a refused command ran")
	}
}

func TestTerminalSymlinkedCwdPointingOutsideIsRefused(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	base := realDir(t)
	root := filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(root, "relescape")); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{"escape", "relescape", "escape/."} {
		se := mustRefuse[*executor.ScopeError](t, e, terminal(root, cwd, "touch ran"))
		if !strings.Contains(se.Reason, "symlink") {
			t.Errorf("cwd %q: reason %q does not name the symlink", cwd, se.Reason)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "ran")); err == nil {
		t.Fatal("a refused command ran")
	}
}

func TestTerminalRefusesBadRequests(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	writeFile(t, filepath.Join(root, "file"), "x")
	mustRefuse[*executor.PayloadError](t, e, terminal(root, "missing", "true"))
	mustRefuse[*executor.PayloadError](t, e, terminal(root, "file", "true"))
	mustRefuse[*executor.PayloadError](t, e, terminal(root, "", "  "))
	mustRefuse[*executor.PayloadError](t, e, terminal(root, "", "echo a\x00b"))
	mustRefuse[*executor.ScopeError](t, e, terminal("relative/root", "", "true"))
	mustRefuse[*executor.ScopeError](t, e, terminal("", "", "true"))
	mustRefuse[*executor.ScopeError](t, e, terminal("/", "", "true"))
}

func TestTerminalTimeoutKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{DefaultTimeout: 500 * time.Millisecond})
	root := realDir(t)
	pidFile := filepath.Join(root, "pid")
	start := time.Now()
	res := mustRun(t, e, terminal(root, "", "sleep 30 & echo $! > pid; echo started; sleep 30; wait"))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v; the timeout did not stop it", took)
	}
	if !res.TimedOut || !strings.Contains(res.Error, "timed out") {
		t.Errorf("TimedOut = %v, Error = %q", res.TimedOut, res.Error)
	}
	if res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("ExitCode = %d, want %d (killed)", res.ExitCode, 128+int(syscall.SIGKILL))
	}
	if !strings.Contains(res.Output, "started") {
		t.Errorf("output before the timeout was lost: %q", res.Output)
	}
	assertDead(t, readPID(t, pidFile))
}

func TestTerminalTimeoutIsCappedByMaxTimeout(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{MaxTimeout: 500 * time.Millisecond})
	root := realDir(t)
	start := time.Now()
	res := mustRun(t, e, request(root, brabo.Terminal, brabo.Payload{Command: "sleep 30", TimeoutSec: 3600}))
	if !res.TimedOut || time.Since(start) > 10*time.Second {
		t.Errorf("a payload timeout above MaxTimeout was not capped: %+v after %v", res, time.Since(start))
	}
	// A payload timeout below the cap is honoured.
	e = executor.New(executor.Options{DefaultTimeout: 100 * time.Millisecond})
	res = mustRun(t, e, request(root, brabo.Terminal, brabo.Payload{Command: "sleep 0.5; echo finished", TimeoutSec: 5}))
	if res.TimedOut || res.Output != "finished\n" {
		t.Errorf("TimeoutSec 5 not honoured: %+v", res)
	}
}

// TestTerminalTimeoutIsCappedByTheProject: the project's MaxTimeoutSec
// caps both the payload's timeoutSec and the default, on top of the
// executor's MaxTimeout; a project without one leaves them as they are.
func TestTerminalTimeoutIsCappedByTheProject(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	for _, sec := range []int{3600, 0} {
		req := request(root, brabo.Terminal, brabo.Payload{Command: "sleep 30", TimeoutSec: sec})
		req.Project = &brabo.Project{MaxTimeoutSec: 1}
		start := time.Now()
		res := mustRun(t, e, req)
		if !res.TimedOut || !strings.Contains(res.Error, "timed out after 1s") || time.Since(start) > 10*time.Second {
			t.Errorf("timeoutSec %d in a project capped at 1 s: %+v after %v", sec, res, time.Since(start))
		}
	}
	req := request(root, brabo.Terminal, brabo.Payload{Command: "sleep 1.2; echo finished", TimeoutSec: 5})
	req.Project = &brabo.Project{}
	if res := mustRun(t, e, req); res.TimedOut || res.Output != "finished\n" {
		t.Errorf("a project with no ceiling cut the command: %+v", res)
	}
}

func TestTerminalCancelKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res, err := e.Execute(ctx, terminal(root, "", "sleep 30 & echo $! > pid; sleep 30; wait"))
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second || res.TimedOut || !strings.Contains(res.Error, "interrupted") {
		t.Errorf("cancel: %+v after %v", res, time.Since(start))
	}
	assertDead(t, readPID(t, filepath.Join(root, "pid")))
}

// A command that returns while a child it started runs on: the child dies
// with it, since the timeout bounded the whole command.
func TestTerminalBackgroundChildDiesWithTheCommand(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	start := time.Now()
	res := mustSucceed(t, e, terminal(root, "", "sleep 30 & echo $! > pid; echo done"))
	if time.Since(start) > 10*time.Second || res.Output != "done\n" {
		t.Errorf("%+v after %v", res, time.Since(start))
	}
	assertDead(t, readPID(t, filepath.Join(root, "pid")))
}

// A process that leaves the group (a new session) and keeps the output
// pipe open cannot hang the action: reading stops after WaitDelay.
func TestTerminalEscapedProcessHoldingThePipeDoesNotHang(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("setsid is not installed, and CI is set: %v", err)
		}
		t.Skip("setsid is not installed; under CI this fails")
	}
	e := executor.New(executor.Options{WaitDelay: 200 * time.Millisecond})
	root := realDir(t)
	start := time.Now()
	res := mustSucceed(t, e, terminal(root, "", `setsid sh -c 'echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 30' & `+
		`while [ ! -s pid ]; do sleep 0.01; done; echo started`))
	pid := readPID(t, filepath.Join(root, "pid"))
	defer syscall.Kill(pid, syscall.SIGKILL) // it escaped on purpose; end it by its id
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v: the escaped process hung the action", took)
	}
	if !strings.Contains(res.Output, "started") {
		t.Errorf("Output = %q", res.Output)
	}
}

func TestTerminalOutputIsCappedWithAMarker(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{MaxOutputBytes: 100})
	root := realDir(t)
	res := mustSucceed(t, e, terminal(root, "", "head -c 1000 /dev/zero | tr '\\0' a"))
	want := strings.Repeat("a", 100) + "\n[brabo: output truncated, 900 more bytes]\n"
	if !res.Truncated || res.Output != want {
		t.Errorf("Truncated = %v, Output = %q", res.Truncated, res.Output)
	}

	// The cut never leaves half a character: "é" is two bytes.
	e = executor.New(executor.Options{MaxOutputBytes: 5})
	res = mustSucceed(t, e, terminal(root, "", "printf 'ééé'"))
	if want := "éé\n[brabo: output truncated, 2 more bytes]\n"; res.Output != want {
		t.Errorf("Output = %q, want %q", res.Output, want)
	}

	e = executor.New(executor.Options{MaxOutputBytes: 100})
	res = mustSucceed(t, e, terminal(root, "", "head -c 100 /dev/zero | tr '\\0' a"))
	if res.Truncated || len(res.Output) != 100 {
		t.Errorf("exactly the cap was truncated: %v, %d bytes", res.Truncated, len(res.Output))
	}
}

// TestTerminalEnvironment: with no Env of its own the executor hands a
// command its own environment filtered (procenv.Own), never whole: a
// variable a build does not need (a secret) stays behind, PATH and HOME
// come along.
func TestTerminalEnvironment(t *testing.T) {
	t.Setenv("BRABO_EXECUTED_AS", "someone-else") // the parent's value must not win
	t.Setenv("EXECUTOR_TEST_PARENT", "server-secret")
	e := executor.New(executor.Options{})
	root := realDir(t)
	req := terminal(root, "",
		`echo "$BRABO_EXECUTED_AS|$BRABO_ACTION_ID|$EXECUTOR_TEST_PARENT|${PATH:+path}|${HOME:+home}"; env | grep -c '^BRABO_EXECUTED_AS='`)
	res := mustSucceed(t, e, req)
	if want := "m-ada|" + req.Action.ID + "||path|home\n1\n"; res.Output != want {
		t.Errorf("Output = %q, want %q", res.Output, want)
	}
}

func TestTerminalStdinIsEmptyAndThereIsNoTerminal(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{DefaultTimeout: 10 * time.Second})
	root := realDir(t)
	res := mustSucceed(t, e, terminal(root, "", "cat; echo end"))
	if res.TimedOut || res.Output != "end\n" {
		t.Errorf("stdin was not empty: %+v", res)
	}
	res = mustRun(t, e, terminal(root, "", "exec 3</dev/tty && echo has-tty || echo no-tty"))
	if !strings.Contains(res.Output, "no-tty") {
		t.Errorf("the command has a controlling terminal: %q", res.Output)
	}
}

func TestTerminalMissingShellIsAnError(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{Shell: "/nonexistent/shell"})
	res, err := e.Execute(context.Background(), terminal(realDir(t), "", "true"))
	if err == nil || res != nil {
		t.Errorf("got %+v, %v; want an error", res, err)
	}
}

func TestTerminalEnvironmentFromOptions(t *testing.T) {
	t.Setenv("EXECUTOR_TEST_SECRET", "server-secret")
	e := executor.New(executor.Options{Env: []string{"PATH=" + os.Getenv("PATH"), "ONLY=this"}})
	res := mustSucceed(t, e, terminal(realDir(t), "", `echo "[$EXECUTOR_TEST_SECRET|$ONLY|$BRABO_EXECUTED_AS]"`))
	if res.Output != "[|this|m-ada]\n" {
		t.Errorf("Output = %q; the server's environment leaked or Env was ignored", res.Output)
	}
}
