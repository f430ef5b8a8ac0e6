package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"github.com/brabo-dev/brabo/engine/gate"
	"github.com/brabo-dev/brabo/engine/wake"
)

// A gate area waiting longer than its project's wait cap fails its
// delegation with origin policy, naming the action nobody decided, and
// blocks the task; a decision after that resumes nothing. The deadline is
// the run's, in the store: the lead holds no timer.
func TestAnAreaWaitingPastTheWaitCapFailsWithOriginPolicy(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	// The project's own cap (30 minutes) wins over the lead's default.
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectAgents(ctx, w.prj.ID, 3, 1800) }); err != nil {
		t.Fatal(err)
	}
	c := enginetest.NewClock()
	auto, perf := newRecorder(t, "auto", autoScript), newRecorder(t, "perf", perfScript)
	l := w.lead(auto, perf)
	l.Now, l.WaitCap = c.Now, 24*time.Hour
	res, err := l.RunArea(ctx, w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s := suspended(t, w, res, perf)
	r := w.getRun(t, s.RunID)
	must(t, r.Deadline.Equal(r.UpdatedAt.Add(30*time.Minute)), "the area waits until %v, suspended at %v; want 30 minutes after", r.Deadline, r.UpdatedAt)

	sweep := &wake.Sweeper{Store: w.store, Expire: l, Now: c.Now, Log: quiet}
	c.Advance(29 * time.Minute)
	n, err := sweep.Once(ctx)
	must(t, err == nil && n == 0, "the sweep before the deadline: %d, %v", n, err)
	must(t, len(w.events(t, gate.EventDelegationFailed)) == 0, "the area failed before its deadline")
	c.Advance(2 * time.Minute)
	n, err = sweep.Once(ctx)
	must(t, err == nil && n == 1, "the sweep past the deadline: %d, %v", n, err)

	failed := w.events(t, gate.EventDelegationFailed)
	must(t, len(failed) == 1 && failed[0].ActorID == w.auto.ID, "delegation.failed events: %v", failed)
	p := payload(t, failed[0])
	must(t, p["origin"] == string(brabo.OriginPolicy) && p["subAgent"] == gate.QAAutomation &&
		contains(p["reason"].(string), "nobody decided on action "+s.ActionID) &&
		contains(p["reason"].(string), "terminal: ls && touch qa-report.txt") && contains(p["reason"].(string), "30m0s"),
		"delegation.failed: %s", failed[0].Payload)
	task := w.getTask(t)
	must(t, task.Status == brabo.TaskBlocked && task.BlockedOrigin == brabo.OriginPolicy &&
		contains(task.BlockedReason, s.ActionID), "the task after the cap: %+v", task)
	must(t, len(w.events(t, gate.EventGateCompleted)) == 0, "the area consolidated")
	r = w.getRun(t, s.RunID)
	must(t, r.State == brabo.RunBlocked && r.AwaitingActionID == "" && r.Deadline.IsZero(), "the run after the cap: %+v", r)
	must(t, !l.Waits(s.ActorKey, s.ActionID), "the lead still thinks it waits")
	n, err = sweep.Once(ctx)
	must(t, err == nil && n == 0, "a second sweep: %d, %v", n, err)

	// A late decision executes (the pipeline's business) and resumes
	// nothing: the area gives no verdict.
	if _, err := w.svc.Approve(ctx, s.ActionID, w.owner, w.svc.RevisionNow(ctx, s.ActionID)); err != nil {
		t.Fatal(err)
	}
	w.startWake(t, l, true)
	time.Sleep(100 * time.Millisecond)
	must(t, auto.Calls() == 1 && perf.Calls() == 0, "the models were called after the cap: %d, %d", auto.Calls(), perf.Calls())
	must(t, len(w.events(t, gate.EventDelegationCompleted)) == 0, "a verdict after the cap")
}

// A decision made before the sweep wins over the cap: the sweep leaves a
// run whose action is no longer pending to the wake worker.
func TestADecisionBeforeTheSweepWinsOverTheCap(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	c := enginetest.NewClock()
	auto, perf := newRecorder(t, "auto", autoScript), newRecorder(t, "perf", perfScript)
	l := w.lead(auto, perf)
	l.Now, l.WaitCap = c.Now, time.Hour
	res, err := l.RunArea(ctx, w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s := suspended(t, w, res, perf)
	if _, err := w.svc.Approve(ctx, s.ActionID, w.owner, w.svc.RevisionNow(ctx, s.ActionID)); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Hour)
	n, err := (&wake.Sweeper{Store: w.store, Expire: l, Now: c.Now, Log: quiet}).Once(ctx)
	must(t, err == nil && n == 0, "the sweep expired a decided wait: %d, %v", n, err)
	w.startWake(t, l, true)
	bothVerdicts(t, w, "qa-automation: PASS, report written")
}
