package executor_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/procs"
)

// alive counts the live processes carrying the action's id.
func alive(t *testing.T, actionID string) int {
	t.Helper()
	list, err := procs.Find(procs.Target{ActionID: actionID})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// escaping is a command whose descendants leave its process group
// (setsid) and its parent (a double fork), then ends: they would outlive
// it. Each writes its pid to a file in dir.
func escaping(dir string) string {
	return `setsid sh -c 'echo $$ > ` + filepath.Join(dir, "setsid.pid") + `; exec sleep 300' & ` +
		`(sh -c 'echo $$ > ` + filepath.Join(dir, "fork.pid") + `; exec sleep 300' &); `
}

// TestNothingOfAnActionOutlivesIt: a command that started escaped
// descendants and returned leaves none of them alive.
func TestNothingOfAnActionOutlivesIt(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	e := executor.New(executor.Options{})
	req := terminal(root, "", escaping(root)+`while [ ! -s setsid.pid ] || [ ! -s fork.pid ]; do sleep 0.01; done; echo started`)
	res := mustSucceed(t, e, req)
	if res.Output != "started\n" {
		t.Fatalf("Output = %q", res.Output)
	}
	assertDead(t, readPID(t, filepath.Join(root, "setsid.pid")))
	assertDead(t, readPID(t, filepath.Join(root, "fork.pid")))
	if n := alive(t, req.Action.ID); n != 0 {
		t.Errorf("%d processes of the action outlived it", n)
	}
}

// TestStopEndsRunningActionsWithTheReason: Stop signals every process of
// a running command (TERM first: a trap sees it), its Result fails with
// the reason, the process group is reported through Started, and a later
// action is refused.
func TestStopEndsRunningActionsWithTheReason(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	e := executor.New(executor.Options{})
	req := terminal(root, "", escaping(root)+`trap 'echo got-term > term.txt; exit 143' TERM; sleep 300 & wait`)
	var mu sync.Mutex
	var groups []brabo.ProcessGroup
	req.Started = func(g brabo.ProcessGroup) { mu.Lock(); groups = append(groups, g); mu.Unlock() }
	type outcome struct {
		res *brabo.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Execute(context.Background(), req)
		done <- outcome{res, err}
	}()
	setsid, fork := readPID(t, filepath.Join(root, "setsid.pid")), readPID(t, filepath.Join(root, "fork.pid"))
	time.Sleep(100 * time.Millisecond) // the trap is set

	start := time.Now()
	if err := e.Stop(context.Background(), 2*time.Second, "brabo was stopped (SIGTERM)"); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res == nil {
		t.Fatalf("Execute: %+v, %v", o.res, o.err)
	}
	if !strings.Contains(o.res.Error, "interrupted: brabo was stopped (SIGTERM) while this action ran") {
		t.Errorf("Error = %q, want the reason", o.res.Error)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "term.txt")); string(b) != "got-term\n" {
		t.Errorf("the command was not sent SIGTERM first: %q", b)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("Stop took %v", time.Since(start))
	}
	assertDead(t, setsid)
	assertDead(t, fork)
	if n := alive(t, req.Action.ID); n != 0 {
		t.Errorf("%d processes of the action survived Stop", n)
	}
	mu.Lock()
	if len(groups) != 1 || groups[0].PGID <= 1 || groups[0].LeaderStart == 0 {
		t.Errorf("Started reported %+v; want the command's one group", groups)
	}
	mu.Unlock()
	if _, err := e.Execute(context.Background(), terminal(root, "", "true")); !errors.Is(err, executor.ErrStopping) {
		t.Errorf("Execute after Stop: %v, want ErrStopping", err)
	}
}

// TestStopKillsWhatIgnoresTerm: a command that ignores SIGTERM is killed
// after the grace period.
func TestStopKillsWhatIgnoresTerm(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	e := executor.New(executor.Options{})
	req := terminal(root, "", `trap '' TERM; echo $$ > pid; while :; do sleep 0.05; done`)
	done := make(chan *brabo.Result, 1)
	go func() { res, _ := e.Execute(context.Background(), req); done <- res }()
	pid := readPID(t, filepath.Join(root, "pid"))
	start := time.Now()
	e.Stop(context.Background(), 300*time.Millisecond, "test")
	res := <-done
	if took := time.Since(start); took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("Stop took %v; want the grace period, then a kill", took)
	}
	if res == nil || res.ExitCode != 137 || !strings.Contains(res.Error, "interrupted: test") {
		t.Errorf("Result = %+v", res)
	}
	assertDead(t, pid)
}
