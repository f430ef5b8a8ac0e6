package devagent_test

import (
	"context"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// Two processes on one store (DESIGN §7.3): the agent's actor in process A
// suspends; process B, which restored the same waiting run, gets the
// decision and resumes it; A's stale copy, waking at its wait cap, sees the
// run was taken up and neither resumes it again nor blocks the task.
func TestTwoProcessesResumeTheRunOnce(t *testing.T) {
	w := newWorld(t)
	recA := newRecorder(t, adrScript)
	a := w.manager(recA, 2*time.Hour)
	ctxA, stopA := context.WithCancel(context.Background())
	t.Cleanup(func() { stopA(); a.Wait() })
	if err := a.Start(ctxA, w.agent); err != nil { // A has no wake worker: B delivers
		t.Fatal(err)
	}
	r, _ := suspended(t, w, recA)

	recB := newRecorder(t, adrScript)
	b := w.manager(recB, 2*time.Hour)
	w.startAgent(t, b) // B's actor restores the waiting run; B's wake worker runs
	waitFor(t, "B's actor to restore the waiting run", func() bool { return b.Live(w.agent.ID) })
	time.Sleep(50 * time.Millisecond)

	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	calls := recA.Calls() + recB.Calls()
	must(t, recB.Calls() > 0, "B never resumed the run (A: %d calls, B: %d)", recA.Calls(), recB.Calls())

	// A's copy wakes at its cap: the run is no longer its to resume or block.
	w.clock.Advance(3 * time.Hour)
	time.Sleep(200 * time.Millisecond)
	must(t, w.getTask(t).Status == brabo.TaskDone, "A's stale wait changed the task: %+v", w.getTask(t))
	must(t, recA.Calls()+recB.Calls() == calls, "the run was resumed twice (%d model calls, then %d)", calls, recA.Calls()+recB.Calls())
	must(t, len(w.events(t, "backlog.task_blocked")) == 0, "a task_blocked event was recorded")
}
