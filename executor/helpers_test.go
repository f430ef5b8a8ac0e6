package executor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// TestMain makes git hermetic: no system or user config leaks into the test
// repositories, and temporary files (the merge clones) land in a directory
// the tests can inspect.
//
// The test binary is also the confinement launcher (as brabo is): the
// executor starts it with confine.Subcommand to run a confined command.
func TestMain(m *testing.M) {
	if confine.IsLauncher(os.Args) {
		confine.Main(os.Args)
	}
	if sandbox.IsHelper(os.Args) {
		sandbox.Main(os.Args)
	}
	if egress.IsForwarder(os.Args) {
		egress.Main(os.Args)
	}
	dir, err := os.MkdirTemp("", "executor-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	home := filepath.Join(dir, "home")
	tmp := filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	global := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(global, []byte("[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Setenv("TMPDIR", tmp)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		os.Unsetenv(v)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ada is the credential the tests execute with.
var ada = &brabo.Member{ID: "m-ada", Name: "Ada Lovelace"}

// actionSeq numbers the tests' actions: each has an id of its own, as in
// brabo, since the executor stops every process carrying an action's id
// when the action ends (parallel tests must not share one).
var actionSeq atomic.Int64

// request builds an ExecRequest for one action, with a fresh id.
func request(root string, t brabo.ActionType, p brabo.Payload) brabo.ExecRequest {
	return brabo.ExecRequest{
		Action:     &brabo.ProposedAction{ID: fmt.Sprintf("act-%d-%d", os.Getpid(), actionSeq.Add(1)), Type: t, Payload: p},
		Root:       root,
		Credential: ada,
	}
}

// mustRun executes req and fails the test on an error.
func mustRun(t *testing.T, e *executor.Executor, req brabo.ExecRequest) *brabo.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.Execute(ctx, req)
	if err != nil {
		t.Fatalf("Execute %s: %v", req.Action.Type, err)
	}
	if res == nil {
		t.Fatalf("Execute %s: nil result and nil error", req.Action.Type)
	}
	return res
}

// mustSucceed executes req and fails the test unless the Result is a
// success.
func mustSucceed(t *testing.T, e *executor.Executor, req brabo.ExecRequest) *brabo.Result {
	t.Helper()
	res := mustRun(t, e, req)
	if res.Error != "" || res.ExitCode != 0 {
		t.Fatalf("Execute %s: failed: exit %d, error %q\n%s", req.Action.Type, res.ExitCode, res.Error, res.Output)
	}
	if got := res.Detail["executedAs"]; got != ada.ID {
		t.Errorf("Detail[executedAs] = %q, want %q", got, ada.ID)
	}
	return res
}

// mustRefuse executes req and fails the test unless it is refused with an
// error of type E (and no Result).
func mustRefuse[E error](t *testing.T, e *executor.Executor, req brabo.ExecRequest) E {
	t.Helper()
	res, err := e.Execute(context.Background(), req)
	var target E
	if !errors.As(err, &target) {
		t.Fatalf("Execute %s: got result %+v, error %v; want a %T", req.Action.Type, res, err, target)
	}
	if res != nil {
		t.Errorf("Execute %s: refused with a result too: %+v", req.Action.Type, res)
	}
	if brabo.ErrorCode(err) != brabo.CodeInvalidAction {
		t.Errorf("ErrorCode(%v) = %q, want %q", err, brabo.ErrorCode(err), brabo.CodeInvalidAction)
	}
	return target
}

// realDir is t.TempDir with its symlinks resolved (TMPDIR may be one).
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// git runs git in dir and returns its trimmed output, failing the test on
// an error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitOK reports whether a git command succeeds.
func gitOK(dir string, args ...string) bool {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	return cmd.Run() == nil
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repo makes a working repository with one commit on main, configured with
// its own user, whose origin is a bare repository holding main.
func repo(t *testing.T) (work, bare string) {
	t.Helper()
	dir := realDir(t)
	bare = filepath.Join(dir, "remote.git")
	work = filepath.Join(dir, "work")
	git(t, dir, "init", "--quiet", "--bare", "-b", "main", bare)
	git(t, dir, "init", "--quiet", "-b", "main", work)
	git(t, work, "config", "user.name", "Repo User")
	git(t, work, "config", "user.email", "repo@example.com")
	writeFile(t, filepath.Join(work, "README"), "hello\n")
	git(t, work, "add", "-A")
	git(t, work, "commit", "--quiet", "-m", "initial")
	git(t, work, "remote", "add", "origin", bare)
	git(t, work, "push", "--quiet", "origin", "main")
	return work, bare
}

// commitOn commits a change of file to content on branch (created from
// main when missing) in work, returns its hash, and leaves main checked out.
func commitOn(t *testing.T, work, branch, file, content string) string {
	t.Helper()
	if gitOK(work, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) {
		git(t, work, "checkout", "--quiet", branch)
	} else {
		git(t, work, "checkout", "--quiet", "-b", branch, "main")
	}
	writeFile(t, filepath.Join(work, file), content)
	git(t, work, "add", "-A")
	git(t, work, "commit", "--quiet", "-m", "change "+file+" on "+branch)
	h := git(t, work, "rev-parse", "HEAD")
	git(t, work, "checkout", "--quiet", "main")
	return h
}

// readPID reads the pid a test command wrote to file, waiting for it.
func readPID(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if s := strings.TrimSpace(string(b)); err == nil && s != "" {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("pid file %s: %v", file, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid file %s never written", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertDead waits a little for pid to be gone (or a zombie: killed, not
// yet reaped by whoever inherited it) and fails the test if it still runs.
func assertDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); len(st) > 0 {
			// The state follows the parenthesised command name.
			if i := strings.LastIndexByte(string(st), ')'); i >= 0 && i+2 < len(st) {
				if s := st[i+2]; s == 'Z' || s == 'X' {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL) // do not leave it behind
			t.Fatalf("process %d still runs after the command ended", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
