package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// testProjectAgents: a new project's cap on parallel dev agents is
// DefaultMaxParallel and its wait cap the server's (0);
// SetProjectAgents writes both, refuses a cap below 1, and a missing
// project is ErrNotFound.
func testProjectAgents(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	read := func() *brabo.Project {
		var got *brabo.Project
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			var err error
			got, err = tx.Project(ctx, p.ID)
			return err
		}))
		return got
	}
	if got := read(); got.MaxParallel != brabo.DefaultMaxParallel || got.WaitCapSec != 0 {
		t.Fatalf("a new project: maxParallel %d, waitCapSec %d; want %d, 0", got.MaxParallel, got.WaitCapSec, brabo.DefaultMaxParallel)
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectAgents(ctx, p.ID, 7, 3600) }))
	if got := read(); got.MaxParallel != 7 || got.WaitCapSec != 3600 {
		t.Errorf("after SetProjectAgents: maxParallel %d, waitCapSec %d; want 7, 3600", got.MaxParallel, got.WaitCapSec)
	}
	var all []*brabo.Project
	must(t, s.View(ctx, func(tx brabo.Tx) error { var err error; all, err = tx.Projects(ctx); return err }))
	for _, q := range all {
		if q.ID == p.ID && (q.MaxParallel != 7 || q.WaitCapSec != 3600) {
			t.Errorf("Projects reads maxParallel %d, waitCapSec %d", q.MaxParallel, q.WaitCapSec)
		}
	}
	if err := s.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectAgents(ctx, p.ID, 0, 60) }); err == nil {
		t.Error("a cap of 0 parallel agents was written")
	}
	if got := read(); got.MaxParallel != 7 {
		t.Errorf("a refused write changed the cap to %d", got.MaxParallel)
	}
	err := s.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectAgents(ctx, id("prj"), 2, 0) })
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("SetProjectAgents of a missing project: %v, want ErrNotFound", err)
	}
}

// testClaimTaskWithin: claims stop at the project's cap on parallel dev
// agents, even when they race, and go on when a task leaves in_progress.
func testClaimTaskWithin(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectAgents(ctx, p.ID, 3, 0) }))
	now := time.Now().UTC()
	var tasks []*brabo.Task
	for i := 0; i < 10; i++ {
		tasks = append(tasks, &brabo.Task{ID: id("task"), ProjectID: p.ID, Title: "t", Status: brabo.TaskTodo, CreatedAt: now})
	}
	// Another project's tasks in progress do not count.
	_, other := fixture(t, s)
	busy := &brabo.Task{ID: id("task"), ProjectID: other.ID, Title: "x", Status: brabo.TaskInProgress, CreatedAt: now}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		for _, task := range append(tasks, busy) {
			if err := tx.CreateTask(ctx, task); err != nil {
				return err
			}
		}
		return nil
	}))
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			must(t, s.Update(ctx, func(tx brabo.Tx) error {
				ok, err := tx.ClaimTaskWithin(ctx, tasks[i].ID, id("agt"), now)
				if ok {
					wins.Add(1)
				}
				return err
			}))
		}(i)
	}
	wg.Wait()
	if wins.Load() != 3 {
		t.Fatalf("%d claims won under a cap of 3", wins.Load())
	}
	count := func() (working int, claimable *brabo.Task) {
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			list, err := tx.Tasks(ctx, p.ID)
			for _, task := range list {
				switch task.Status {
				case brabo.TaskInProgress:
					working++
				case brabo.TaskTodo:
					claimable = task
				}
			}
			return err
		}))
		return working, claimable
	}
	working, todo := count()
	if working != 3 {
		t.Fatalf("%d tasks in progress; want 3", working)
	}
	// A task in review frees its slot.
	var done *brabo.Task
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		list, err := tx.Tasks(ctx, p.ID)
		for _, task := range list {
			if task.Status == brabo.TaskInProgress && done == nil {
				done = task
			}
		}
		return err
	}))
	done.Status, done.UpdatedAt = brabo.TaskInReview, now
	var ok bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.UpdateTask(ctx, done); err != nil {
			return err
		}
		var err error
		ok, err = tx.ClaimTaskWithin(ctx, todo.ID, id("agt"), now)
		return err
	}))
	if !ok {
		t.Error("a claim was refused below the cap")
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		_, todo = count()
		var err error
		ok, err = tx.ClaimTaskWithin(ctx, todo.ID, id("agt"), now)
		return err
	}))
	if ok {
		t.Error("a claim passed the cap")
	}
	err := s.Update(ctx, func(tx brabo.Tx) error { _, err := tx.ClaimTaskWithin(ctx, id("task"), "a", now); return err })
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("claiming a missing task: %v, want ErrNotFound", err)
	}
}

// testRunDeadlines: a waiting run keeps its deadline; ExpiredRuns lists
// the waiting runs whose deadline passed, earliest first; leaving the
// wait, or saving the run in another state, clears it.
func testRunDeadlines(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	mk := func(state brabo.RunState, deadline time.Time) *brabo.Run {
		r := &brabo.Run{ID: id("run"), ProjectID: p.ID, ActorKey: brabo.AgentKey(id("agt")), State: state,
			AwaitingActionID: id("act"), UpdatedAt: t0, Deadline: deadline}
		if state != brabo.RunAwaitingApproval && state != brabo.RunAwaitingPR {
			r.AwaitingActionID = ""
		}
		must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, r) }))
		return r
	}
	late := mk(brabo.RunAwaitingApproval, t0.Add(2*time.Hour))
	early := mk(brabo.RunAwaitingPR, t0.Add(time.Hour))
	uncapped := mk(brabo.RunAwaitingApproval, time.Time{})
	working := mk(brabo.RunWorking, t0.Add(time.Minute))
	expired := func(now time.Time, limit int) []string {
		var ids []string
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			runs, err := tx.ExpiredRuns(ctx, now, limit)
			for _, r := range runs {
				if r.ProjectID == p.ID {
					ids = append(ids, r.ID)
				}
			}
			return err
		}))
		return ids
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Run(ctx, late.ID)
		if err == nil && !got.Deadline.Equal(late.Deadline) {
			t.Errorf("deadline round trip: %v, want %v", got.Deadline, late.Deadline)
		}
		w, err2 := tx.Run(ctx, working.ID)
		if err2 == nil && !w.Deadline.IsZero() {
			t.Errorf("a working run kept a deadline: %v", w.Deadline)
		}
		u, err3 := tx.Run(ctx, uncapped.ID)
		if err3 == nil && !u.Deadline.IsZero() {
			t.Errorf("a run saved without a deadline reads %v", u.Deadline)
		}
		return errors.Join(err, err2, err3)
	}))
	if got := expired(t0.Add(30*time.Minute), 10); len(got) != 0 {
		t.Errorf("expired before any deadline: %v", got)
	}
	if got := expired(t0.Add(time.Hour), 10); len(got) != 1 || got[0] != early.ID {
		t.Errorf("expired at the first deadline: %v, want [%s]", got, early.ID)
	}
	if got := expired(t0.Add(3*time.Hour), 10); len(got) != 2 || got[0] != early.ID || got[1] != late.ID {
		t.Errorf("expired after both: %v, want [%s %s]", got, early.ID, late.ID)
	}
	if got := expired(t0.Add(3*time.Hour), 1); len(got) > 1 {
		t.Errorf("a limit of 1 listed %v", got)
	}
	var left bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		left, err = tx.LeaveWait(ctx, early.ID, early.AwaitingActionID, brabo.RunBlocked, t0.Add(3*time.Hour))
		return err
	}))
	if !left {
		t.Fatal("LeaveWait did not leave the wait")
	}
	if got := expired(t0.Add(3*time.Hour), 10); len(got) != 1 || got[0] != late.ID {
		t.Errorf("expired after a run left its wait: %v, want [%s]", got, late.ID)
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Run(ctx, early.ID)
		if err == nil && (!got.Deadline.IsZero() || got.State != brabo.RunBlocked) {
			t.Errorf("after LeaveWait: %+v", got)
		}
		return err
	}))
	late.State, late.AwaitingActionID = brabo.RunDone, ""
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, late) }))
	if got := expired(t0.Add(3*time.Hour), 10); len(got) != 0 {
		t.Errorf("expired after the last run was done: %v", got)
	}
}

// testWaitingAgents: the waiting runs of agents are listed with their
// agent and the awaited action's status, without their Ctx; runs that do
// not wait, and runs of other actors, are not.
func testWaitingAgents(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	agent := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "dev-api", PrincipalID: p.OwnerID, TokenHash: id("h")}
	decided := newAction(p, agent.ID)
	decided.Status = brabo.StatusExecuted
	pending := newAction(p, agent.ID)
	t0 := time.Now().UTC()
	runs := []*brabo.Run{
		{ID: id("run"), ProjectID: p.ID, ActorKey: brabo.AgentKey(agent.ID), State: brabo.RunAwaitingApproval, AwaitingActionID: decided.ID,
			Ctx: []byte(`{"big":"conversation"}`), UpdatedAt: t0},
		{ID: id("run"), ProjectID: p.ID, ActorKey: brabo.AgentKey(agent.ID), State: brabo.RunAwaitingPR, AwaitingActionID: pending.ID, UpdatedAt: t0.Add(time.Second)},
		{ID: id("run"), ProjectID: p.ID, ActorKey: brabo.AgentKey(agent.ID), State: brabo.RunAwaitingApproval, AwaitingActionID: "act_gone", UpdatedAt: t0.Add(2 * time.Second)},
		{ID: id("run"), ProjectID: p.ID, ActorKey: brabo.AgentKey(agent.ID), State: brabo.RunDone, UpdatedAt: t0},
		{ID: id("run"), ProjectID: p.ID, ActorKey: "lead:qa-lead", State: brabo.RunAwaitingApproval, AwaitingActionID: pending.ID, UpdatedAt: t0},
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateAgent(ctx, agent); err != nil {
			return err
		}
		for _, a := range []*brabo.ProposedAction{decided, pending} {
			if err := tx.InsertAction(ctx, a); err != nil {
				return err
			}
		}
		for _, r := range runs {
			if err := tx.SaveRun(ctx, r); err != nil {
				return err
			}
		}
		return nil
	}))
	var got []brabo.WaitingAgent
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		all, err := tx.WaitingAgents(ctx)
		for _, w := range all {
			if w.ProjectID == p.ID {
				got = append(got, w)
			}
		}
		return err
	}))
	if len(got) != 3 {
		t.Fatalf("%d waiting agents listed, want 3: %+v", len(got), got)
	}
	want := []struct {
		run    string
		state  brabo.RunState
		action string
		status brabo.ActionStatus
	}{{runs[0].ID, brabo.RunAwaitingApproval, decided.ID, brabo.StatusExecuted}, {runs[1].ID, brabo.RunAwaitingPR, pending.ID, brabo.StatusPending},
		{runs[2].ID, brabo.RunAwaitingApproval, "act_gone", ""}}
	for i, w := range want {
		g := got[i]
		if g.RunID != w.run || g.State != w.state || g.ActionID != w.action || g.ActionStatus != w.status ||
			g.Agent.ID != agent.ID || g.Agent.Name != "dev-api" || g.Agent.ProjectID != p.ID {
			t.Errorf("waiting agent %d: %+v, want run %s %s awaiting %s (%q) of %s", i, g, w.run, w.state, w.action, w.status, agent.ID)
		}
	}
}
