package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// onWriter is the SQLite store, recording which reads a proposal runs on
// its writer (ViewLatest).
type onWriter struct {
	*sqlite.Store
	mu    sync.Mutex
	reads []string
}

func (w *onWriter) ViewLatest(ctx context.Context, fn func(brabo.Tx) error) error {
	return w.Store.ViewLatest(ctx, func(tx brabo.Tx) error { return fn(writerTx{Tx: tx, w: w}) })
}

func (w *onWriter) read(name string) {
	w.mu.Lock()
	w.reads = append(w.reads, name)
	w.mu.Unlock()
}

func (w *onWriter) took() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.reads
	w.reads = nil
	return out
}

// writerTx records the reads made on the writer: the proposal's facts,
// and the ones that list rows.
type writerTx struct {
	brabo.Tx
	w *onWriter
}

func (t writerTx) ProposalFacts(ctx context.Context, projectID, principalID, agentID string, at brabo.ActionType) (*brabo.ProposalFacts, error) {
	t.w.read("ProposalFacts")
	return t.Tx.ProposalFacts(ctx, projectID, principalID, agentID, at)
}

func (t writerTx) Agents(ctx context.Context, projectID string) ([]*brabo.Agent, error) {
	t.w.read("Agents")
	return t.Tx.Agents(ctx, projectID)
}

func (t writerTx) MergeActions(ctx context.Context, projectID string, pr int64) ([]*brabo.ProposedAction, error) {
	t.w.read("MergeActions")
	return t.Tx.MergeActions(ctx, projectID, pr)
}

func (t writerTx) ProtectedBranches(ctx context.Context, projectID string) ([]brabo.ProtectedBranch, error) {
	t.w.read("ProtectedBranches")
	return t.Tx.ProtectedBranches(ctx, projectID)
}

// A proposal reads its facts on the writer (whose cache is warm), and
// only them, whatever its type: what a git_merge or an instruction_patch
// reads besides lists rows (a PR's merge proposals, every agent of the
// project), and every write would wait behind it there.
func TestOnlyTheFactsAreReadOnTheWriter(t *testing.T) {
	ctx := context.Background()
	agent := &brabo.Agent{ID: "agt_1", ProjectID: "prj_1", Name: "dev-api", PrincipalID: "mem_1", TokenHash: "ha",
		CreatedAt: time.Now().UTC()}
	pr := &brabo.PullRequest{ProjectID: "prj_1", Title: "t", Head: "feat/x", Base: "main", State: brabo.PROpen,
		CreatedAt: time.Now().UTC()}
	st, m, p := ownedProject(t, func(ctx context.Context, tx brabo.Tx, _ *brabo.Member, _ *brabo.Project) error {
		if err := tx.CreateAgent(ctx, agent); err != nil {
			return err
		}
		return tx.CreatePR(ctx, pr)
	})
	w := &onWriter{Store: st}
	svc := &pipeline.Service{Store: w, WorkspacesRoot: t.TempDir(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range []struct {
		typ brabo.ActionType
		pl  brabo.Payload
	}{
		{brabo.Terminal, brabo.Payload{Command: "touch a.txt"}},
		{brabo.InstructionPatch, brabo.Payload{Agent: agent.Name, Content: "Write tests first."}},
		{brabo.GitMerge, brabo.Payload{PR: pr.Number}},
	} {
		a, err := svc.Propose(ctx, pipeline.ProposeRequest{ProjectID: p.ID, Actor: pipeline.Actor{Member: m}, Type: c.typ, Payload: c.pl})
		if err != nil {
			t.Fatalf("proposing %s: %v", c.typ, err)
		}
		if got := w.took(); len(got) != 1 || got[0] != "ProposalFacts" {
			t.Errorf("a %s proposal read %v on the writer; want its facts only", c.typ, got)
		}
		// What the type reads besides was read all the same.
		switch c.typ {
		case brabo.InstructionPatch:
			if a.Payload.Agent != agent.ID {
				t.Errorf("the instruction_patch's agent is %q, want its id %q", a.Payload.Agent, agent.ID)
			}
		case brabo.GitMerge:
			if a.Payload.TargetBranch != "main" {
				t.Errorf("the git_merge's target branch is %q, want the PR's base", a.Payload.TargetBranch)
			}
		}
	}
}
