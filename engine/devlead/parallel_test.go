package devlead_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devlead"
	"github.com/brabo-dev/brabo/pipeline"
)

// devAgents lists the names of the project's module dev agents, sorted,
// and checks each acts for principal.
func (w *world) devAgents(t *testing.T, principal string) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	if err := w.store.View(ctx, func(tx brabo.Tx) error {
		ags, err := tx.Agents(ctx, w.prj.ID)
		for _, a := range ags {
			if a.IsModuleDev() {
				names = append(names, a.Name)
				if a.PrincipalID != principal {
					t.Errorf("%s acts for %s, want %s", a.Name, a.PrincipalID, principal)
				}
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func (w *world) project(t *testing.T) *brabo.Project {
	t.Helper()
	ctx := context.Background()
	var p *brabo.Project
	if err := w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		p, err = tx.Project(ctx, w.prj.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) setCap(t *testing.T, n int) {
	t.Helper()
	ctx := context.Background()
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectAgents(ctx, w.prj.ID, n, 0) }); err != nil {
		t.Fatal(err)
	}
}

// propose proposes an action as the project's owner, a human.
func (w *world) propose(t *testing.T, typ brabo.ActionType, extra string) (*brabo.ProposedAction, error) {
	t.Helper()
	return w.svc.Propose(context.Background(), pipeline.ProposeRequest{ProjectID: w.prj.ID,
		Actor: pipeline.Actor{Member: w.owner}, Type: typ, Payload: brabo.Payload{Extra: json.RawMessage(extra)}})
}

// An approved plan starts the planned agents per module within the cap,
// module by module in turn, and names those the cap left out; the lead's
// turn resumes with that result.
func TestAnApprovedPlanStartsThePlannedAgentsWithinTheCap(t *testing.T) {
	w := newWorld(t)
	w.setCap(t, 3)
	m := newModel(t, `{"turns": [
  {"toolCalls": [{"id": "call_plan", "name": "propose_execution_plan",
    "arguments": {"plan": "api and web in parallel", "agents": {"web": 2, "api": 2}}}]},
  {"expectToolResult": "above the cap, not started: web: 1", "content": "Three agents started; I will ask for the fourth."}
]}`)
	l := w.lead(m)
	turn, err := l.Post(context.Background(), "Plan it.")
	if err != nil || turn.Awaiting == "" {
		t.Fatalf("%+v, %v", turn, err)
	}
	if got := w.devAgents(t, w.owner.ID); len(got) != 0 {
		t.Fatalf("agents started before the approval: %v", got)
	}
	w.approve(t, turn.Awaiting)
	a := w.action(t, turn.Awaiting)
	if a.Result.Detail["started"] != "dev-api,dev-web,dev-api-2" || a.Result.Detail["aboveCap"] != `{"web":1}` ||
		a.Result.Detail["maxParallel"] != "3" {
		t.Fatalf("the plan's result: %+v", a.Result)
	}
	if got := w.devAgents(t, w.owner.ID); !slices.Equal(got, []string{"dev-api", "dev-api-2", "dev-web"}) {
		t.Fatalf("the dev agents: %v", got)
	}
	evs := w.events(t, devlead.EventAgentsStarted)
	if len(evs) != 1 || evs[0].ActionID != a.ID || !strings.Contains(string(evs[0].Payload), `"dev-api-2"`) {
		t.Fatalf("dev.agents_started: %+v", evs)
	}
	drain(t, w.worker(l), l)
	msgs := w.conversation(t, l)
	if last := msgs[len(msgs)-1]; last.Content != "Three agents started; I will ask for the fourth." {
		t.Fatalf("the conversation ends with %+v", last)
	}
	if p := w.project(t); p.MaxParallel != 3 {
		t.Fatalf("the plan changed the cap to %d", p.MaxParallel)
	}
}

// The lead's parallelize within the cap starts the agents at once and
// proposes nothing; above it, it proposes parallelize, which
// waits for a human even in auto mode, suspends the turn, and once
// approved raises the cap and starts the agents.
func TestTheLeadsParallelizeIsDecidedOnlyAboveTheCap(t *testing.T) {
	w := newWorld(t)
	w.setCap(t, 2)
	ctx := context.Background()
	// Auto mode for the lead: the cap on parallelize holds anyway.
	if err := w.store.Update(ctx, func(tx brabo.Tx) error {
		return tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: w.agent.ID, ActionType: brabo.AnyActionType, Mode: brabo.AutoApprove})
	}); err != nil {
		t.Fatal(err)
	}
	m := newModel(t, `{"turns": [
  {"toolCalls": [{"id": "p1", "name": "parallelize", "arguments": {"module": "api", "agents": 2, "reason": "two stories"}}]},
  {"expectToolResult": "within the cap, nothing to decide: started dev-api, dev-api-2",
   "toolCalls": [{"id": "p2", "name": "parallelize", "arguments": {"module": "api", "agents": 4, "reason": "four stories"}}]},
  {"expectToolResult": "raised from 2 to 4", "content": "Four agents on api now."}
]}`)
	l := w.lead(m)
	l.Starter = &devlead.Starter{Store: w.store}
	turn, err := l.Post(ctx, "More agents on api, please.")
	if err != nil || turn.Awaiting == "" {
		t.Fatalf("the turn did not suspend above the cap: %+v, %v", turn, err)
	}
	var proposed []*brabo.ProposedAction
	for _, e := range w.events(t, brabo.EventActionCreated) {
		proposed = append(proposed, w.action(t, e.ActionID))
	}
	if len(proposed) != 1 || proposed[0].Type != brabo.Parallelize || proposed[0].Status != brabo.StatusPending ||
		!strings.HasPrefix(proposed[0].Reason, "cap:") {
		t.Fatalf("proposed: %+v", proposed)
	}
	if got := w.devAgents(t, w.owner.ID); !slices.Equal(got, []string{"dev-api", "dev-api-2"}) {
		t.Fatalf("the agents within the cap: %v", got)
	}
	w.approve(t, turn.Awaiting)
	if p := w.project(t); p.MaxParallel != 4 {
		t.Fatalf("the cap after the approval: %d", p.MaxParallel)
	}
	if got := w.devAgents(t, w.owner.ID); !slices.Equal(got, []string{"dev-api", "dev-api-2", "dev-api-3", "dev-api-4"}) {
		t.Fatalf("the agents after the approval: %v", got)
	}
	changed := w.events(t, devlead.EventMaxParallelChanged)
	if len(changed) != 1 || changed[0].ActionID != turn.Awaiting || !strings.Contains(string(changed[0].Payload), `"to":4`) {
		t.Fatalf("project.max_parallel_changed: %+v", changed)
	}
	drain(t, w.worker(l), l)
	msgs := w.conversation(t, l)
	if last := msgs[len(msgs)-1]; last.Content != "Four agents on api now." {
		t.Fatalf("the conversation ends with %+v", last)
	}
}

// raise_max_parallel raises the cap once a human approves; one that is not
// a raise fails by name and changes nothing.
func TestRaiseMaxParallel(t *testing.T) {
	w := newWorld(t)
	a, err := w.propose(t, brabo.RaiseMaxParallel, `{"maxParallel": 5, "reason": "release week"}`)
	if err != nil || a.Status != brabo.StatusPending {
		t.Fatalf("the proposal: %+v, %v", a, err)
	}
	w.approve(t, a.ID)
	if p := w.project(t); p.MaxParallel != 5 {
		t.Fatalf("the cap: %d", p.MaxParallel)
	}
	if evs := w.events(t, devlead.EventMaxParallelChanged); len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"from":3`) {
		t.Fatalf("project.max_parallel_changed: %+v", evs)
	}
	low, err := w.propose(t, brabo.RaiseMaxParallel, `{"maxParallel": 4}`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := w.svc.Approve(context.Background(), low.ID, w.owner, w.svc.RevisionNow(context.Background(), low.ID))
	if err != nil || d.Action.Status != brabo.StatusFailed || !strings.Contains(d.Action.Result.Error, "not a raise") ||
		!strings.Contains(d.Action.Result.Error, "is 5 already") {
		t.Fatalf("a lowering raise: %+v, %v", d, err)
	}
	if p := w.project(t); p.MaxParallel != 5 {
		t.Fatalf("a failed raise changed the cap to %d", p.MaxParallel)
	}
}

// A payload that no executor could run is refused at the proposal, by
// name, and nothing is recorded.
func TestParallelPayloadsAreCheckedAtTheProposal(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		typ   brabo.ActionType
		extra string
		want  string
	}{
		{brabo.Parallelize, `{"module": "api-2", "agents": 2}`, "may not end in -<number>"},
		{brabo.Parallelize, `{"module": "api", "agents": 0}`, "agents is 0"},
		{brabo.Parallelize, `{"module": "Api", "agents": 1}`, `module "Api"`},
		{brabo.Parallelize, `{"module": "api", "agents": 1, "extra": true}`, "unknown field"},
		{brabo.Parallelize, ``, "needs its fields in extra"},
		{brabo.RaiseMaxParallel, `{"maxParallel": 0}`, "maxParallel is 0"},
		{brabo.RaiseMaxParallel, `{"maxParallel": 100000}`, "want 1 to 1000"},
		{brabo.ProposeExecutionPlan, `{"plan": "x", "agents": {}}`, "needs agents"},
		{brabo.ProposeExecutionPlan, `{"plan": "", "agents": {"api": 1}}`, "needs a plan"},
		{brabo.ProposeExecutionPlan, `{"plan": "x", "agents": {"api": -1}}`, `agents["api"] is -1`},
	} {
		a, err := w.propose(t, tc.typ, tc.extra)
		if brabo.ErrorCode(err) != brabo.CodeInvalidAction || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %+v, %v; want invalid_action naming %q", tc.typ, tc.extra, a, err, tc.want)
		}
	}
	if evs := w.events(t, brabo.EventActionCreated); len(evs) != 0 {
		t.Fatalf("refused proposals were recorded: %d", len(evs))
	}
}
