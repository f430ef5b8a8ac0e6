package pipeline

import (
	"context"

	"github.com/brabo-dev/brabo"
)

// Reads of actions and events for the API and the web page, each from one
// snapshot.

// Action reads one action; whether the caller may see it is the caller's
// to check (VisibleAction checks it).
func (s *Service) Action(ctx context.Context, id string) (*brabo.ProposedAction, error) {
	return view(ctx, s, func(tx brabo.Tx) (*brabo.ProposedAction, error) { return tx.Action(ctx, id) })
}

// VisibleAction reads an action the actor may read: an agent its own, a
// member those of its projects. Anything else is brabo.ErrNotFound.
func (s *Service) VisibleAction(ctx context.Context, by brabo.Actor, id string) (*brabo.ProposedAction, error) {
	return view(ctx, s, func(tx brabo.Tx) (*brabo.ProposedAction, error) {
		a, err := tx.Action(ctx, id)
		if err != nil {
			return nil, err
		}
		if by.Agent != nil {
			if a.ActorID != by.Agent.ID {
				return nil, brabo.ErrNotFound
			}
			return a, nil
		}
		if by.Member == nil {
			return nil, brabo.ErrNotFound
		}
		role, err := tx.Role(ctx, a.ProjectID, by.Member.ID)
		if err == nil && role == "" {
			return nil, brabo.ErrNotFound
		}
		return a, err
	})
}

// Actions reads one page of the actions f selects (its Limit and Offset)
// and how many it selects in all, so a list longer than a page is never
// cut silently.
func (s *Service) Actions(ctx context.Context, f brabo.ActionFilter) ([]*brabo.ProposedAction, int, error) {
	var out []*brabo.ProposedAction
	var total int
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if total, err = tx.CountActions(ctx, f); err != nil {
			return err
		}
		out, err = tx.Actions(ctx, f)
		return err
	})
	return out, total, err
}

// PendingOf reads one page (limit, offset) of the pending actions of every
// project the member has a role in, newest first, and their count; none
// for a member of no project.
func (s *Service) PendingOf(ctx context.Context, memberID string, limit, offset int) ([]*brabo.ProposedAction, int, error) {
	var out []*brabo.ProposedAction
	var total int
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		ms, err := tx.Memberships(ctx, memberID)
		if err != nil || len(ms) == 0 {
			return err
		}
		f := brabo.ActionFilter{Status: brabo.StatusPending, Limit: limit, Offset: offset}
		for _, x := range ms {
			f.ProjectIDs = append(f.ProjectIDs, x.ProjectID)
		}
		if total, err = tx.CountActions(ctx, f); err != nil {
			return err
		}
		out, err = tx.Actions(ctx, f)
		return err
	})
	return out, total, err
}

// PR reads one pull request of the project.
func (s *Service) PR(ctx context.Context, projectID string, number int64) (*brabo.PullRequest, error) {
	return view(ctx, s, func(tx brabo.Tx) (*brabo.PullRequest, error) { return tx.PR(ctx, projectID, number) })
}

// PRs lists the project's pull requests.
func (s *Service) PRs(ctx context.Context, projectID string) ([]*brabo.PullRequest, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]*brabo.PullRequest, error) { return tx.PRs(ctx, projectID) })
}

// Events reads up to limit events of the project after seq after.
func (s *Service) Events(ctx context.Context, projectID string, after int64, limit int) ([]brabo.Event, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]brabo.Event, error) { return tx.Events(ctx, projectID, after, limit) })
}

// ActionEvents reads the events of one action, in their order.
func (s *Service) ActionEvents(ctx context.Context, projectID, actionID string) ([]brabo.Event, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]brabo.Event, error) { return tx.ActionEvents(ctx, projectID, actionID) })
}

// LastEventSeqs reads, from one snapshot, the newest event's sequence
// number of every project the member has a role in (0 for none yet).
func (s *Service) LastEventSeqs(ctx context.Context, memberID string) (map[string]int64, error) {
	return view(ctx, s, func(tx brabo.Tx) (map[string]int64, error) {
		out := map[string]int64{}
		ms, err := tx.Memberships(ctx, memberID)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if out[m.ProjectID], err = tx.LastEventSeq(ctx, m.ProjectID); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}

// Subscribe receives a value (coalesced) after each commit that touches
// the topic: a project id, or brabo.AuthSignal for any revocation.
func (s *Service) Subscribe(topic string) (<-chan struct{}, func()) { return s.Store.Subscribe(topic) }
