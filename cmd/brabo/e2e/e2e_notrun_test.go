package e2e

import (
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// TestExternalNotRun: a call its agent refused itself after brabo
// approved it (Claude Code's own deny, Codex's policy) is reported
// notRun: the action becomes not_run, records action.not_run by the agent
// with its reason, carries no exit code, leaves the unreported state, and
// is reported once, in both stores.
func TestExternalNotRun(t *testing.T) {
	eachWatchedStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"]}`)
		hook := e.ok("POST", e.pp("/agents"), e.maintainer, map[string]any{"name": "claude", "kind": "hook"}, 201)
		token, hookID := hook["token"].(string), str(hook, "agent", "id")
		external := func(command, tool string) string {
			a := e.ok("POST", e.pp("/actions"), token, map[string]any{"type": "terminal",
				"payload":   map[string]any{"command": command},
				"execution": map[string]any{"mode": "external", "runner": "claude-code", "toolUseId": tool}}, 201)
			return a["id"].(string)
		}
		id := external("echo refused", "toolu_1")
		reason := "Claude Code did not run it: Permission to use Bash with command echo refused has been denied."
		e.refused("POST", "/v1/actions/"+id+"/result", token, map[string]any{"notRun": true, "exitCode": 0, "error": reason}, 400, "invalid_action")
		rep := e.ok("POST", "/v1/actions/"+id+"/result", token, map[string]any{"notRun": true, "error": reason, "output": "ignored"}, 200)
		res, _ := rep["result"].(map[string]any)
		if rep["status"] != "not_run" || res["code"] != "not_run" || res["error"] != reason || res["output"] != "" {
			t.Fatalf("not_run report: %v", rep)
		}
		if _, has := res["exitCode"]; has {
			t.Errorf("a call that did not run has an exit code: %v", res)
		}
		if str(rep, "result", "detail", "refusedBy") != "agent:"+hookID {
			t.Errorf("who refused it: %v", res["detail"])
		}
		ev := e.eventsOf(id, brabo.EventActionNotRun)
		if len(ev) != 1 || ev[0].ActorID != hookID || payloadOf(ev[0])["reason"] != reason {
			t.Fatalf("action.not_run by the agent: %+v", ev)
		}
		if got := e.eventsOf(id, brabo.EventActionExecuted); len(got) != 0 {
			t.Errorf("a not_run action recorded action.executed: %+v", got)
		}
		e.refused("POST", "/v1/actions/"+id+"/result", token, map[string]any{"exitCode": 0, "output": "late"}, 409, "already_reported")
		got := e.ok("GET", "/v1/actions/"+id, e.admin, nil, 200)
		if got["status"] != "not_run" {
			t.Fatalf("read back: %v", got)
		}
		list := e.ok("GET", e.pp("/actions?status=not_run"), e.admin, nil, 200)
		if acts, _ := list["actions"].([]any); len(acts) != 1 {
			t.Errorf("the status filter: %v", list)
		}

		// No reason: brabo says the agent gave none; a long one is cut.
		quiet := external("echo quiet", "toolu_2")
		rep = e.ok("POST", "/v1/actions/"+quiet+"/result", token, map[string]any{"notRun": true}, 200)
		if str(rep, "result", "error") != "the agent did not run it" {
			t.Errorf("no reason: %v", rep)
		}
		long := external("echo long", "toolu_3")
		rep = e.ok("POST", "/v1/actions/"+long+"/result", token, map[string]any{"notRun": true, "error": strings.Repeat("é", 4000)}, 200)
		if n := len(str(rep, "result", "error")); n > 2048 || n < 2000 {
			t.Errorf("a long reason kept %d bytes", n)
		}

		// Pending: it must not have run, not_run or not.
		e.setPermissions(`{}`)
		pending := external("touch x", "toolu_4")
		e.refused("POST", "/v1/actions/"+pending+"/result", token, map[string]any{"notRun": true, "error": "no"}, 409, "not_decided")
	})
}
