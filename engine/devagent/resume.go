package devagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

// Resume resumes a run no live actor holds from its stored Ctx with a
// settled message (wake.Resumer). It returns once the run is saved again:
// suspended on another action, done or blocked. A Ctx that cannot be
// restored blocks the task (origin infra) and is not an error: the message
// is dealt with.
func (m *Manager) Resume(ctx context.Context, run *brabo.Run, msg brabo.OutboxMessage) error {
	if m.Deliver(run.ActorKey, msg) {
		return nil
	}
	if m.waitsHere(run.ActorKey, msg.ActionID) {
		return fmt.Errorf("devagent: the actor %s waits here but its mailbox is full; try again", run.ActorKey)
	}
	l := m.keyLock(run.ActorKey)
	l.Lock()
	defer l.Unlock()
	// The worker read the run waiting just now: its copy serves (a resume
	// that raced it here is refused by LeaveWait).
	cp := *run
	st, err := m.load(ctx, run.ID, &cp)
	if err != nil {
		return err
	}
	if !waiting(st.run.State) {
		m.unpark(run.ActorKey) // left its wait already
	}
	if st.run.State == brabo.RunAwaitingPR {
		step, err := prStepOf(st.run, msg)
		if err != nil {
			m.log().Error("devagent: unreadable message", "run", run.ID, "err", err)
			return nil
		}
		switch step.kind {
		case prIgnore:
			m.log().Info("devagent: ignored a message for a run awaiting a pull request", "run", run.ID, "topic", msg.Topic,
				"action", msg.ActionID, "why", step.why)
			return nil
		case prFinish:
			err := m.finishPR(ctx, st, step.pr)
			if err == nil {
				m.unpark(run.ActorKey)
				m.logEnded(st, step.pr.PR)
			}
			return err
		}
	} else if msg.Topic != brabo.TopicActionSettled {
		m.log().Warn("devagent: not resuming on a message of another topic", "topic", msg.Topic, "run", run.ID)
		return nil
	}
	settled, err := decodeSettled(msg)
	if err != nil {
		m.log().Error("devagent: unreadable settled message", "run", run.ID, "err", err)
		return nil
	}
	if !waiting(st.run.State) || st.run.AwaitingActionID != settled.ActionID {
		m.log().Info("devagent: run no longer awaits the action; ignored", "run", run.ID, "action", settled.ActionID,
			"state", st.run.State, "awaiting", st.run.AwaitingActionID)
		return nil
	}
	return m.resumeStored(ctx, st, settled)
}

// resumeStored resumes, in the caller's goroutine, a run no live actor
// holds here with its settlement: the store's way of a decision, for an
// agent that is a row, not a goroutine. The key's lock is held. A Ctx
// that cannot be restored blocks the task (origin infra); a worktree
// deleted while the agent waited is made again first. A new suspension is
// parked: it waits for the next delivery in the store.
func (m *Manager) resumeStored(ctx context.Context, st *state, settled brabo.Settled) error {
	c, err := m.restoreCtx(st.run)
	if err != nil {
		err = m.blockUnrestorable(ctx, st, err)
		if err == nil {
			m.unpark(st.run.ActorKey)
		}
		return err
	}
	m.holdWorktree(ctx, st)
	wasParked := m.isParked(st.run.ActorKey)
	next, err := m.resume(ctx, st, c, settled)
	if errors.Is(err, errLeftElsewhere) {
		m.unpark(st.run.ActorKey)
		return nil // resumed by someone else first: delivered
	}
	if err != nil {
		return err
	}
	if next == nil {
		m.logEnded(st, 0)
	}
	if next != nil && (wasParked || m.holds(st.agent.ID)) {
		m.park(st.run.ActorKey) // waits again, in the store
	} else {
		m.unpark(st.run.ActorKey)
	}
	return nil
}

// ResumesOnce (wake.OnceResumer) is true: a run leaves its wait through
// a conditional update (markWorking, Tx.LeaveWait), and this process
// resumes one run of a key at a time (keyLock), so the wake worker needs no
// run lease before Resume.
func (m *Manager) ResumesOnce(*brabo.Run) bool { return true }

// state is one run in progress: the agent, its task and project, and the
// loop built for them.
type state struct {
	agent   *brabo.Agent
	task    *brabo.Task
	project *brabo.Project
	run     *brabo.Run
	loop    *toolloop.Loop
	// hist is what the loop's conversation showed of its terminal
	// commands (report_done's gate).
	hist *history
	// wt is the agent's worktree for the task.
	wt worktree
}

// loadRun reads a run with its task, agent and project, and builds its
// loop.
func (m *Manager) loadRun(ctx context.Context, runID string) (*state, error) {
	return m.load(ctx, runID, nil)
}

// load is loadRun; with run set it takes that copy of the run (read just
// before by the caller) instead of reading it again: a stale copy only
// costs a resume that LeaveWait then refuses.
func (m *Manager) load(ctx context.Context, runID string, run *brabo.Run) (*state, error) {
	st := &state{run: run}
	err := m.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if st.run == nil {
			if st.run, err = tx.Run(ctx, runID); err != nil {
				return err
			}
		}
		id, ok := brabo.AgentOfKey(st.run.ActorKey)
		if !ok {
			return fmt.Errorf("run %s belongs to %q, not to an agent", runID, st.run.ActorKey)
		}
		if st.agent, err = tx.Agent(ctx, id); err != nil {
			return err
		}
		if st.task, err = tx.Task(ctx, st.run.TaskID); err != nil {
			return err
		}
		st.project, err = tx.Project(ctx, st.run.ProjectID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("devagent: loading run %s: %w", runID, err)
	}
	st.loop, st.hist, st.wt, _ = m.buildLoop(st.agent, st.project, st.task)
	return st, nil
}

// resume marks the run working, resumes the loop with settled and applies
// the outcome. It returns the suspension, if the loop suspended again.
func (m *Manager) resume(ctx context.Context, st *state, c toolloop.Ctx, settled brabo.Settled) (*toolloop.AwaitingApproval, error) {
	if err := m.markWorking(ctx, st); err != nil {
		return nil, err
	}
	return m.apply(ctx, st, m.resumeLoop(ctx, st, c, settled))
}

// resumeLoop resumes the loop, first showing report_done's gate what the
// suspended conversation held and what it resumes with.
func (m *Manager) resumeLoop(ctx context.Context, st *state, c toolloop.Ctx, settled brabo.Settled) toolloop.Outcome {
	st.hist.seen(c.Messages)
	if c.PendingToolName == "terminal" {
		st.hist.sawSettled(settled.Status, settled.Result)
	}
	return toolloop.Resume(ctx, st.loop, c, settled)
}
