package main

import (
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

// TestHookWaitSurvivesARestart stops brabo gracefully while the real
// Claude Code's hook waits for a human, starts it again on the same
// address and data, and approves the action then: the stop takes under
// 5 s (the long-poll is answered "retry" at once), the hook reconnects,
// and the command runs once.
func TestHookWaitSurvivesARestart(t *testing.T) {
	claude := agenttest.CLI(t, "claude")
	ap := newAgentProject(t, `{}`)
	ap.install(t, "claude", 60*time.Second, nil)
	type ran struct {
		model *agenttest.Server
		out   string
	}
	done := make(chan ran, 1)
	go func() {
		model, out := claudeRun(t, ap, claude, bash("mkdir restart-dir"))
		done <- ran{model, out}
	}()
	waitFor(t, "the hook's action to be pending", func() string {
		if a := ap.action("mkdir restart-dir"); a != nil && a["status"] == "pending" {
			return "pending"
		}
		return ""
	})
	if len(ap.hookPIDs()) == 0 {
		t.Fatal("no hook waits")
	}
	start := time.Now()
	ap.srv.cmd.Process.Signal(syscall.SIGTERM)
	ap.srv.cmd.Wait()
	stop := time.Since(start)
	t.Logf("graceful stop with a waiting hook: %s", stop)
	if stop > 5*time.Second {
		t.Errorf("the graceful stop took %s with a hook waiting (want under 5 s)", stop)
	}
	if len(ap.hookPIDs()) == 0 {
		t.Fatal("the hook gave up when brabo stopped")
	}
	u, _ := url.Parse(ap.srv.url)
	ap.srv = startServeIn(t, "", nil, "--data", ap.data, "--addr", u.Host)
	id := ap.action("mkdir restart-dir")["id"].(string)
	if st, out, err := ap.srv.call("POST", "/v1/actions/"+id+"/approve", ap.admin, nil); err != nil || st != 200 {
		t.Fatalf("approving after the restart: %d %v %v", st, out, err)
	}
	var r ran
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Claude Code did not end after the approval")
	}
	if text, isErr := toolResult(r.model, 1); isErr || !ap.exists("restart-dir") {
		t.Fatalf("the approved command did not run: %q (error %v)\n%s", text, isErr, r.out)
	}
	n := 0
	for _, a := range ap.actions() {
		if p, _ := a["payload"].(map[string]any); p["command"] == "mkdir restart-dir" {
			n++
			if a["status"] != "executed" {
				t.Errorf("the action is %v, want executed", a["status"])
			}
		}
	}
	evs := ap.events(t, id)
	executed := 0
	for _, e := range evs {
		if strings.HasPrefix(e, "action.executed") {
			executed++
		}
	}
	if n != 1 || executed != 1 {
		t.Errorf("%d actions, %d executions (want one each): %v", n, executed, evs)
	}
}
