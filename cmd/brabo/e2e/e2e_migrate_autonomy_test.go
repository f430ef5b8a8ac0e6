package e2e

// The blanket terminal: auto_approve rules that always-allow clicks wrote
// before the agents' own patterns existed become the clicked units, as the agent's own patterns;
// a rule a maintainer set stays (pipeline.MigrateClickAutonomy).

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/brabo-dev/brabo"
)

// oldClick writes what an always-allow click on the agent's action wrote
// before the agents' own patterns existed: the blanket rule and a permission.granted event naming
// the agent and the type, without patterns.
func (e *env) oldClick(agentID, actionID string) {
	e.t.Helper()
	ctx := context.Background()
	payload, _ := json.Marshal(map[string]any{"agentId": agentID, "actionType": "terminal", "actionId": actionID})
	if err := e.store.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: agentID, ActionType: brabo.Terminal, Mode: brabo.AutoApprove}); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: e.project, Type: brabo.EventPermissionGranted,
			ActorID: e.memberID(e.maintainer), ActionID: actionID, Payload: payload})
	}); err != nil {
		e.t.Fatal(err)
	}
}

// terminalRule is the agent's terminal autonomy rule, "" for none.
func (e *env) terminalRule(agentID string) string {
	e.t.Helper()
	for _, r := range e.ok("GET", e.pp("/agents/"+agentID+"/autonomy"), e.developer, nil, 200)["autonomy"].([]any) {
		if r := r.(map[string]any); r["actionType"] == "terminal" {
			return r["mode"].(string)
		}
	}
	return ""
}

func TestClickWrittenTerminalRulesMigrateToPatterns(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		web, webID := e.newAgent(e.admin, "dev-web")
		api, apiID := e.newAgent(e.admin, "dev-api")
		ops, opsID := e.newAgent(e.admin, "dev-ops")

		// dev-web: two old clicks (a maintainer set the rule back to
		// manual in between, which the old PUT did not log).
		first := e.propose(web, "terminal", map[string]any{"command": "pnpm lint"})["id"].(string)
		second := e.propose(web, "terminal", map[string]any{"command": "cat src/notes.txt && ls -la src"})["id"].(string)
		e.oldClick(webID, first)
		e.oldClick(webID, second)
		// dev-api: a maintainer's PUT of old, which logged nothing.
		if err := e.store.Update(ctx, func(tx brabo.Tx) error {
			return tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: apiID, ActionType: brabo.Terminal, Mode: brabo.AutoApprove})
		}); err != nil {
			t.Fatal(err)
		}
		// dev-ops: an old click, then a maintainer's PUT through today's
		// API, which the log records: the rule is the maintainer's now.
		opsAction := e.propose(ops, "terminal", map[string]any{"command": "make lint"})["id"].(string)
		e.oldClick(opsID, opsAction)
		e.ok("PUT", e.pp("/agents/"+opsID+"/autonomy"), e.maintainer, map[string]any{"actionType": "terminal", "mode": "require_approval"}, 200)
		e.ok("PUT", e.pp("/agents/"+opsID+"/autonomy"), e.maintainer, map[string]any{"actionType": "terminal", "mode": "auto_approve"}, 200)

		// Before: the blanket rule frees any command of dev-web.
		if a := e.propose(web, "terminal", map[string]any{"command": "touch free.txt"}); a["status"] == "pending" {
			t.Fatalf("before the migration the blanket rule should hold: %v", a)
		}

		n, err := e.svc.MigrateClickAutonomy(ctx)
		if err != nil || n != 1 {
			t.Fatalf("MigrateClickAutonomy = %d, %v; want 1 rule migrated", n, err)
		}
		if r := e.terminalRule(webID); r != "" {
			t.Fatalf("dev-web's blanket rule is still there: %q", r)
		}
		want := []string{"Terminal(pnpm lint)", "Terminal(cat)", "Terminal(ls -la src)"}
		if got := e.patternsOf(webID); !slices.Equal(got, want) {
			t.Fatalf("dev-web's patterns = %q, want %q", got, want)
		}
		changed := e.agentEvents(brabo.EventAutonomyChanged, webID)
		if len(changed) != 1 || changed[0]["actorId"] != brabo.SystemActor || changed[0]["via"] != "migration" ||
			changed[0]["actionType"] != "terminal" || changed[0]["previousMode"] != "auto_approve" || changed[0]["mode"] != nil ||
			!slices.Equal(stringList(changed[0]["added"]), want) || !slices.Equal(stringList(changed[0]["actionIds"]), []string{first, second}) {
			t.Fatalf("autonomy.changed of the migration: %v", changed)
		}

		// The maintainers' rules stay, and gained nothing.
		for _, id := range []string{apiID, opsID} {
			if r := e.terminalRule(id); r != "auto_approve" {
				t.Errorf("a maintainer's rule of %s became %q", id, r)
			}
			if got := e.patternsOf(id); len(got) != 0 {
				t.Errorf("%s gained patterns: %q", id, got)
			}
		}
		if a := e.propose(api, "terminal", map[string]any{"command": "touch api.txt"}); a["status"] == "pending" {
			t.Errorf("dev-api's maintainer rule no longer holds: %v", a)
		}

		// After: dev-web runs its clicked units, and asks for the rest.
		if a := e.propose(web, "terminal", map[string]any{"command": "pnpm lint"}); a["status"] == "pending" || a["reason"] != "agent allow: Terminal(pnpm lint)" {
			t.Fatalf("dev-web's pnpm lint after the migration: %v", a)
		}
		if a := e.propose(web, "terminal", map[string]any{"command": "touch free2.txt"}); a["status"] != "pending" {
			t.Fatalf("dev-web's touch after the migration: %v", a)
		}

		// Idempotent: a second start changes and records nothing.
		before := len(e.events())
		if n, err := e.svc.MigrateClickAutonomy(ctx); err != nil || n != 0 {
			t.Fatalf("a second MigrateClickAutonomy = %d, %v", n, err)
		}
		if after := len(e.events()); after != before {
			t.Fatalf("a second migration appended %d events", after-before)
		}
		if r := e.terminalRule(apiID); r != "auto_approve" {
			t.Fatalf("a second migration changed dev-api's rule: %q", r)
		}
	})
}
