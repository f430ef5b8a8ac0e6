package devagent_test

import (
	"context"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// A waiting agent is a row, not a goroutine: past MaxLive live waits
// (none here) the actor parks once its wait is stored, the manager still
// runs the agent (Live) with no goroutine (not Running), and the decision
// resumes it through the wake worker's store path.
func TestAWaitingAgentPastTheLiveWaitsIsARowNotAGoroutine(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	mgr := w.manager(rec, time.Hour)
	mgr.MaxLive = -1
	w.startAgent(t, mgr)
	r, _ := suspended(t, w, rec)
	waitFor(t, "the actor to park", func() bool { return !mgr.Running(w.agent.ID) })
	must(t, mgr.Live(w.agent.ID), "a parked agent is not Live")
	must(t, w.agentRun(t).State == brabo.RunAwaitingApproval, "parking changed the run: %+v", w.agentRun(t))
	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	must(t, rec.Calls() == 4 && w.exists("made.txt"), "the parked agent's turn: %d model calls", rec.Calls())
	must(t, len(w.events(t, "dev.awaiting_approval")) == 1, "the run suspended more than once")
}

// The live waits are a bounded cache of the most recent ones: a second
// agent's wait pushes the first one's actor out (it parks), and both
// decisions still resume their agents, the recent one through its mailbox.
func TestTheLiveWaitsAreBoundedAndTheOldestParks(t *testing.T) {
	w := newWorld(t)
	second := w.newAgent(t, "dev-web", true)
	task2 := &brabo.Task{ID: brabo.NewID("tsk"), ProjectID: w.prj.ID, Title: "Second", Status: brabo.TaskTodo,
		CreatedAt: time.Now().UTC().Add(time.Second)}
	ctx := context.Background()
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateTask(ctx, task2) }); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, adrScript)
	mgr := w.manager(rec, time.Hour)
	mgr.MaxLive = 1
	w.startAgent(t, mgr) // the first agent takes the first task and waits
	r1 := w.awaiting(t)
	actx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() { cancel(); mgr.Wait() })
	if err := mgr.Start(actx, second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second agent to wait", func() bool { return mgr.Waits(second.ID) })
	waitFor(t, "the first agent to park", func() bool { return !mgr.Running(w.agent.ID) })
	must(t, mgr.Live(w.agent.ID) && mgr.Running(second.ID), "live: first %v, second running %v", mgr.Live(w.agent.ID), mgr.Running(second.ID))

	w.approve(t, r1.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	var r2 *brabo.ProposedAction
	for _, e := range w.events(t, "dev.awaiting_approval") {
		if e.ActorID == second.ID {
			r2 = w.action(t, e.ActionID)
		}
	}
	must(t, r2 != nil, "the second agent's wait is not in the log")
	w.approve(t, r2.ID)
	waitFor(t, "the second task to be done", func() bool { return taskByID(t, w, task2.ID).Status == brabo.TaskDone })
}

// In lease mode an idle agent has no goroutine either: the manager holds
// its lease (Live) and starts its actor when its project has a task to
// claim.
func TestInLeaseModeAnIdleAgentIsStartedWhenATaskComes(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	task := w.getTask(t)
	task.Status = brabo.TaskBlocked // nothing to claim yet
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.UpdateTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	a := w.instance(t, "proc_a", time.Minute)
	waitFor(t, "the lease to be held", func() bool { return a.mgr.Live(w.agent.ID) })
	time.Sleep(100 * time.Millisecond) // five ticks
	must(t, !a.mgr.Running(w.agent.ID) && a.rec.Calls() == 0, "an idle agent has a goroutine")
	task.Status = brabo.TaskTodo
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.UpdateTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	r, _ := suspended(t, w, a.rec)
	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	waitFor(t, "the idle agent's goroutine to go", func() bool { return !a.mgr.Running(w.agent.ID) })
	must(t, a.mgr.Live(w.agent.ID), "the agent is no longer held")
}

// The wait cap holds for an agent no goroutine holds: its deadline is in
// the store, and the sweep blocks the parked run, which the manager then
// forgets.
func TestTheWaitCapBlocksAParkedAgent(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	mgr := w.manager(rec, time.Hour)
	mgr.MaxLive = -1
	w.startAgent(t, mgr)
	r, _ := suspended(t, w, rec)
	waitFor(t, "the actor to park", func() bool { return !mgr.Running(w.agent.ID) })
	w.clock.Advance(61 * time.Minute)
	must(t, w.sweep(t, mgr) == 1, "the sweep did not expire the parked wait")
	task := w.taskIn(t, brabo.TaskBlocked)
	must(t, task.BlockedOrigin == brabo.OriginPolicy && contains(task.BlockedReason, r.AwaitingActionID), "blocked task: %+v", task)
	must(t, !mgr.Live(w.agent.ID), "the manager still counts the agent as waiting")
	must(t, rec.Calls() == 2, "the model was called after the cap")
}
