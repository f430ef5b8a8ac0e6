package pipeline_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/procs"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// dying is a store whose process dies after a number of commits: every
// later write fails, as nothing more reaches the database.
type dying struct {
	brabo.Store
	left atomic.Int32
}

func (d *dying) Update(ctx context.Context, fn func(brabo.Tx) error) error {
	if d.left.Add(-1) < 0 {
		return errors.New("the process is dead")
	}
	return d.Store.Update(ctx, fn)
}

// An action claimed to run here is recorded as running by this instance
// in the claim's own transaction: a process that dies right after that
// commit, before anything else, still leaves the record the next start
// settles (RecoverDead), never an action claimed forever.
func TestAClaimIsRecordedRunningInItsOwnTransaction(t *testing.T) {
	ctx := context.Background()
	st, m, p := ownedProject(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := &pipeline.Service{Store: st, Processes: &procs.Host{}, InstanceID: "inst_here", Executor: executor.New(executor.Options{}),
		WorkspacesRoot: t.TempDir(), Log: quiet}
	a, err := svc.Propose(ctx, pipeline.ProposeRequest{ProjectID: p.ID, Actor: pipeline.Actor{Member: m}, Type: brabo.Terminal,
		Payload: brabo.Payload{Command: "touch approved.txt"}})
	if err != nil || a.Status != brabo.StatusPending {
		t.Fatalf("the proposal: %+v, %v", a, err)
	}
	// The approval's claim commits; the process dies before anything else.
	d := &dying{Store: st}
	d.left.Store(1)
	dead := &pipeline.Service{Store: d, Processes: &procs.Host{}, InstanceID: "inst_here", Executor: executor.New(executor.Options{}),
		WorkspacesRoot: t.TempDir(), Log: quiet}
	if _, err := dead.Approve(ctx, a.ID, m, dead.RevisionNow(ctx, a.ID)); err == nil {
		t.Fatal("the dying process settled the action")
	}
	var runs []*brabo.RunningAction
	var got *brabo.ProposedAction
	if err := st.View(ctx, func(tx brabo.Tx) error {
		if runs, err = tx.RunningActions(ctx); err != nil {
			return err
		}
		got, err = tx.Action(ctx, a.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got.Status != brabo.StatusApproved || len(runs) != 1 || runs[0].ActionID != a.ID || runs[0].InstanceID != "inst_here" {
		t.Fatalf("after the claim: the action is %s, running records %+v", got.Status, runs)
	}
}

// ownedProject opens a SQLite store in a temporary folder (closed at the
// end of the test) with one member who owns one local project.
func ownedProject(t *testing.T, more ...func(ctx context.Context, tx brabo.Tx, m *brabo.Member, p *brabo.Project) error) (*sqlite.Store, *brabo.Member, *brabo.Project) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now().UTC()
	m := &brabo.Member{ID: "mem_1", Name: "ana", TokenHash: "h", CreatedAt: now}
	p := &brabo.Project{ID: "prj_1", Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: t.TempDir(),
		WorkspaceDir: "shop-12345678", OwnerID: m.ID, CreatedAt: now}
	if err := st.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, m); err != nil {
			return err
		}
		if err := tx.CreateProject(ctx, p); err != nil {
			return err
		}
		if err := tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: m.ID, Role: brabo.Owner}); err != nil {
			return err
		}
		for _, f := range more {
			if err := f(ctx, tx, m, p); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return st, m, p
}
