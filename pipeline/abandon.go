package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// maxAbandonReason bounds the hook's reason for giving up.
const maxAbandonReason = 512

// errAbandoned is deciding an action its agent no longer waits for.
func errAbandoned(a *brabo.ProposedAction) error {
	return brabo.Errorf(brabo.CodeAbandoned, "action %s is abandoned: the agent is no longer waiting (%s)", a.ID, a.Reason)
}

// Abandon records that the agent that proposed a pending external action
// stopped waiting for it (its hook's deadline passed, or the agent stopped
// the hook): the action becomes abandoned, leaves the queue, records
// action.abandoned by the agent, and a later approve or deny is 409
// abandoned, so no approval records a run that cannot happen. An action
// decided meanwhile is 409 with its status (already_approved,
// action_already_denied): the race went to the human.
func (s *Service) Abandon(ctx context.Context, actionID string, agent *brabo.Agent, reason string) (*brabo.ProposedAction, error) {
	reason = strings.ToValidUTF8(strings.TrimSpace(reason), "\uFFFD")
	if reason == "" {
		reason = "the agent stopped waiting"
	}
	if len(reason) > maxAbandonReason {
		cut := maxAbandonReason
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut]
	}
	reason = "abandoned: " + reason
	var a *brabo.ProposedAction
	now := s.now()
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		if a, err = tx.Action(ctx, actionID); err != nil {
			return err
		}
		if agent == nil || a.ActorKind != "agent" || a.ActorID != agent.ID {
			return fmt.Errorf("action %s: %w", actionID, brabo.ErrNotFound)
		}
		if !a.External() {
			return invalid("action %s is run by brabo: only an action its agent runs itself is abandoned", a.ID)
		}
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusPending},
			brabo.ActionUpdate{Status: brabo.StatusAbandoned, Reason: reason, SettledAt: now})
		if err != nil {
			return err
		}
		if !ok {
			switch a.Status {
			case brabo.StatusAbandoned:
				return nil // said already
			case brabo.StatusDenied:
				return brabo.Errorf(brabo.CodeActionAlreadyDenied, "action %s was denied: %s", a.ID, a.Reason)
			}
			return brabo.Errorf(brabo.CodeAlreadyApproved, "action %s is %s: it was decided before the agent gave up", a.ID, a.Status)
		}
		a.Status, a.Reason, a.SettledAt = brabo.StatusAbandoned, reason, now
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventActionAbandoned, ActorID: agent.ID,
			ActionID: a.ID, Payload: mustJSON(map[string]any{"reason": reason}), CreatedAt: now})
	})
	if err != nil {
		return nil, err
	}
	s.log().Info("external action abandoned", "action", a.ID, "reason", reason)
	return a, nil
}

// abandonGrace is how long after a hook's announced deadline a decision
// is still taken: the hook's last poll may be answered that late.
const abandonGrace = 5 * time.Second

// expireWait abandons a pending external action whose hook's announced
// deadline (Execution.WaitUntil) has passed: its agent is no longer
// waiting, whether or not the hook could say so (killed, or brabo was
// down), so the human's decision is 409 abandoned. It commits the
// abandonment (action.abandoned by system) before it answers.
func (s *Service) expireWait(ctx context.Context, a *brabo.ProposedAction) error {
	if a.Status != brabo.StatusPending || !a.External() || a.Execution.WaitUntil.IsZero() ||
		!s.now().After(a.Execution.WaitUntil.Add(abandonGrace)) {
		return nil
	}
	if _, err := s.abandonExpired(ctx, a); err != nil {
		return err
	}
	return errAbandoned(a)
}

// expiredReason is the reason of an action abandoned at its hook's
// deadline.
const expiredReason = "abandoned: the hook's deadline passed with no decision"

// abandonExpired makes the pending action abandoned by system and records
// action.abandoned; it reports false when the action had left pending.
func (s *Service) abandonExpired(ctx context.Context, a *brabo.ProposedAction) (bool, error) {
	now := s.now()
	won := false
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusPending},
			brabo.ActionUpdate{Status: brabo.StatusAbandoned, Reason: expiredReason, SettledAt: now})
		if err != nil || !ok {
			return err
		}
		won = true
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventActionAbandoned, ActorID: "system",
			ActionID: a.ID, Payload: mustJSON(map[string]any{"reason": expiredReason}), CreatedAt: now})
	})
	if err == nil && won {
		a.Status, a.Reason, a.SettledAt = brabo.StatusAbandoned, expiredReason, now
	}
	return won, err
}

// SweepAbandoned makes abandoned every pending external action whose
// hook's announced deadline (and abandonGrace) has passed, so that it
// leaves the queue even if no one decides it; it returns how many. brabo
// serve runs it every few seconds (SweepEvery).
func (s *Service) SweepAbandoned(ctx context.Context) (int, error) {
	var expired []*brabo.ProposedAction
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		expired, err = tx.ExpiredWaits(ctx, s.now().Add(-abandonGrace), 500)
		return err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range expired {
		won, err := s.abandonExpired(ctx, a)
		if err != nil {
			return n, err
		}
		if won {
			n++
			s.log().Info("external action abandoned at its hook's deadline", "action", a.ID)
		}
	}
	return n, nil
}

// SweepEvery is how often brabo serve runs SweepAbandoned.
const SweepEvery = 2 * time.Second
