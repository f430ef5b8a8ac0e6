package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// testExternalExecution: migration 00008's columns round-trip: an
// action's execution (who runs it), an agent's kind, a project's mapped
// MCP tools.
func testExternalExecution(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	hook := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "claude", PrincipalID: m.ID, Kind: brabo.AgentKindHook,
		TokenHash: id("hash"), CreatedAt: time.Now().UTC()}
	plain := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "dev-web", PrincipalID: m.ID,
		TokenHash: id("hash"), CreatedAt: time.Now().UTC()}
	ext := newAction(p, hook.ID)
	ext.Type, ext.Payload = brabo.McpTool, brabo.Payload{Tool: "github__create_issue"}
	ext.Execution = &brabo.Execution{Mode: brabo.ExecutionExternal, Runner: "claude-code", SessionID: "s1", TurnID: "t1", ToolUseID: "toolu_1"}
	own := newAction(p, plain.ID)
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		for _, a := range []*brabo.Agent{hook, plain} {
			if err := tx.CreateAgent(ctx, a); err != nil {
				return err
			}
		}
		if err := tx.InsertAction(ctx, ext); err != nil {
			return err
		}
		if err := tx.InsertAction(ctx, own); err != nil {
			return err
		}
		return tx.SetProjectMcpTools(ctx, p.ID, []string{"github__*", "fs__read"})
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		a, err := tx.Action(ctx, ext.ID)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(a.Execution, ext.Execution) || a.Payload.Tool != "github__create_issue" || !a.External() {
			t.Errorf("external action read back as %+v (execution %+v)", a, a.Execution)
		}
		if b, err := tx.Action(ctx, own.ID); err != nil || b.Execution != nil || b.External() {
			t.Errorf("brabo's own action read back with execution %+v (%v)", b.Execution, err)
		}
		list, err := tx.Actions(ctx, brabo.ActionFilter{ProjectIDs: []string{p.ID}, ActorID: hook.ID})
		if err != nil || len(list) != 1 || list[0].Execution == nil || list[0].Execution.ToolUseID != "toolu_1" {
			t.Errorf("listing: %v %+v", err, list)
		}
		for _, want := range []*brabo.Agent{hook, plain} {
			got, err := tx.Agent(ctx, want.ID)
			if err != nil || got.Kind != want.Kind {
				t.Errorf("agent %s kind %q, want %q (%v)", want.Name, got.Kind, want.Kind, err)
			}
		}
		if got, err := tx.AgentByTokenHash(ctx, hook.TokenHash); err != nil || !got.IsHook() {
			t.Errorf("hook agent by token: %+v %v", got, err)
		}
		pr, err := tx.Project(ctx, p.ID)
		if err != nil || !reflect.DeepEqual(pr.McpTools, []string{"github__*", "fs__read"}) {
			t.Errorf("project mcp tools %q (%v)", pr.McpTools, err)
		}
		f, err := tx.ProposalFacts(ctx, p.ID, m.ID, hook.ID, brabo.McpTool)
		if err != nil || !reflect.DeepEqual(f.Project.McpTools, pr.McpTools) {
			t.Errorf("proposal facts mcp tools %v (%v)", f, err)
		}
		return nil
	}))
	// A new project has no mapped tool: an empty list, never nil.
	_, p2 := fixture(t, s)
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		pr, err := tx.Project(ctx, p2.ID)
		if err != nil || pr.McpTools == nil || len(pr.McpTools) != 0 {
			t.Errorf("a new project's mcp tools %#v (%v)", pr.McpTools, err)
		}
		return nil
	}))
	if err := s.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectMcpTools(ctx, "prj_nope", nil) }); err == nil {
		t.Error("mapping tools of a missing project succeeded")
	}
}

// testExpiredWaits: migration 00012's wait_until: ExpiredWaits lists the
// pending external actions whose hook's deadline passed, and no other
// (one still waited for, one decided, brabo's own).
func testExpiredWaits(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	hook := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "claude", PrincipalID: m.ID, Kind: brabo.AgentKindHook,
		TokenHash: id("hash"), CreatedAt: time.Now().UTC()}
	now := time.Now().UTC()
	external := func(until time.Time, st brabo.ActionStatus) *brabo.ProposedAction {
		a := newAction(p, hook.ID)
		a.Status = st
		a.Execution = &brabo.Execution{Mode: brabo.ExecutionExternal, Runner: "claude-code", WaitUntil: until}
		return a
	}
	gone, waiting, decided := external(now.Add(-time.Minute), brabo.StatusPending), external(now.Add(time.Minute), brabo.StatusPending),
		external(now.Add(-time.Minute), brabo.StatusDenied)
	own := newAction(p, hook.ID)
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateAgent(ctx, hook); err != nil {
			return err
		}
		for _, a := range []*brabo.ProposedAction{gone, waiting, decided, own} {
			if err := tx.InsertAction(ctx, a); err != nil {
				return err
			}
		}
		return nil
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		list, err := tx.ExpiredWaits(ctx, now, 10)
		if err != nil || len(list) != 1 || list[0].ID != gone.ID || !list[0].Execution.WaitUntil.Equal(gone.Execution.WaitUntil) {
			t.Errorf("ExpiredWaits: %v %+v", err, list)
		}
		return nil
	}))
}
