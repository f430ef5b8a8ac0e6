package wake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
)

// Expirer blocks a run whose wait cap ran out, as its kind of agent
// blocks (a dev agent's task, a gate area's delegation, a dev lead's
// turn), with origin policy and why as the reason. It leaves the wait
// with a conditional update (Tx.LeaveWait), so that of a decision and the
// cap, or of two processes sweeping, exactly one moves the run; a run
// that no longer waits is not an error.
type Expirer interface {
	Expire(ctx context.Context, run *brabo.Run, why string) error
}

// ErrNotHere is what an Expirer returns for a run it cannot expire now:
// another process must (it holds the agent's lease), or the run is busy
// here (being resumed); the sweeper leaves it, without logging an error,
// for that process's sweep or its own next one.
var ErrNotHere = errors.New("wake: the run's agent is held by another process")

// DefaultSweep is how often the Sweeper looks for expired waits.
const DefaultSweep = 5 * time.Second

// Sweeper enforces the wait caps (DESIGN §7.2): every waiting
// run keeps its deadline in the store (Run.Deadline, set when it
// suspends), and the sweeper blocks the runs still waiting past it. No
// live actor holds a timer, so a wait is capped whether or not any
// process holds its agent in memory, and after a restart too. Any number
// of processes may sweep one store: leaving a wait is conditional.
//
// A run whose awaited action is no longer pending (a human decided; the
// wake worker is delivering it) is left alone: a decision made counts,
// and it resumes the run.
type Sweeper struct {
	Store  brabo.Store
	Expire Expirer
	// Now is the time deadlines are compared with (time.Now when nil);
	// tests use a fake clock.
	Now func() time.Time
	// Poll is the period of Run (DefaultSweep when 0).
	Poll time.Duration
	// Batch bounds the runs expired per pass (500 when 0).
	Batch int
	Log   *slog.Logger
}

func (s *Sweeper) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Sweeper) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Run sweeps until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	poll := s.Poll
	if poll <= 0 {
		poll = DefaultSweep
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if _, err := s.Once(ctx); err != nil && ctx.Err() == nil {
			s.log().Error("wake: expiring waits past their cap", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once expires the runs whose deadline has passed and whose awaited
// action is still pending; it returns how many it expired.
func (s *Sweeper) Once(ctx context.Context) (int, error) {
	if s.Expire == nil {
		return 0, errors.New("wake: the sweeper needs an Expirer")
	}
	now := s.now()
	batch := s.Batch
	if batch <= 0 {
		batch = 500
	}
	var runs []*brabo.Run
	if err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		runs, err = tx.ExpiredRuns(ctx, now, batch)
		return err
	}); err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, r := range runs {
		var act *brabo.ProposedAction
		err := s.Store.View(ctx, func(tx brabo.Tx) error {
			var err error
			act, err = tx.Action(ctx, r.AwaitingActionID)
			return err
		})
		switch {
		case errors.Is(err, brabo.ErrNotFound):
			act = nil
		case err != nil:
			errs = append(errs, err)
			continue
		case act.Status != brabo.StatusPending:
			continue // decided: the wake worker resumes the run with it
		}
		why := NobodyDecided(r, act)
		switch err := s.Expire.Expire(ctx, r, why); {
		case errors.Is(err, ErrNotHere), errors.Is(err, ErrNoRoute):
			// Another process runs that agent, or that kind of agent:
			// its sweep expires the run.
		case err != nil:
			errs = append(errs, fmt.Errorf("run %s: %w", r.ID, err))
		default:
			s.log().Info("wake: a wait reached its cap", "run", r.ID, "actor", r.ActorKey, "action", r.AwaitingActionID)
			n++
		}
	}
	return n, errors.Join(errs...)
}

// NobodyDecided is the reason a run blocked by its wait cap gives: which
// action nobody decided (its id, type and what it would do), and the
// cap.
func NobodyDecided(r *brabo.Run, a *brabo.ProposedAction) string {
	what := "action " + r.AwaitingActionID
	if a != nil {
		what += " (" + string(a.Type)
		if d := describe(a); d != "" {
			what += ": " + d
		}
		what += ")"
	} else {
		what += " (no longer recorded)"
	}
	capText := ""
	if !r.Deadline.IsZero() && r.Deadline.After(r.UpdatedAt) {
		capText = " of " + r.Deadline.Sub(r.UpdatedAt).Round(time.Second).String()
	}
	return fmt.Sprintf("nobody decided on %s within the wait cap%s", what, capText)
}

// describe says in a few words what an action would do.
func describe(a *brabo.ProposedAction) string {
	p := a.Payload
	var s string
	switch {
	case p.Command != "":
		s = p.Command
	case p.Path != "":
		s = p.Path
	case p.Title != "":
		s = p.Title
	case p.Branch != "":
		s = p.Branch
	case p.PR != 0:
		s = fmt.Sprintf("pull request #%d", p.PR)
	case p.Tool != "":
		s = p.Tool
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}
