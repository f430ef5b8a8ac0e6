package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// testNotRun: an external action its agent refused itself after brabo
// approved it (issue 29): auto_approved becomes not_run, with a result
// that has a code and no exit code, and action.not_run; both read back,
// and the history's status filter finds it. No schema change holds it:
// neither store constrains an action's status or an event's type.
func testNotRun(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	hook := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "claude", PrincipalID: m.ID, Kind: brabo.AgentKindHook,
		TokenHash: id("hash"), CreatedAt: time.Now().UTC()}
	a := newAction(p, hook.ID)
	a.Status = brabo.StatusAutoApproved
	a.Execution = &brabo.Execution{Mode: brabo.ExecutionExternal, Runner: "claude-code", ToolUseID: "toolu_9"}
	res := &brabo.Result{Code: brabo.CodeNotRun, Error: "Claude Code did not run it: Permission to use Bash has been denied."}
	now := time.Now().UTC().Truncate(time.Microsecond)
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateAgent(ctx, hook); err != nil {
			return err
		}
		if err := tx.InsertAction(ctx, a); err != nil {
			return err
		}
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusApproved, brabo.StatusAutoApproved},
			brabo.ActionUpdate{Status: brabo.StatusNotRun, Result: res, SettledAt: now})
		if err != nil || !ok {
			t.Fatalf("auto_approved -> not_run: %v %v", ok, err)
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventActionNotRun, ActorID: hook.ID,
			ActionID: a.ID, Payload: []byte(`{"reason":"denied","by":"agent"}`), CreatedAt: now})
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Action(ctx, a.ID)
		if err != nil {
			return err
		}
		if got.Status != brabo.StatusNotRun || !got.Status.Settled() || got.Unreported() || got.Result == nil ||
			got.Result.Code != brabo.CodeNotRun || got.Result.Ran() || got.Result.Error != res.Error || !got.SettledAt.Equal(now) {
			t.Errorf("not_run read back as %+v (result %+v)", got, got.Result)
		}
		list, err := tx.Actions(ctx, brabo.ActionFilter{ProjectIDs: []string{p.ID}, Status: brabo.StatusNotRun})
		if err != nil || len(list) != 1 || list[0].ID != a.ID {
			t.Errorf("the status filter: %v %+v", err, list)
		}
		evs, err := tx.EventsOfType(ctx, p.ID, brabo.EventActionNotRun, 0, 0)
		if err != nil || len(evs) != 1 || evs[0].ActionID != a.ID || evs[0].ActorID != hook.ID {
			t.Errorf("action.not_run: %v %+v", err, evs)
		}
		return nil
	}))
	// A settled action is not settled twice.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusApproved, brabo.StatusAutoApproved},
			brabo.ActionUpdate{Status: brabo.StatusExecuted, SettledAt: now})
		if ok {
			t.Error("a not_run action was reported again")
		}
		return err
	}))
}
