// Package wake delivers settled actions to the agents that wait for them
// (DESIGN §7.3).
//
// The worker claims outbox messages and routes task.action_settled and
// task.pr_settled by the proposing actor's key and the action id to the run
// that awaits them: to the live actor's mailbox when this process holds it,
// otherwise by leasing the run and resuming it from its stored Ctx. So any
// process that shares the store can resume any run, and no routing between
// processes is needed. A store signal is the fast path; a short poll is the
// reliable one. Delivery is at least once: receivers are idempotent on the
// action id.
package wake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/brabo-dev/brabo"
)

// Local delivers a message to an actor this process holds; it reports
// false when the actor is not live here.
type Local interface {
	Deliver(actorKey string, msg brabo.OutboxMessage) bool
}

// Resumer resumes a run from its stored state with the settled message.
// It returns once the run has suspended again or ended, with the run
// saved; an error leaves the message to be delivered again later.
type Resumer interface {
	Resume(ctx context.Context, run *brabo.Run, msg brabo.OutboxMessage) error
}

// OnceResumer is a Resumer that resumes a run at most once by itself,
// whoever else tries at the same time (the dev agents: leaving a wait is a
// conditional update, Tx.LeaveWait): the worker then claims no run lease
// before it resumes, a write less on the path of every decision that
// reaches a waiting agent with no live actor.
type OnceResumer interface {
	ResumesOnce(run *brabo.Run) bool
}

// Worker routes settled messages to waiting runs.
type Worker struct {
	Store brabo.Store
	// Owner names this process in run leases; unique per process. It is
	// also the owner of the agent leases this process holds
	// (devagent.Manager.Owner): the worker leaves the messages of an agent
	// another process holds to that process (ClaimOutboxFor), whose actor
	// waits for them; those of an agent nobody holds any more (its process
	// died) it takes, and resumes from the store.
	Owner  string
	Local  Local
	Resume Resumer
	// Lease is how long a claimed message or run is this worker's (30 s
	// when 0); a worker that dies mid-delivery is replaced after it.
	Lease time.Duration
	// Poll is the reliable path's period (500 ms when 0).
	Poll time.Duration
	// Batch bounds the messages claimed at once (100 when 0).
	Batch int
	Now   func() time.Time
	Log   *slog.Logger
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Worker) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.Default()
}

func (w *Worker) lease() time.Duration {
	if w.Lease > 0 {
		return w.Lease
	}
	return 30 * time.Second
}

// Run delivers until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	signal, cancel := w.Store.Subscribe("")
	defer cancel()
	poll := w.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		for {
			n, err := w.Once(ctx)
			if err != nil && ctx.Err() == nil {
				w.log().Error("wake: delivering settled actions", "err", err)
			}
			if n == 0 || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-signal:
		case <-tick.C:
		}
	}
}

// Once claims one batch of messages and delivers them; it returns how
// many it claimed. It claims no message of an agent whose lease another
// owner holds.
func (w *Worker) Once(ctx context.Context) (int, error) {
	var msgs []brabo.OutboxMessage
	err := w.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		batch := w.Batch
		if batch <= 0 {
			batch = 100
		}
		msgs, err = tx.ClaimOutboxFor(ctx, w.Owner, w.now(), w.lease(), batch)
		return err
	})
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, m := range msgs {
		if err := w.deliver(ctx, m); err != nil {
			errs = append(errs, fmt.Errorf("message %d (%s of %s): %w", m.ID, m.Topic, m.ActionID, err))
		}
	}
	return len(msgs), errors.Join(errs...)
}

// deliver routes one message. On success it is marked delivered; on error
// it stays claimed until its lease runs out, and is then tried again.
func (w *Worker) deliver(ctx context.Context, m brabo.OutboxMessage) error {
	var run *brabo.Run
	err := w.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		run, err = tx.AwaitingRun(ctx, m.ActorKey, m.ActionID)
		return err
	})
	switch {
	case errors.Is(err, brabo.ErrNotFound):
		// Nobody waits for it (a human's proposal, or a run already
		// resumed by an earlier delivery): done.
		return w.delivered(ctx, m)
	case err != nil:
		return err
	}
	if w.Local != nil && w.Local.Deliver(m.ActorKey, m) {
		return w.delivered(ctx, m)
	}
	if w.Resume == nil {
		return errors.New("no resumer is configured")
	}
	if o, ok := w.Resume.(OnceResumer); ok && o.ResumesOnce(run) {
		if err := w.Resume.Resume(ctx, run, m); err != nil {
			return fmt.Errorf("resuming run %s: %w", run.ID, err)
		}
		return w.delivered(ctx, m)
	}
	claimed := false
	err = w.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		claimed, err = tx.ClaimRun(ctx, run.ID, w.Owner, w.now(), w.lease())
		return err
	})
	if err != nil {
		return err
	}
	if !claimed {
		return fmt.Errorf("run %s is leased by another process", run.ID)
	}
	defer func() {
		release := context.WithoutCancel(ctx)
		if err := w.Store.Update(release, func(tx brabo.Tx) error { return tx.ReleaseRun(release, run.ID, w.Owner) }); err != nil {
			w.log().Error("wake: releasing a run", "run", run.ID, "err", err)
		}
	}()
	if err := w.Resume.Resume(ctx, run, m); err != nil {
		return fmt.Errorf("resuming run %s: %w", run.ID, err)
	}
	return w.delivered(ctx, m)
}

func (w *Worker) delivered(ctx context.Context, m brabo.OutboxMessage) error {
	return w.Store.Update(ctx, func(tx brabo.Tx) error { return tx.MarkDelivered(ctx, m.ID, w.now()) })
}
