package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

func testTasks(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	now := time.Now().UTC()
	task := &brabo.Task{ID: id("task"), ProjectID: p.ID, Title: "Add login", Description: "…", Status: brabo.TaskTodo, CreatedAt: now}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.CreateTask(ctx, task) }))
	task.Status, task.BlockedReason, task.BlockedOrigin, task.AgentID = brabo.TaskBlocked, "nobody decided", brabo.OriginPolicy, "agt_1"
	task.UpdatedAt = now.Add(time.Minute)
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.UpdateTask(ctx, task) }))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Task(ctx, task.ID)
		if err != nil {
			return err
		}
		if got.Status != brabo.TaskBlocked || got.BlockedOrigin != brabo.OriginPolicy || got.BlockedReason != "nobody decided" ||
			got.AgentID != "agt_1" || !got.UpdatedAt.After(got.CreatedAt) || got.Title != "Add login" {
			t.Errorf("task round trip: %+v", got)
		}
		list, err := tx.Tasks(ctx, p.ID)
		if err != nil || len(list) != 1 {
			t.Errorf("tasks: %v %v", list, err)
		}
		return nil
	}))
	// Claiming: only a todo task, once.
	todo := &brabo.Task{ID: id("task"), ProjectID: p.ID, Title: "Fix", Status: brabo.TaskTodo, CreatedAt: now}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.CreateTask(ctx, todo) }))
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			must(t, s.Update(ctx, func(tx brabo.Tx) error {
				ok, err := tx.ClaimTask(ctx, todo.ID, id("agt"), now)
				if ok {
					wins.Add(1)
				}
				return err
			}))
		}(i)
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d agents claimed one task, want 1", wins.Load())
	}
	var blockedClaim bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		blockedClaim, err = tx.ClaimTask(ctx, task.ID, "agt_x", now) // blocked, not todo
		return err
	}))
	if blockedClaim {
		t.Error("a blocked task was claimed")
	}
	err := s.Update(ctx, func(tx brabo.Tx) error { return tx.UpdateTask(ctx, &brabo.Task{ID: "nope", Status: brabo.TaskDone}) })
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("updating a missing task: %v", err)
	}
}

func testRunsSuspendAndClaim(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	run := &brabo.Run{ID: id("run"), ProjectID: p.ID, ActorKey: "agent:agt_1", State: brabo.RunWorking}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, run) }))
	// Suspending: the state, the awaited action and the loop's Ctx.
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if _, err := tx.AwaitingRun(ctx, "agent:agt_1", ""); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("a working run was found awaiting: %v", err)
		}
		return nil
	}))
	run.State, run.AwaitingActionID = brabo.RunAwaitingApproval, "act_9"
	run.Ctx = json.RawMessage(`{"version":1,"messages":[{"role":"user","content":"hi"}]}`)
	run.UpdatedAt = time.Now().UTC()
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, run) }))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.AwaitingRun(ctx, "agent:agt_1", "act_9")
		if err != nil {
			return err
		}
		var a, b any
		json.Unmarshal(got.Ctx, &a)
		json.Unmarshal(run.Ctx, &b)
		if got.ID != run.ID || got.State != brabo.RunAwaitingApproval || got.LeaseOwner != "" || !jsonEqual(a, b) {
			t.Errorf("awaiting run: %+v", got)
		}
		if _, err := tx.AwaitingRun(ctx, "agent:agt_2", "act_9"); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("another actor's key found the run: %v", err)
		}
		if w, err := tx.WaitingRun(ctx, "agent:agt_1"); err != nil || w.ID != run.ID {
			t.Errorf("WaitingRun: %v %v", w, err)
		}
		if _, err := tx.WaitingRun(ctx, "agent:agt_2"); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("WaitingRun of an actor with no run: %v", err)
		}
		waiting, err := tx.RunsInState(ctx, brabo.RunAwaitingApproval)
		if err != nil || len(waiting) != 1 {
			t.Errorf("runs awaiting approval: %v %v", waiting, err)
		}
		return nil
	}))
	// Saving again replaces every field (a run may change hands, e.g. a
	// gate area moving to its next sub-agent).
	moved := *run
	moved.ActorKey = "agent:agt_2"
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, &moved) }))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if _, err := tx.AwaitingRun(ctx, "agent:agt_2", "act_9"); err != nil {
			t.Errorf("the run saved under a new actor key is not found by it: %v", err)
		}
		return nil
	}))
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, run) }))
	// Leaving the wait is a claim too: one of several racers wins, and a
	// run that no longer awaits the action cannot be left again.
	var left atomic.Int32
	var lw sync.WaitGroup
	for i := 0; i < 6; i++ {
		lw.Add(1)
		go func() {
			defer lw.Done()
			must(t, s.Update(ctx, func(tx brabo.Tx) error {
				ok, err := tx.LeaveWait(ctx, run.ID, "act_9", brabo.RunWorking, time.Now())
				if ok {
					left.Add(1)
				}
				return err
			}))
		}()
	}
	lw.Wait()
	if left.Load() != 1 {
		t.Fatalf("%d racers left the wait, want 1", left.Load())
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Run(ctx, run.ID)
		if err == nil && (got.State != brabo.RunWorking || got.AwaitingActionID != "") {
			t.Errorf("after LeaveWait: %+v", got)
		}
		return err
	}))
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, run) })) // awaiting again
	// Two processes race for the run: one lease wins; it runs out; then
	// the other may take it.
	now := time.Now()
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			must(t, s.Update(ctx, func(tx brabo.Tx) error {
				ok, err := tx.ClaimRun(ctx, run.ID, id("proc"), now, time.Minute)
				if ok {
					wins.Add(1)
				}
				return err
			}))
		}(i)
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d processes claimed the run, want 1", wins.Load())
	}
	var late bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		late, err = tx.ClaimRun(ctx, run.ID, "proc_late", now.Add(2*time.Minute), time.Minute)
		return err
	}))
	if !late {
		t.Fatal("an expired lease was not claimable")
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.ReleaseRun(ctx, run.ID, "proc_late") }))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Run(ctx, run.ID)
		if err == nil && (got.LeaseOwner != "" || !got.LeaseUntil.IsZero()) {
			t.Errorf("released run still leased: %+v", got)
		}
		return err
	}))
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
