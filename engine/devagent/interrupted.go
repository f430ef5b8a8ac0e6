package devagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

// BlockInterrupted blocks the tasks whose runs a stopped process left
// working, mid-turn: the conversation since the last suspension lived only
// in that process, so the task goes to the blocked queue with origin infra
// and a diagnostic, as the permissions page says of an engine restart,
// instead of staying in progress forever. It returns how many it blocked.
//
// Call it at start-up, before any actor starts (and before Run), and only
// where one process owns the store (SQLite): with several processes
// another one may be in the middle of that turn. There, under Run, each
// agent's holder does it for its agent instead (recoverInterrupted).
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
		why := fmt.Sprintf("brabo stopped during the agent's turn on this task (run %s); %s", r.ID, interruptedTail)
		if err := m.block(ctx, st, why, brabo.OriginInfra, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// interruptedTail ends the diagnostic of a task whose turn was cut.
const interruptedTail = "what it did since its last suspension is in the event log, but its conversation is lost: " +
	"reopen the task to start again"

// recoverInterrupted is BlockInterrupted in lease mode (Run, every tick),
// where several processes may share the store: it blocks the runs left
// working by a turn that no live process runs, of the agents this manager
// holds, with origin infra and the same kind of diagnostic. That no live
// process runs it follows from the lease: this process holds the agent's
// lease, no actor of the agent runs here, the key's lock is held (no
// resume from the store runs here), and every write that starts or
// records a turn elsewhere is fenced by the lease (fence), so a process
// still in such a turn after it lost the lease can record nothing of it.
// Outside lease mode it is not called: there another manager on the store
// may be in that very turn.
func (m *Manager) recoverInterrupted(ctx context.Context) {
	var runs []*brabo.Run
	if err := m.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		runs, err = tx.RunsInState(ctx, brabo.RunWorking)
		return err
	}); err != nil {
		m.log().Error("devagent: looking for interrupted turns", "err", err)
		return
	}
	for _, r := range runs {
		id, ok := brabo.AgentOfKey(r.ActorKey)
		if !ok || r.TaskID == "" || !m.holds(id) {
			continue
		}
		m.recoverRun(ctx, r)
	}
}

// recoverRun blocks one run left working, unless an actor of its agent
// runs here or a resume from the store holds its key.
func (m *Manager) recoverRun(ctx context.Context, r *brabo.Run) {
	l := m.keyLock(r.ActorKey)
	if !l.TryLock() {
		return
	}
	defer l.Unlock()
	m.mu.Lock()
	_, live := m.actors[r.ActorKey]
	m.mu.Unlock()
	if live {
		return
	}
	st, err := m.loadRun(ctx, r.ID)
	if err != nil {
		m.log().Error("devagent: loading an interrupted run", "run", r.ID, "err", err)
		return
	}
	if st.run.State != brabo.RunWorking {
		return // recorded meanwhile
	}
	why := fmt.Sprintf("the brabo process running the agent's turn on this task (run %s) stopped or lost the agent "+
		"mid-turn; %s", r.ID, interruptedTail)
	switch err := m.block(ctx, st, why, brabo.OriginInfra, nil); {
	case errors.Is(err, errLeaseLost):
		m.log().Warn("devagent: an interrupted turn is another process's to block now", "run", r.ID)
	case err != nil:
		m.log().Error("devagent: blocking an interrupted turn", "run", r.ID, "err", err)
	default:
		m.log().Info("devagent: blocked a turn a stopped process left working (origin infra)", "run", r.ID, "task", st.task.ID)
	}
}

// restoreCtx decodes a stored Ctx, refusing what Resume would refuse for
// its version.
func (m *Manager) restoreCtx(r *brabo.Run) (toolloop.Ctx, error) {
	var c toolloop.Ctx
	if len(r.Ctx) == 0 {
		return c, errors.New("the run has no stored Ctx")
	}
	if err := json.Unmarshal(r.Ctx, &c); err != nil {
		return c, fmt.Errorf("the stored Ctx is unreadable: %v", err)
	}
	if c.Version != toolloop.CtxVersion {
		return c, fmt.Errorf("the stored Ctx has version %d; this build reads version %d only", c.Version, toolloop.CtxVersion)
	}
	if !c.Awaits(r.AwaitingActionID) {
		return c, fmt.Errorf("the stored Ctx awaits action %q, the run action %q", c.AwaitingActionID, r.AwaitingActionID)
	}
	return c, nil
}

// blockUnrestorable blocks a run whose Ctx cannot be restored: origin
// infra, a diagnostic naming the action. The action is left as it is.
func (m *Manager) blockUnrestorable(ctx context.Context, st *state, cause error) error {
	why := fmt.Sprintf("the suspended conversation could not be restored, so the decision on action %s cannot reach it: %v (the action stays recorded)",
		st.run.AwaitingActionID, cause)
	m.log().Error("devagent: blocking a run", "run", st.run.ID, "task", st.task.ID, "err", cause)
	return m.block(ctx, st, why, brabo.OriginInfra, nil)
}
