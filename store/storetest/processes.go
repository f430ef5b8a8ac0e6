package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// testProjectProcesses: a project's process settings start off (no hooks,
// no ceiling), are written by SetProjectProcesses, and are read back by
// Project, Projects and ProposalFacts alike.
func testProjectProcesses(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	read := func() []*brabo.Project {
		var out []*brabo.Project
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			one, err := tx.Project(ctx, p.ID)
			if err != nil {
				return err
			}
			facts, err := tx.ProposalFacts(ctx, p.ID, m.ID, "", brabo.Terminal)
			if err != nil {
				return err
			}
			all, err := tx.Projects(ctx)
			for _, q := range all {
				if q.ID == p.ID {
					out = append(out, q)
				}
			}
			out = append(out, one, facts.Project)
			return err
		}))
		return out
	}
	for _, got := range read() {
		if got.GitHooks || got.MaxTimeoutSec != 0 {
			t.Fatalf("a new project has hooks %v and a ceiling of %d s; want off and none", got.GitHooks, got.MaxTimeoutSec)
		}
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectProcesses(ctx, p.ID, true, 90) }))
	got := read()
	if len(got) != 3 {
		t.Fatalf("read the project %d times, want 3", len(got))
	}
	for _, g := range got {
		if !g.GitHooks || g.MaxTimeoutSec != 90 {
			t.Errorf("after SetProjectProcesses: hooks %v, ceiling %d s; want true, 90", g.GitHooks, g.MaxTimeoutSec)
		}
	}
	err := s.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectProcesses(ctx, id("prj"), true, 1) })
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("SetProjectProcesses of a missing project: %v, want ErrNotFound", err)
	}
}

// testInstancesAndRunning: instance rows are upserted (a renewal replaces
// the lease), listed and deleted; running records likewise, a second
// PutRunning replacing the process group.
func testInstancesAndRunning(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	a := &brabo.Instance{ID: id("inst"), Host: "h1", BootID: "boot-1", PID: 4242, PIDStart: 99999,
		StartedAt: now, LeaseUntil: now.Add(time.Minute)}
	b := &brabo.Instance{ID: id("inst"), Host: "h2", BootID: "boot-2", PID: 7, PIDStart: 1,
		StartedAt: now.Add(time.Second), LeaseUntil: now.Add(time.Minute)}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.PutInstance(ctx, a); err != nil {
			return err
		}
		return tx.PutInstance(ctx, b)
	}))
	renewed := *a
	renewed.LeaseUntil = now.Add(2 * time.Minute)
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.PutInstance(ctx, &renewed) }))

	r1 := &brabo.RunningAction{ActionID: id("act"), InstanceID: a.ID, Host: a.Host, BootID: a.BootID, StartedAt: now}
	r2 := &brabo.RunningAction{ActionID: id("act"), InstanceID: b.ID, Host: b.Host, BootID: b.BootID,
		PGID: 31337, LeaderStart: 12345, StartedAt: now.Add(time.Second)}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.PutRunning(ctx, r1); err != nil {
			return err
		}
		return tx.PutRunning(ctx, r2)
	}))
	withGroup := *r1
	withGroup.PGID, withGroup.LeaderStart = 555, 777
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.PutRunning(ctx, &withGroup) }))

	var insts []*brabo.Instance
	var runs []*brabo.RunningAction
	list := func() {
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			var err error
			if insts, err = tx.Instances(ctx); err != nil {
				return err
			}
			runs, err = tx.RunningActions(ctx)
			return err
		}))
	}
	list()
	if len(insts) != 2 || *insts[0] != renewed || *insts[1] != *b {
		t.Fatalf("Instances = %+v; want the renewed %+v and %+v", deref(insts), renewed, *b)
	}
	if len(runs) != 2 || *runs[0] != withGroup || *runs[1] != *r2 {
		t.Fatalf("RunningActions = %+v; want %+v and %+v", deref(runs), withGroup, *r2)
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.FinishRunning(ctx, r1.ActionID); err != nil {
			return err
		}
		if err := tx.FinishRunning(ctx, r1.ActionID); err != nil { // twice: not an error
			return err
		}
		if err := tx.DeleteInstance(ctx, a.ID); err != nil {
			return err
		}
		return tx.DeleteInstance(ctx, a.ID)
	}))
	list()
	if len(insts) != 1 || insts[0].ID != b.ID || len(runs) != 1 || runs[0].ActionID != r2.ActionID {
		t.Fatalf("after the deletes: %+v, %+v", deref(insts), deref(runs))
	}
}

func deref[T any](list []*T) []T {
	out := make([]T, len(list))
	for i, p := range list {
		out[i] = *p
	}
	return out
}
