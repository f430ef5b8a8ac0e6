package e2e

import (
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
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

// TestAbandonedWaitRefusesALaterDecision lets the real Claude Code's hook
// wait out its deadline with no decision: the action becomes abandoned
// (action.abandoned by the hook agent), leaves the queue, and a later
// approve or deny answers 409 abandoned, so no approval records a run
// that cannot happen.
func TestAbandonedWaitRefusesALaterDecision(t *testing.T) {
	claude := agenttest.CLI(t, "claude")
	ap := newAgentProject(t, `{}`)
	ap.install(t, "claude", 2*time.Second, nil)
	model, out := claudeRun(t, ap, claude, bash("mkdir given-up"))
	if text, isErr := toolResult(model, 1); !isErr || !strings.Contains(text, "no one decided within 2s") {
		t.Fatalf("the model got %q (error %v)\n%s", text, isErr, out)
	}
	a := ap.action("mkdir given-up")
	if a == nil || a["status"] != "abandoned" {
		t.Fatalf("the action the hook gave up: %v", a)
	}
	id := a["id"].(string)
	evs := ap.events(t, id)
	if len(evs) != 2 || evs[1] != "action.abandoned by "+a["actorId"].(string) {
		t.Errorf("events %v, want created then abandoned by the hook agent", evs)
	}
	queue := ap.srv.must(t, "GET", "/v1/queue", ap.admin, nil, 200)
	for _, q := range queue["actions"].([]any) {
		if q.(map[string]any)["id"] == id {
			t.Error("the abandoned action is still in the queue")
		}
	}
	for _, c := range []struct {
		verb string
		body any
	}{{"approve", nil}, {"deny", map[string]any{"reason": "late"}}} {
		st, res, err := ap.srv.call("POST", "/v1/actions/"+id+"/"+c.verb, ap.admin, c.body)
		if err != nil || st != 409 || res["code"] != "abandoned" || !strings.Contains(fmt.Sprint(res["message"]), "no longer waiting") {
			t.Errorf("%s of the abandoned action: %d %v %v", c.verb, st, res, err)
		}
	}
	if ap.exists("given-up") {
		t.Fatal("the abandoned command ran")
	}
	if a := ap.action("mkdir given-up"); a["status"] != "abandoned" {
		t.Errorf("after the late decisions the action is %v", a["status"])
	}
}

// TestStoppedHookAbandonsItsAction stops the real hook (SIGTERM, as an
// agent stopping its hook does) while it waits for a human: it tells
// brabo before it exits, and the action is abandoned.
func TestStoppedHookAbandonsItsAction(t *testing.T) {
	ap := newAgentProject(t, `{}`)
	ap.install(t, "claude", 60*time.Second, nil)
	cfg := filepath.Join(ap.xdg, "brabo", "hooks", "claude-"+ap.project+".json")
	hook := exec.Command(filepath.Join(filepath.Dir(braboBin), "brabo-hook"), "claude", "pre-tool-use", "--config", cfg)
	hook.Env = ap.env()
	hook.Stdin = strings.NewReader(`{"session_id":"s1","tool_use_id":"toolu_1","cwd":"` + ap.root + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"mkdir stopped-dir"}}`)
	var out strings.Builder
	hook.Stdout = &out
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the hook's action to be pending", func() string {
		if a := ap.action("mkdir stopped-dir"); a != nil && a["status"] == "pending" {
			return "pending"
		}
		return ""
	})
	hook.Process.Signal(syscall.SIGTERM)
	hook.Wait()
	if a := ap.action("mkdir stopped-dir"); a["status"] != "abandoned" || !strings.Contains(fmt.Sprint(a["reason"]), "the agent stopped the hook") {
		t.Fatalf("the stopped hook's action: %v", a)
	}
	if !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
		t.Errorf("the stopped hook answered %q", out.String())
	}
}

// TestKilledHookIsAbandonedAfterItsDeadline kills the real hook (it
// cannot tell brabo) while it waits: once the deadline it announced has
// passed, brabo's sweep makes the action abandoned (out of the queue, by
// system), and a human's approval answers 409 abandoned.
func TestKilledHookIsAbandonedAfterItsDeadline(t *testing.T) {
	ap := newAgentProject(t, `{}`)
	ap.install(t, "claude", 2*time.Second, nil)
	cfg := filepath.Join(ap.xdg, "brabo", "hooks", "claude-"+ap.project+".json")
	hook := exec.Command(filepath.Join(filepath.Dir(braboBin), "brabo-hook"), "claude", "pre-tool-use", "--config", cfg)
	hook.Env = ap.env()
	hook.Stdin = strings.NewReader(`{"session_id":"s1","tool_use_id":"toolu_2","cwd":"` + ap.root + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"mkdir killed-hook"}}`)
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	var a map[string]any
	waitFor(t, "the hook's action to be pending", func() string {
		if a = ap.action("mkdir killed-hook"); a != nil && a["status"] == "pending" {
			return "pending"
		}
		return ""
	})
	hook.Process.Kill()
	hook.Wait()
	ex := a["execution"].(map[string]any)
	until, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ex["waitUntil"]))
	if err != nil || until.Before(time.Now()) || until.After(time.Now().Add(3*time.Second)) {
		t.Fatalf("the hook announced the deadline %v (%v)", ex["waitUntil"], err)
	}
	// After the deadline (and the grace of a last poll) no hook waits:
	// brabo's sweep makes the action abandoned, out of the queue, with no
	// one deciding it.
	id := a["id"].(string)
	waitFor(t, "the sweep to abandon the action", func() string {
		if a := ap.action("mkdir killed-hook"); a["status"] == "abandoned" {
			return "abandoned"
		}
		return ""
	})
	if time.Now().Before(until.Add(5 * time.Second)) {
		t.Errorf("abandoned before the hook's deadline %s and its grace", until)
	}
	queue := ap.srv.must(t, "GET", "/v1/queue", ap.admin, nil, 200)
	for _, q := range queue["actions"].([]any) {
		if q.(map[string]any)["id"] == id {
			t.Error("the abandoned action is still in the queue")
		}
	}
	st, res, err := ap.srv.call("POST", "/v1/actions/"+id+"/approve", ap.admin, nil)
	if err != nil || st != 409 || res["code"] != "abandoned" {
		t.Fatalf("approving after the hook's deadline: %d %v %v", st, res, err)
	}
	if a := ap.action("mkdir killed-hook"); a["status"] != "abandoned" {
		t.Fatalf("the action is %v", a["status"])
	}
	if evs := ap.events(t, id); len(evs) != 2 || evs[1] != "action.abandoned by system" {
		t.Errorf("events %v", evs)
	}
}
