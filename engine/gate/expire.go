package gate

import (
	"context"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/wake"
)

// failTx is fail's writes inside tx: the run blocked (awaiting nothing),
// delegation.failed with the named origin, the task blocked and
// backlog.task_blocked.
func (l *Lead) failTx(ctx context.Context, tx brabo.Tx, a *area, name, actor, why string, origin brabo.Origin, now time.Time) error {
	a.state.Loop = nil
	a.run.State, a.run.AwaitingActionID, a.run.Ctx, a.run.UpdatedAt = brabo.RunBlocked, "", mustJSON(a.state), now
	if err := tx.SaveRun(ctx, a.run); err != nil {
		return err
	}
	if err := tx.AppendEvent(ctx, l.event(a, EventDelegationFailed, actor, "",
		map[string]any{"taskId": a.task.ID, "area": l.area(), "subAgent": name, "reason": why, "origin": origin})); err != nil {
		return err
	}
	task, err := tx.Task(ctx, a.task.ID)
	if err != nil {
		return err
	}
	task.Status, task.BlockedReason, task.BlockedOrigin, task.UpdatedAt = brabo.TaskBlocked, why, origin, now
	if err := tx.UpdateTask(ctx, task); err != nil {
		return err
	}
	a.task = task
	return tx.AppendEvent(ctx, l.event(a, EventTaskBlocked, actor, "",
		map[string]any{"taskId": task.ID, "reason": why, "origin": origin}))
}

func (l *Lead) waitCap() time.Duration {
	if l.WaitCap > 0 {
		return l.WaitCap
	}
	return brabo.DefaultWaitCap
}

// Expire ends an area whose wait ran past its cap (wake.Expirer): the
// delegation in flight fails with origin policy and why (which action
// nobody decided), and the task is blocked, as for any failed delegation.
// The run leaves its wait only if it still waits on that action: a
// decision that resumed it first wins, and of two processes sweeping, one
// expires it. While it waited the area gave no verdict; it gives none now.
func (l *Lead) Expire(ctx context.Context, run *brabo.Run, why string) error {
	if !l.work.TryLock() {
		// An area of the lead runs now (model calls): the sweep looks again
		// next time, rather than wait behind it.
		return fmt.Errorf("%w: the QA lead of project %s is busy", wake.ErrNotHere, l.ProjectID)
	}
	defer l.work.Unlock()
	a, err := l.load(ctx, run)
	if err != nil {
		return err
	}
	if st, err := decodeState(run.Ctx); err == nil {
		a.state = st
	}
	name := a.state.Current
	agentID, _ := brabo.AgentOfKey(run.ActorKey)
	if name == "" {
		name = agentID
	}
	now := l.now()
	left := false
	err = l.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		if left, err = tx.LeaveWait(ctx, run.ID, run.AwaitingActionID, brabo.RunBlocked, now); err != nil || !left {
			return err
		}
		return l.failTx(ctx, tx, a, name, agentID, why, brabo.OriginPolicy, now)
	})
	if err != nil {
		return fmt.Errorf("gate: expiring the area of task %s: %w", run.TaskID, err)
	}
	if left {
		l.setWaiting(run.ActorKey, "")
		l.log().Info("gate: wait cap reached; the area failed", "task", run.TaskID, "subAgent", name, "action", run.AwaitingActionID)
	}
	return nil
}
