package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// counting is the SQLite store, counting its reads on the writer.
type counting struct {
	*sqlite.Store
	onWriter atomic.Int32
}

func (c *counting) ViewLatest(ctx context.Context, fn func(brabo.Tx) error) error {
	c.onWriter.Add(1)
	return c.Store.ViewLatest(ctx, fn)
}

// The proposal's facts read goes to the writer (whose cache is warm) only
// when it is short: a git_merge's and an instruction_patch's reads list
// rows (a PR's merge proposals, every agent of the project), and every
// write would wait behind them, so they stay on a read connection.
func TestTheFactsReadRunsOnTheWriterOnlyWhenItIsShort(t *testing.T) {
	ctx := context.Background()
	agent := &brabo.Agent{ID: "agt_1", ProjectID: "prj_1", Name: "dev-api", PrincipalID: "mem_1", TokenHash: "ha",
		CreatedAt: time.Now().UTC()}
	st, m, p := ownedProject(t, func(ctx context.Context, tx brabo.Tx, _ *brabo.Member, _ *brabo.Project) error {
		return tx.CreateAgent(ctx, agent)
	})
	c := &counting{Store: st}
	svc := &pipeline.Service{Store: c, WorkspacesRoot: t.TempDir(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	propose := func(typ brabo.ActionType, pl brabo.Payload) {
		t.Helper()
		if _, err := svc.Propose(ctx, pipeline.ProposeRequest{ProjectID: p.ID, Actor: pipeline.Actor{Member: m},
			Type: typ, Payload: pl}); err != nil {
			t.Fatalf("proposing %s: %v", typ, err)
		}
	}
	propose(brabo.Terminal, brabo.Payload{Command: "touch a.txt"})
	if n := c.onWriter.Load(); n != 1 {
		t.Fatalf("a terminal proposal read on the writer %d times, want once", n)
	}
	propose(brabo.InstructionPatch, brabo.Payload{Agent: agent.Name, Content: "Write tests first."})
	if n := c.onWriter.Load(); n != 1 {
		t.Fatalf("an instruction_patch proposal read on the writer (%d reads there in all)", n)
	}
}
