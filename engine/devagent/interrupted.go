package devagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/brabo-dev/brabo"
)

// BlockInterrupted blocks the tasks whose runs a stopped process left
// working, mid-turn: the conversation since the last suspension lived only
// in that process, so the task goes to the blocked queue with origin infra
// and a diagnostic, as the permissions page says of an engine restart,
// instead of staying in progress forever. It returns how many it blocked.
//
// Call it at start-up, before any actor starts, and only where one process
// owns the store (SQLite): with several processes another one may be in the
// middle of that turn.
func (m *Manager) BlockInterrupted(ctx context.Context) (int, error) {
	var runs []*brabo.Run
	if err := m.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		runs, err = tx.RunsInState(ctx, brabo.RunWorking)
		return err
	}); err != nil {
		return 0, fmt.Errorf("devagent: listing interrupted runs: %w", err)
	}
	n := 0
	var errs []error
	for _, r := range runs {
		if r.TaskID == "" {
			continue // not a dev agent's run (a dev lead's turn has no task)
		}
		st, err := m.loadRun(ctx, r.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if m.Manages != nil && !m.Manages(st.agent) {
			continue
		}
		why := fmt.Sprintf("brabo stopped during the agent's turn on this task (run %s); what it did since its last suspension "+
			"is in the event log, but its conversation is lost: reopen the task to start again", r.ID)
		if err := m.block(ctx, st, why, brabo.OriginInfra, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
