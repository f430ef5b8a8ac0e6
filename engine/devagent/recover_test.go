package devagent_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"github.com/brabo-dev/brabo/model"
)

// stuckModel holds the agent inside its first turn: its first call
// returns only once release is closed (then the model is done) or its
// context ends, as a process killed mid-turn never returns.
type stuckModel struct {
	entered  chan struct{} // closed when the first call starts
	release  chan struct{}
	once     sync.Once
	freed    sync.Once
	calls    atomic.Int32
	returned atomic.Int32
}

func newStuck(t *testing.T) *stuckModel {
	m := &stuckModel{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(m.free)
	return m
}

// free lets the stuck call return.
func (m *stuckModel) free() { m.freed.Do(func() { close(m.release) }) }

func (m *stuckModel) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	m.calls.Add(1)
	m.once.Do(func() { close(m.entered) })
	select {
	case <-m.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	m.returned.Add(1)
	return &model.Response{Message: model.Message{Role: model.Assistant, Content: "Done: made.txt exists."}, StopReason: model.StopEnd}, nil
}

func (m *stuckModel) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-m.entered:
	case <-time.After(15 * time.Second):
		t.Fatal("timed out waiting for the agent's turn to start")
	}
}

// workingRun waits for the agent's run to be working (in the stuck turn)
// and returns it.
func (w *world) workingRun(t *testing.T) *brabo.Run {
	t.Helper()
	var r *brabo.Run
	waitFor(t, "the run to be working", func() bool {
		r = w.agentRun(t)
		return r != nil && r.State == brabo.RunWorking
	})
	return r
}

// A process killed in the middle of a dev agent's turn (its store cut, so
// it records and releases nothing) leaves the run working; the process
// that takes the agent over once the lease ran out blocks that run's task
// with origin infra, once, instead of leaving it in progress forever.
func TestRecoverATurnCutByACrashIsBlockedByTheNextHolder(t *testing.T) {
	for _, st := range enginetest.Stores {
		t.Run(st.Name, func(t *testing.T) {
			w := newWorldOn(t, st.Open(t))
			const lease = 600 * time.Millisecond
			stuck := newStuck(t)
			a := w.instanceModel(t, "proc_a", lease, true, stuck)
			stuck.waitEntered(t)
			r := w.workingRun(t)
			b := w.instance(t, "proc_b", lease)

			a.store.down.Store(true)
			a.stop()
			must(t, w.agentRun(t).State == brabo.RunWorking, "the crash recorded something: %+v", w.agentRun(t))
			task := w.taskIn(t, brabo.TaskBlocked)
			must(t, b.mgr.Live(w.agent.ID), "the task was blocked, but not by the agent's new holder")
			must(t, task.BlockedOrigin == brabo.OriginInfra && strings.Contains(task.BlockedReason, r.ID) &&
				strings.Contains(task.BlockedReason, "mid-turn"), "the blocked task: %+v", task)
			must(t, w.agentRun(t).State == brabo.RunBlocked, "the run after the recovery: %+v", w.agentRun(t))
			time.Sleep(lease / 2) // several ticks: it is done once
			evs := w.events(t, "backlog.task_blocked")
			must(t, len(evs) == 1 && strings.Contains(string(evs[0].Payload), `"origin":"infra"`), "blocked events: %v", evs)
			must(t, b.rec.Calls() == 0, "the new holder called its model %d times", b.rec.Calls())
			must(t, stuck.returned.Load() == 0, "the crashed turn returned")
		})
	}
}

// A process that lost the agent's lease while in a turn (cut off from the
// database for longer than the lease) finishes that turn but records
// nothing of it: the new holder blocked the interrupted run, and that
// stays; the stale process's actor stops.
func TestRecoverAStaleHolderRecordsNothing(t *testing.T) {
	for _, st := range enginetest.Stores {
		t.Run(st.Name, func(t *testing.T) {
			w := newWorldOn(t, st.Open(t))
			const lease = 600 * time.Millisecond
			stuck := newStuck(t)
			a := w.instanceModel(t, "proc_a", lease, true, stuck)
			stuck.waitEntered(t)
			r := w.workingRun(t)
			b := w.instance(t, "proc_b", lease)

			a.store.down.Store(true) // no renewal: B takes the agent over
			blocked := w.taskIn(t, brabo.TaskBlocked)
			must(t, b.mgr.Live(w.agent.ID), "the new holder does not run the agent")
			a.store.down.Store(false) // A is back, still in its turn
			stuck.free()
			waitFor(t, "the stale actor to stop", func() bool { return !a.mgr.Live(w.agent.ID) })
			must(t, stuck.returned.Load() == 1 && stuck.calls.Load() == 1, "the stale turn: %d calls, %d returned",
				stuck.calls.Load(), stuck.returned.Load())
			time.Sleep(lease / 2)

			task := w.getTask(t)
			must(t, task.Status == brabo.TaskBlocked && task.BlockedReason == blocked.BlockedReason &&
				task.BlockedOrigin == brabo.OriginInfra, "the stale turn changed the task: %+v", task)
			run := w.agentRun(t)
			must(t, run.ID == r.ID && run.State == brabo.RunBlocked, "the stale turn changed the run: %+v", run)
			must(t, len(w.events(t, "backlog.task_blocked")) == 1, "blocked events: %v", w.events(t, "backlog.task_blocked"))
			for _, ev := range w.events(t, brabo.EventTaskStatusChanged) {
				must(t, !strings.Contains(string(ev.Payload), `"done"`), "the stale turn recorded the task done: %s", ev.Payload)
			}
			l := w.lease(t, w.agent.ID)
			must(t, l != nil && l.Owner == "proc_b", "the lease after the stale write: %+v", l)
			must(t, !a.mgr.Live(w.agent.ID) && b.mgr.Live(w.agent.ID), "the agent runs in A: %v, in B: %v",
				a.mgr.Live(w.agent.ID), b.mgr.Live(w.agent.ID))
		})
	}
}

// Outside lease mode (two managers started with Start on one store, as
// tests and benchmarks do) a working run of one is another manager's live
// turn: nobody blocks it, and it records its outcome.
func TestRecoverNothingOutsideLeaseMode(t *testing.T) {
	for _, st := range enginetest.Stores {
		t.Run(st.Name, func(t *testing.T) {
			w := newWorldOn(t, st.Open(t))
			stuck := newStuck(t)
			a := w.manager(stuck, 2*time.Hour)
			ctxA, stopA := context.WithCancel(context.Background())
			t.Cleanup(func() { stopA(); a.Wait() })
			if err := a.Start(ctxA, w.agent); err != nil {
				t.Fatal(err)
			}
			stuck.waitEntered(t)
			r := w.workingRun(t)
			recB := newRecorder(t, adrScript)
			b := w.manager(recB, 2*time.Hour)
			w.startAgent(t, b)
			waitFor(t, "B's actor to run", func() bool { return b.Live(w.agent.ID) })
			time.Sleep(300 * time.Millisecond) // many idle polls of B's actor

			must(t, w.agentRun(t).State == brabo.RunWorking, "the live turn's run changed: %+v", w.agentRun(t))
			must(t, w.getTask(t).Status == brabo.TaskInProgress, "the live turn's task changed: %+v", w.getTask(t))
			must(t, len(w.events(t, "backlog.task_blocked")) == 0, "a task was blocked")
			stuck.free()
			w.taskIn(t, brabo.TaskDone)
			must(t, w.agentRun(t).ID == r.ID && w.agentRun(t).State == brabo.RunDone, "the run: %+v", w.agentRun(t))
			must(t, recB.Calls() == 0, "B called its model %d times", recB.Calls())
		})
	}
}
