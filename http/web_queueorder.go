package http

import (
	"context"
	"errors"

	"github.com/brabo-dev/brabo"
)

// The queue shows risky cards first across all its pages, not only within
// one (issue 28, "sorts first"; docs/web.md, "Risky cards first"): before
// a page is read, the newest queueSortBound pending actions are ordered,
// risky first and newest first within each group; the page is a slice of
// that order. Past the bound the queue goes on newest first.

// queueSortBound is how many pending actions the queue orders by risk:
// ten pages. An agent may hold 100 pending actions (pipeline's
// DefaultMaxPending), so it covers ten agents at their limit.
const queueSortBound = 10 * queuePageSize

// queueOrder returns the pending actions of the page (page, from 1) in
// the queue's order, and how many are pending in all.
func (s *Server) queueOrder(ctx context.Context, m *brabo.Member, page int) ([]*brabo.ProposedAction, int, error) {
	from := (page - 1) * queuePageSize
	first, total, err := s.Actions.PendingOf(ctx, m.ID, queuePageSize, 0)
	switch {
	case err != nil:
		return nil, total, err
	case total <= queuePageSize:
		// One page: its cards are ordered where they are shown (riskyFirst).
		if page > 1 {
			return nil, total, nil
		}
		return first, total, nil
	case from >= min(total, queueSortBound):
		// Past the ordered actions: newest first, as stored.
		return s.Actions.PendingOf(ctx, m.ID, queuePageSize, from)
	}
	// The ids only, in order: a write's content may be large, so only the
	// page's actions are read again whole.
	var risky, plain []string
	sort := func(actions []*brabo.ProposedAction) {
		for _, a := range actions {
			if isRisky(ctx, s, a) {
				risky = append(risky, a.ID)
			} else {
				plain = append(plain, a.ID)
			}
		}
	}
	sort(first)
	for off := queuePageSize; off < min(total, queueSortBound); off += queuePageSize {
		more, _, err := s.Actions.PendingOf(ctx, m.ID, min(queuePageSize, queueSortBound-off), off)
		if err != nil {
			return nil, total, err
		}
		if len(more) == 0 {
			break
		}
		sort(more)
	}
	order := append(risky, plain...)
	end := min(from+queuePageSize, len(order))
	if from >= end {
		return nil, total, nil
	}
	out := make([]*brabo.ProposedAction, 0, end-from)
	for _, id := range order[from:end] {
		a, err := s.Actions.Action(ctx, id)
		switch {
		case errors.Is(err, brabo.ErrNotFound):
			continue
		case err != nil:
			return nil, total, err
		case a.Status != brabo.StatusPending:
			continue // decided meanwhile
		}
		out = append(out, a)
	}
	return out, total, nil
}

// isRisky says whether a's card is marked risky (brabo.Risks). A write's
// risks read the file on disk (a file made executable since the proposal
// is flagged now), so its card is computed now, from the cache while the
// file is as it was; every other type's risks come from its type, its
// payload and its decision, which do not move, and are read from the
// stored action.
func isRisky(ctx context.Context, s *Server, a *brabo.ProposedAction) bool {
	if a.Type == brabo.WriteFile {
		return len(brabo.Risks(s.Actions.CardNow(ctx, a))) > 0
	}
	return len(brabo.Risks(a)) > 0
}
