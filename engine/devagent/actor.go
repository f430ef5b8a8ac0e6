package devagent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

// actor is one agent's goroutine. Everything but the mailbox is owned by
// that goroutine.
type actor struct {
	m       *Manager
	agent   *brabo.Agent
	key     string
	mailbox chan brabo.OutboxMessage

	// st is the run being worked or waited on; nil when idle.
	st *state
	// awaiting is the suspension the actor waits on; nil when working or
	// idle. waitingFor mirrors its action id for other goroutines (Deliver).
	awaiting   *toolloop.AwaitingApproval
	waitingFor atomic.Value // string
	// resumed names the actions this actor already resumed with, so a
	// duplicate delivery is logged as such.
	resumed map[string]bool

	// stop is closed when the agent's lease is lost (lose): the actor
	// returns at its next select, between two turns.
	stop     chan struct{}
	stopOnce sync.Once
	// sync asks the actor to check its run against the store (nudge).
	sync chan struct{}
	// pinned actors (Start) stay when they have no task, and poll for
	// one; the others (Run) go, as an idle agent needs no goroutine.
	pinned bool
	// parkAsked is set when the actor's wait is no longer among the live
	// ones (admit): it parks at its next turn of the loop.
	parkAsked atomic.Bool
	// retired is set, under the manager's lock, when the actor left the
	// manager: Deliver gives it nothing more.
	retired bool
}

// lose asks the actor to stop between two turns; any goroutine may call it.
func (a *actor) lose() { a.stopOnce.Do(func() { close(a.stop) }) }

// lost reports whether the actor was asked to stop.
func (a *actor) lost() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}

// nudge asks the actor, without blocking, to resync at its next select.
func (a *actor) nudge() {
	select {
	case a.sync <- struct{}{}:
	default:
	}
}

func (a *actor) loop(ctx context.Context) {
	a.resumed = map[string]bool{}
	a.restore(ctx)
	poll := a.m.IdlePoll
	if poll <= 0 {
		poll = DefaultIdlePoll
	}
	for {
		if ctx.Err() != nil {
			return
		}
		if a.lost() {
			a.log("stopped: the agent's lease is held by another process now")
			return // a waiting run stays in the store; the holder restores it
		}
		if a.awaiting == nil {
			if a.work(ctx) {
				continue // look for the next task at once
			}
			if !a.pinned && a.m.retire(a, false) {
				return // no task: an idle agent is a row, not a goroutine
			}
		} else if a.parkAsked.Load() && a.m.retire(a, true) {
			a.log("parked: the run waits in the store", "action", a.awaiting.ActionID)
			return
		}
		var idle <-chan time.Time
		if a.awaiting == nil && a.pinned {
			idle = time.After(poll)
		}
		select {
		case <-ctx.Done():
			return // a waiting run stays in the store; Restore takes it back
		case msg := <-a.mailbox:
			a.handle(ctx, msg)
		case <-a.sync:
			a.resync(ctx)
		case <-a.stop:
		case <-idle:
		}
	}
}

// logEnded says that the agent's run on its task ended, how and (pr, when
// not 0) with which pull request: the same line whether a live actor or
// the store's path (Resume) ended it.
func (m *Manager) logEnded(st *state, pr int64) {
	args := []any{"agent", st.agent.ID, "task", st.task.ID, "status", st.task.Status}
	if pr != 0 {
		args = append(args, "pr", pr)
	}
	m.log().Info("devagent: task ended", append(args, "reason", st.task.BlockedReason)...)
}

func (a *actor) log(msg string, args ...any) {
	a.m.log().Info("devagent: "+msg, append([]any{"agent", a.agent.ID}, args...)...)
}

func (a *actor) idle() {
	a.st = nil
	a.setAwaiting(nil)
}

// restore takes back the agent's run that waits (awaiting_approval or
// awaiting_pr) in the store, if there is one, and waits for its decision
// again.
func (a *actor) restore(ctx context.Context) {
	l := a.m.keyLock(a.key)
	l.Lock()
	defer l.Unlock()
	a.restoreLocked(ctx)
}

// resync makes the actor agree with the store, which is the truth (Run
// asks for it every tick): a run it waits on that another process resumed
// or blocked is given up, so the actor does not wait for it until the wait
// cap; a decision already made on the action it waits for resumes it; and
// an idle actor takes back a waiting run of its agent that was
// suspended elsewhere (resumed from the store by a wake worker while no
// actor held it). While this process resumes the agent's run from the
// store (Resume) it is left for the next tick.
func (a *actor) resync(ctx context.Context) {
	if a.awaiting != nil {
		var run *brabo.Run
		err := a.m.Store.View(ctx, func(tx brabo.Tx) error {
			var err error
			run, err = tx.Run(ctx, a.st.run.ID)
			return err
		})
		if err != nil {
			a.m.log().Error("devagent: checking the awaited run", "agent", a.agent.ID, "run", a.st.run.ID, "err", err)
			return
		}
		if waiting(run.State) && run.AwaitingActionID == a.awaiting.ActionID {
			// A decision whose message went to an actor that stopped
			// before reading it (its process lost the lease) is caught
			// up here rather than at the wait cap.
			a.catchUp(ctx)
			return
		}
		a.log("the run was taken up elsewhere", "run", run.ID, "action", a.awaiting.ActionID, "state", run.State)
		a.idle()
	}
	if a.st != nil || !a.pinned {
		return // an actor of Run has its wait or its work; the tick deals with the rest
	}
	l := a.m.keyLock(a.key)
	if !l.TryLock() {
		return
	}
	defer l.Unlock()
	a.restoreLocked(ctx)
}

// restoreLocked is restore with the key's lock held.
func (a *actor) restoreLocked(ctx context.Context) {
	var waitingRun *brabo.Run
	err := a.m.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		waitingRun, err = tx.WaitingRun(ctx, a.key)
		return err
	})
	switch {
	case errors.Is(err, brabo.ErrNotFound):
		return
	case err != nil:
		a.m.log().Error("devagent: looking for a waiting run", "agent", a.agent.ID, "err", err)
		return
	}
	st, err := a.m.loadRun(ctx, waitingRun.ID)
	if err != nil {
		a.m.log().Error("devagent: restoring a waiting run", "agent", a.agent.ID, "run", waitingRun.ID, "err", err)
		return
	}
	c, err := a.m.restoreCtx(st.run)
	if err != nil {
		if err := a.m.blockUnrestorable(ctx, st, err); err != nil && !a.fenced(err, "blocking an unrestorable run") {
			a.m.log().Error("devagent: blocking an unrestorable run", "run", st.run.ID, "err", err)
		}
		return
	}
	// The worktree is normally there as the agent left it, and is not
	// touched; one deleted while nobody ran is made again on the task's
	// branch, so the approved action and the rest of the task have a place
	// to run. Failing that, the wait goes on: the action's own result will
	// say what is missing.
	if _, err := os.Stat(st.wt.dir()); errors.Is(err, fs.ErrNotExist) {
		if err := st.wt.hold(ctx); err != nil {
			a.m.log().Error("devagent: remaking the restored run's worktree", "run", st.run.ID, "worktree", st.wt.rel, "err", err)
		}
	}
	a.st = st
	// A restored actor keeps the suspension without its conversation: the
	// run holds it as JSON (st.run.Ctx), which resume decodes again, once.
	// Ten thousand agents restored after a restart would otherwise hold
	// every conversation twice (docs/PERFORMANCE.md). A live suspension
	// keeps it decoded: resuming it then costs nothing.
	a.setAwaiting(&toolloop.AwaitingApproval{ActionID: st.run.AwaitingActionID, ToolCallID: c.PendingToolCallID,
		ToolName: c.PendingToolName, Ctx: toolloop.Ctx{AwaitingActionID: c.AwaitingActionID}})
	if !a.m.admit(a) {
		a.parkAsked.Store(true)
	}
	st.hist.seen(c.Messages)
	a.log("restored a waiting run", "run", st.run.ID, "state", st.run.State, "task", st.task.ID, "action", st.run.AwaitingActionID)
	a.catchUp(ctx)
}

// work claims the oldest todo task of the agent's project and runs the
// loop on it; it reports whether there was a task.
func (a *actor) work(ctx context.Context) bool {
	st, err := a.m.claim(ctx, a.agent)
	if a.fenced(err, "claiming a task") {
		return false
	}
	if err != nil {
		a.m.log().Error("devagent: claiming a task", "agent", a.agent.ID, "err", err)
		return false
	}
	if st == nil {
		return false
	}
	a.st = st
	a.log("working", "task", st.task.ID, "run", st.run.ID)
	prompt := st.task.Title
	if st.task.Description != "" {
		prompt += "\n\n" + st.task.Description
	}
	// The branch is said once, here, rather than in every tool's
	// description: those are shared by all agents (gitwork's spec cache).
	prompt += "\n\nYou work in your own git worktree of the project, on the branch " + st.wt.branch + "."
	a.outcome(ctx, toolloop.Run(ctx, st.loop, prompt))
	return true
}

// outcome records what the loop ended with. A suspension is stored with
// its deadline (the wait cap), which the store's sweep enforces: the actor
// holds no timer.
func (a *actor) outcome(ctx context.Context, out toolloop.Outcome) {
	aw, err := a.m.apply(ctx, a.st, out)
	if a.fenced(err, "the turn's outcome") {
		a.idle()
		return
	}
	if err != nil {
		a.m.log().Error("devagent: recording an outcome", "agent", a.agent.ID, "run", a.st.run.ID, "err", err)
		if aw == nil {
			if _, ok := out.(toolloop.AwaitingApproval); ok {
				// The suspension is not in the store, so no decision can
				// reach it: block rather than wait for nothing.
				if err := a.m.block(ctx, a.st, fmt.Sprintf("the suspension could not be stored: %v", err), brabo.OriginInfra, nil); err != nil {
					a.m.log().Error("devagent: blocking a task", "run", a.st.run.ID, "err", err)
				}
			}
		}
		a.idle()
		return
	}
	if aw == nil {
		a.m.logEnded(a.st, 0)
		a.idle()
		return
	}
	a.setAwaiting(aw)
	if !a.m.admit(a) {
		a.parkAsked.Store(true) // parks at the next turn of its loop, once caught up
	}
	a.log("waiting for approval", "task", a.st.task.ID, "action", aw.ActionID, "tool", aw.ToolName)
	a.catchUp(ctx)
}

// catchUp resumes at once when the awaited action was decided before the
// suspension was stored (the settled event then found no run waiting).
func (a *actor) catchUp(ctx context.Context) {
	if a.awaiting == nil {
		return
	}
	var act *brabo.ProposedAction
	err := a.m.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		act, err = tx.Action(ctx, a.awaiting.ActionID)
		return err
	})
	if err != nil {
		a.m.log().Error("devagent: reading the awaited action", "action", a.awaiting.ActionID, "err", err)
		return
	}
	if !act.Status.Settled() {
		return
	}
	if a.st.run.State == brabo.RunAwaitingPR {
		if p, ok := prFromAction(act); ok {
			if p.Opened && p.PR == 0 {
				p.PR = a.m.prOf(ctx, act)
			}
			a.log("the awaited pr_open is already settled", "action", act.ID, "status", act.Status)
			a.finishPR(ctx, p)
			return
		}
	}
	a.log("the awaited action is already settled; resuming", "action", act.ID, "status", act.Status)
	a.resume(ctx, brabo.Settled{ActionID: act.ID, Status: act.Status, Result: act.Result, Reason: act.Reason})
}

// finishPR ends the wait for a pull request.
func (a *actor) finishPR(ctx context.Context, p prSettled) {
	a.resumed[p.ActionID] = true
	switch err := a.m.finishPR(ctx, a.st, p); {
	case a.fenced(err, "the end of the pull request wait"):
	case err != nil:
		// The run stays awaiting_pr in the store: a redelivery or a
		// restart finishes it.
		a.m.log().Error("devagent: finishing a pull request wait", "run", a.st.run.ID, "err", err)
	default:
		a.m.logEnded(a.st, p.PR)
	}
	a.idle()
}

// handle reads one message of the mailbox.
func (a *actor) handle(ctx context.Context, msg brabo.OutboxMessage) {
	if a.awaiting != nil && a.st.run.State == brabo.RunAwaitingPR {
		step, err := prStepOf(a.st.run, msg)
		if err != nil {
			a.m.log().Error("devagent: ignored an unreadable message", "agent", a.agent.ID, "err", err)
			return
		}
		switch step.kind {
		case prIgnore:
			a.log("ignored a message while awaiting a pull request", "topic", msg.Topic, "action", msg.ActionID, "why", step.why)
			return
		case prFinish:
			a.finishPR(ctx, step.pr)
			return
		}
		// prResume: a failed pr_open goes back to the model, below.
	}
	if msg.Topic != brabo.TopicActionSettled {
		a.log("ignored a message of another topic", "topic", msg.Topic, "action", msg.ActionID)
		return
	}
	s, err := decodeSettled(msg)
	if err != nil {
		a.m.log().Error("devagent: ignored an unreadable message", "agent", a.agent.ID, "err", err)
		return
	}
	switch {
	case a.awaiting != nil && a.awaiting.Ctx.Awaits(s.ActionID):
	case a.resumed[s.ActionID]:
		a.log("ignored a duplicate settled event", "action", s.ActionID)
		return
	case a.awaiting == nil:
		a.log("ignored a settled event: not waiting for any action", "action", s.ActionID)
		return
	default:
		a.log("ignored a settled event for another action", "action", s.ActionID, "awaiting", a.awaiting.ActionID)
		return
	}
	if !s.Status.Settled() {
		a.log("ignored a settled event whose status is not settled", "action", s.ActionID, "status", s.Status)
		return
	}
	a.resume(ctx, s)
}

// resume continues the loop with the awaited action's settlement.
func (a *actor) resume(ctx context.Context, s brabo.Settled) {
	aw := a.awaiting
	c, err := aw.Ctx, error(nil)
	if c.Messages == nil { // restored: the conversation is in the run
		c, err = a.m.restoreCtx(a.st.run)
	}
	if err != nil {
		a.setAwaiting(nil)
		if err := a.m.blockUnrestorable(ctx, a.st, err); err != nil {
			a.m.log().Error("devagent: blocking an unrestorable run", "run", a.st.run.ID, "err", err)
		}
		a.idle()
		return
	}
	a.setAwaiting(nil)
	if err := a.m.markWorking(ctx, a.st); err != nil {
		if a.fenced(err, "resuming the run") {
			a.idle() // the run still waits in the store, for the holder
			return
		}
		if errors.Is(err, errLeftElsewhere) {
			// Another process resumed (or blocked) this run first: its
			// in-memory copy here is stale.
			a.log("the run was taken up elsewhere", "run", a.st.run.ID, "action", s.ActionID)
			a.idle()
			return
		}
		a.m.log().Error("devagent: resuming", "run", a.st.run.ID, "err", err)
		a.setAwaiting(aw) // still waiting; the wait cap (its deadline in the store) still applies
		return
	}
	a.resumed[s.ActionID] = true
	a.log("resuming", "task", a.st.task.ID, "action", s.ActionID, "status", s.Status)
	a.outcome(ctx, a.m.resumeLoop(ctx, a.st, c, s))
}

// markWorking records that a run resumed: it awaits nothing, so another
// delivery of the same event finds no run waiting. It is a conditional
// claim (LeaveWait): when another process resumed or blocked the run first,
// it returns errLeftElsewhere and the caller must not resume.
func (m *Manager) markWorking(ctx context.Context, st *state) error {
	prev := *st.run
	err := m.Store.Update(ctx, func(tx brabo.Tx) error {
		// From the store (Resume) this takes the agent's lease when nobody
		// holds it, so no other process recovers the turn as interrupted.
		if err := m.fence(ctx, tx, st.agent.ID); err != nil {
			return err
		}
		return leaveRun(ctx, tx, st.run, brabo.RunWorking, m.now())
	})
	if err != nil {
		*st.run = prev
		return fmt.Errorf("devagent: marking run %s working: %w", prev.ID, err)
	}
	return nil
}

// leaveRun moves run to state to inside tx. A run that waits leaves its
// wait only if it still waits on that action (LeaveWait): when another
// process resumed or blocked it first, it returns errLeftElsewhere and
// run is left as it was.
func leaveRun(ctx context.Context, tx brabo.Tx, run *brabo.Run, to brabo.RunState, now time.Time) error {
	if waiting(run.State) && run.AwaitingActionID != "" {
		won, err := tx.LeaveWait(ctx, run.ID, run.AwaitingActionID, to, now)
		if err != nil {
			return err
		}
		if !won {
			return fmt.Errorf("run %s awaiting %s: %w", run.ID, run.AwaitingActionID, errLeftElsewhere)
		}
	}
	run.State, run.AwaitingActionID, run.UpdatedAt = to, "", now
	return nil
}

// errLeftElsewhere says another process took the run out of its wait first.
var errLeftElsewhere = errors.New("the run no longer awaits that action: another process took it up")

// setAwaiting records the suspension the actor waits on (nil for none);
// an actor that no longer waits leaves the live waits.
func (a *actor) setAwaiting(aw *toolloop.AwaitingApproval) {
	a.awaiting = aw
	id := ""
	if aw != nil {
		id = aw.ActionID
	} else {
		a.m.mu.Lock()
		a.m.unlist(a.key)
		a.m.mu.Unlock()
	}
	a.waitingFor.Store(id)
}

// waitsFor reports, from any goroutine, whether the actor waits on the
// action.
func (a *actor) waitsFor(actionID string) bool {
	id, _ := a.waitingFor.Load().(string)
	return id != "" && id == actionID
}
