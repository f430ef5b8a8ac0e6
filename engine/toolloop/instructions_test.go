package toolloop_test

import (
	"context"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// metered is a model that reports a fixed usage per call.
type metered struct{ inner model.Model }

func (m metered) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	resp, err := m.inner.Complete(ctx, req)
	if resp != nil {
		resp.Usage = model.Usage{InputTokens: 1000, OutputTokens: 200}
	}
	return resp, err
}

// gate passes proposals on, as the dev agent's report_done gate does.
type gate struct{ inner toolloop.Proposer }

func (g gate) Propose(ctx context.Context, req pipeline.ProposeRequest) (*brabo.ProposedAction, error) {
	return g.inner.Propose(ctx, req)
}
func (g gate) Inner() toolloop.Proposer { return g.inner }

// patch proposes an instruction_patch of the agent's instructions as the
// owner and approves it.
func (w *world) patch(t *testing.T, text string) {
	t.Helper()
	ctx := context.Background()
	a, err := w.svc.Propose(ctx, pipeline.ProposeRequest{ProjectID: w.prj.ID, Actor: pipeline.Actor{Member: w.owner},
		Type: brabo.InstructionPatch, Payload: brabo.Payload{Agent: w.agent.Name, Content: text}})
	if err != nil || a.Status != brabo.StatusPending {
		t.Fatalf("instruction_patch: %v %v", a, err)
	}
	d, err := w.svc.Approve(ctx, a.ID, w.owner, w.svc.RevisionNow(ctx, a.ID))
	if err != nil || d.Action.Status != brabo.StatusExecuted {
		t.Fatalf("approving the patch: %+v %v", d, err)
	}
}

// TestTheNextTurnUsesApprovedInstructions: an approved instruction_patch
// is in the System prompt of the agent's next model call (also through a
// proposer that wraps the pipeline), and every model call of brabo's own
// agent is recorded against the project's budget at its prices.
func TestTheNextTurnUsesApprovedInstructions(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	if _, err := w.svc.SetBudget(ctx, w.prj.ID, w.owner, 10_000_000, 3_000_000, 15_000_000); err != nil {
		t.Fatal(err)
	}
	const done = `{"turns": [{"content": "Done."}]}`

	loop, rec := w.loop(t, done)
	loop.Model = metered{inner: rec}
	if _, ok := toolloop.Run(ctx, loop, "say hello").(toolloop.Done); !ok {
		t.Fatal("the first turn did not finish")
	}
	if sys := rec.Req(t, 0).System; sys != "You are a dev agent." {
		t.Fatalf("with no stored instructions the System prompt is %q", sys)
	}

	w.patch(t, "Always answer in French.")
	loop, rec = w.loop(t, done)
	loop.Model = metered{inner: rec}
	loop.Proposer = gate{inner: w.svc}
	if _, ok := toolloop.Run(ctx, loop, "say hello").(toolloop.Done); !ok {
		t.Fatal("the second turn did not finish")
	}
	want := "You are a dev agent.\n\n" + toolloop.InstructionsHeader + "\nAlways answer in French."
	if sys := rec.Req(t, 0).System; sys != want {
		t.Fatalf("after the patch the System prompt is %q, want %q", sys, want)
	}

	w.patch(t, "Answer in Portuguese.")
	loop, rec = w.loop(t, done)
	if _, ok := toolloop.Run(ctx, loop, "say hello").(toolloop.Done); !ok {
		t.Fatal("the third turn did not finish")
	}
	if sys := rec.Req(t, 0).System; !strings.HasSuffix(sys, "\nAnswer in Portuguese.") || strings.Contains(sys, "French") {
		t.Fatalf("after the second patch the System prompt is %q", sys)
	}

	// Two metered calls, 1000 input and 200 output tokens each, at 3 and
	// 15 a million: 0.006 each. (The third model reports no usage.)
	v, err := w.svc.BudgetOf(ctx, w.prj.ID, w.owner)
	if err != nil {
		t.Fatal(err)
	}
	if v.Budget.Spent != 12_000 || len(v.Entries) != 2 {
		t.Fatalf("the budget after two metered calls: spent %s, %d entries", v.Budget.Spent, len(v.Entries))
	}
	for _, e := range v.Entries {
		if e.Kind != brabo.BudgetModel || e.AgentID != w.agent.ID || e.InputTokens != 1000 || e.OutputTokens != 200 || e.Amount != 6_000 {
			t.Fatalf("a model usage entry: %+v", e)
		}
	}
}
