package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

func TestProposeAutoPendingDeny(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"], "deny": ["Terminal(curl)"]}`)

		auto := e.terminal("echo hello")
		if auto["status"] != "executed" || str(auto, "result", "output") != "hello\n" || auto["decidedBy"] != nil {
			t.Fatalf("auto-approved echo: %v", auto)
		}
		if auto["reason"] != "permissions.json allow: Terminal(echo)" {
			t.Errorf("reason %q", auto["reason"])
		}
		pending := e.terminal("touch made.txt")
		if pending["status"] != "pending" || pending["result"] != nil {
			t.Fatalf("touch: %v", pending)
		}
		if _, err := os.Stat(filepath.Join(e.root, "made.txt")); err == nil {
			t.Fatal("a pending action ran")
		}
		denied := e.terminal("curl https://example.com")
		if denied["status"] != "denied" || denied["reason"] != "permissions.json deny: Terminal(curl)" {
			t.Fatalf("curl: %v", denied)
		}
		for _, a := range []map[string]any{auto, pending, denied} {
			created := e.eventsOf(a["id"].(string), brabo.EventActionCreated)
			if len(created) != 1 {
				t.Fatalf("%s: %d created events", a["id"], len(created))
			}
			p := payloadOf(created[0])
			if p["status"] != map[string]string{"executed": "auto_approved"}[a["status"].(string)] && p["status"] != a["status"] {
				t.Errorf("created status %v for %v", p["status"], a["status"])
			}
			if p["reason"] != a["reason"] || created[0].ActorID != e.agentID {
				t.Errorf("created event: %v actor %s", p, created[0].ActorID)
			}
			scope := p["scopeRoot"].(map[string]any)
			if scope["mode"] != "local" || strings.Contains(scope["id"].(string), "/") {
				t.Errorf("scopeRoot must be the mode and a relative id: %v", scope)
			}
		}
		if got := e.eventsOf(auto["id"].(string), brabo.EventActionApproved); len(got) != 0 {
			t.Error("an auto-approval recorded proposed_action.approved")
		}
		if got := e.eventsOf(auto["id"].(string), brabo.EventActionExecuted); len(got) != 1 || got[0].ActorID != brabo.SystemActor {
			t.Errorf("action.executed of the auto-approval: %v", got)
		}
		// Auto-approved actions run with the workspace owner's credential.
		if str(auto, "result", "detail", "executedAs") == "" {
			t.Errorf("no executedAs in %v", auto["result"])
		}
	})
}

func TestApproveExecutesOnceAndRecords(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		a := e.terminal("echo ran >> approvals.log")
		id := a["id"].(string)
		d := e.ok("POST", "/v1/actions/"+id+"/approve", e.maintainer, nil, 200)
		if d["outcome"] != "approved" || str(d, "action", "status") != "executed" {
			t.Fatalf("approve: %v", d)
		}
		again := e.ok("POST", "/v1/actions/"+id+"/approve", e.maintainer, nil, 200)
		if again["outcome"] != "already_approved" {
			t.Fatalf("second approve: %v", again)
		}
		log, _ := os.ReadFile(filepath.Join(e.root, "approvals.log"))
		if string(log) != "ran\n" {
			t.Fatalf("the command ran %d times", strings.Count(string(log), "ran"))
		}
		approved := e.eventsOf(id, brabo.EventActionApproved)
		if len(approved) != 1 || approved[0].ActorID == e.agentID || approved[0].ActorID == "" {
			t.Fatalf("approved events: %v", approved)
		}
		if n := len(e.eventsOf(id, brabo.EventActionExecuted)); n != 1 {
			t.Fatalf("%d action.executed events", n)
		}
		if str(d, "action", "decidedBy") != approved[0].ActorID {
			t.Errorf("decided_by %q, approved by %q", str(d, "action", "decidedBy"), approved[0].ActorID)
		}
		// The proposing agent is told through the outbox, keyed by it.
		var msgs []brabo.OutboxMessage
		e.store.Update(context.Background(), func(tx brabo.Tx) error {
			var err error
			msgs, err = tx.ClaimOutbox(context.Background(), time.Now(), time.Minute, 100)
			return err
		})
		found := false
		for _, m := range msgs {
			if m.ActionID == id && m.Topic == brabo.TopicActionSettled && m.ActorKey == "agent:"+e.agentID {
				found = strings.Contains(string(m.Payload), `"status":"executed"`)
			}
		}
		if !found {
			t.Errorf("no task.action_settled for the agent in %v", msgs)
		}
	})
}

func TestDenyRecordsTheReason(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		id := e.terminal("rm -r src")["id"].(string)
		e.refused("POST", "/v1/actions/"+id+"/deny", e.maintainer, map[string]any{"reason": "  "}, 400, "invalid_action")
		out := e.ok("POST", "/v1/actions/"+id+"/deny", e.maintainer, map[string]any{"reason": "keep src"}, 200)
		if str(out, "action", "status") != "denied" || str(out, "action", "reason") != "keep src" {
			t.Fatalf("deny: %v", out)
		}
		ev := e.eventsOf(id, brabo.EventActionDenied)
		if len(ev) != 1 || payloadOf(ev[0])["reason"] != "keep src" {
			t.Fatalf("denied events: %v", ev)
		}
		if _, err := os.Stat(filepath.Join(e.root, "src")); err != nil {
			t.Fatal("a denied command ran")
		}
		e.refused("POST", "/v1/actions/"+id+"/approve", e.maintainer, nil, 409, "action_already_denied")
		e.refused("POST", "/v1/actions/"+id+"/approve-always", e.maintainer, nil, 409, "action_already_denied")
		e.refused("POST", "/v1/actions/"+id+"/deny", e.maintainer, map[string]any{"reason": "again"}, 409, "action_already_denied")
	})
}

func TestApproveAlwaysRecordsPatternsAndTheNextOneRuns(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"deny": ["Terminal(curl)"], "x-team": {"owner": "ana"}}`)
		id := e.terminal("cd src && cat notes.txt")["id"].(string)
		preview := e.ok("GET", "/v1/actions/"+id+"/approve-always", e.maintainer, nil, 200)
		want := []any{"Terminal(cd)", "Terminal(cat)"}
		if len(preview["patterns"].([]any)) != 2 || preview["patterns"].([]any)[0] != want[0] || preview["patterns"].([]any)[1] != want[1] {
			t.Fatalf("preview %v, want %v", preview["patterns"], want)
		}
		d := e.ok("POST", "/v1/actions/"+id+"/approve-always", e.maintainer, nil, 200)
		if d["outcome"] != "approved" || str(d, "action", "result", "output") != "hello\n" {
			t.Fatalf("approve-always: %v", d)
		}
		file, _ := os.ReadFile(filepath.Join(e.root, "permissions.json"))
		for _, p := range want {
			if !strings.Contains(string(file), p.(string)) {
				t.Errorf("permissions.json lacks %s:\n%s", p, file)
			}
		}
		if !strings.Contains(string(file), `"x-team"`) || !strings.Contains(string(file), `"Terminal(curl)"`) {
			t.Errorf("always-allow lost other keys:\n%s", file)
		}
		granted := e.eventsOf(id, brabo.EventPermissionGranted)
		if len(granted) != 1 || payloadOf(granted[0])["pattern"] != "Terminal(cd), Terminal(cat)" {
			t.Fatalf("permission.granted: %v", granted)
		}
		if n := len(e.eventsOf(id, brabo.EventActionApproved)); n != 1 {
			t.Fatalf("%d approved events", n)
		}
		next := e.terminal("cd src && cat notes.txt")
		if next["status"] != "executed" {
			t.Fatalf("the like command did not auto-approve: %v", next)
		}
		// A second click on the approved action records nothing more.
		again := e.ok("POST", "/v1/actions/"+id+"/approve-always", e.maintainer, nil, 200)
		if p, _ := again["patterns"].([]any); again["outcome"] != "already_approved" || len(p) != 0 {
			t.Fatalf("second click: %v", again)
		}
		if n := len(e.eventsOf(id, brabo.EventPermissionGranted)); n != 1 {
			t.Fatalf("a click that recorded nothing emitted permission.granted (%d)", n)
		}
	})
}

func TestApproveAlwaysRefusals(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		push := e.terminal("git push origin main")["id"].(string)
		before, _ := os.ReadFile(filepath.Join(e.root, "permissions.json"))
		e.refused("POST", "/v1/actions/"+push+"/approve-always", e.maintainer, nil, 400, "always_allow_cap")
		sudo := e.terminal("sudo ls")["id"].(string)
		e.refused("POST", "/v1/actions/"+sudo+"/approve-always", e.maintainer, nil, 400, "always_allow_cap")
		typed := e.propose(e.agent, "git_push", map[string]any{"branch": "main"})["id"].(string)
		e.refused("POST", "/v1/actions/"+typed+"/approve-always", e.admin, nil, 400, "always_allow_cap")
		after, _ := os.ReadFile(filepath.Join(e.root, "permissions.json"))
		if string(before) != string(after) {
			t.Fatal("a refused click wrote permissions.json")
		}
		for _, id := range []string{push, sudo, typed} {
			a := e.ok("GET", "/v1/actions/"+id, e.maintainer, nil, 200)
			if a["status"] != "pending" {
				t.Errorf("a refused click changed %s to %v", id, a["status"])
			}
		}
		// The instance can still be approved normally.
		if d := e.ok("POST", "/v1/actions/"+push+"/approve", e.maintainer, nil, 200); str(d, "action", "status") != "executed" {
			t.Fatalf("approving the push: %v", d)
		}
	})
}

func TestConcurrentApprovalsExecuteOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		id := e.terminal("echo once >> once.log")["id"].(string)
		const n = 50
		var wg sync.WaitGroup
		results := make(chan string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, out := e.call("POST", "/v1/actions/"+id+"/approve", e.maintainer, nil)
				if status == 200 {
					results <- out["outcome"].(string)
				} else {
					results <- out["code"].(string)
				}
			}()
		}
		wg.Wait()
		close(results)
		counts := map[string]int{}
		for r := range results {
			counts[r]++
		}
		if counts["approved"] != 1 || counts["approved"]+counts["already_approved"] != n {
			t.Fatalf("outcomes %v: want one approved and the rest already_approved", counts)
		}
		log, _ := os.ReadFile(filepath.Join(e.root, "once.log"))
		if string(log) != "once\n" {
			t.Fatalf("executed %d times", strings.Count(string(log), "once"))
		}
		if k := len(e.eventsOf(id, brabo.EventActionApproved)); k != 1 {
			t.Fatalf("%d approved events", k)
		}
	})
}
