package devagent

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/wake"
)

// Waiting agents are rows, not goroutines. An agent suspended
// on a pending action keeps its run in the store (state, awaited action,
// Ctx as JSON, deadline); a live actor — a goroutine with a mailbox — is
// kept only while the agent works, and, as a bounded cache, for the
// MaxLive most recent waits, whose decisions are then delivered to the
// mailbox. Past the bound the oldest waiting actor parks: it ends its
// goroutine with its mailbox empty, and the manager only remembers that
// the agent waits (parked). Its decision comes through the wake worker's
// store path (Resume), which rehydrates the run from the store, the path a
// restart already used. Restore and a lease take-over park the waiting
// agents at once: nothing of their conversations is held in memory.

// DefaultMaxLive is how many waiting actors a manager keeps live when
// MaxLive is zero.
const DefaultMaxLive = 1000

func (m *Manager) maxLive() int {
	if m.MaxLive == 0 {
		return DefaultMaxLive
	}
	return m.MaxLive
}

// admit puts a's wait at the end of the live waits; it reports false, and
// a parks, when no wait is kept live. Past MaxLive the oldest live wait is
// asked to park.
func (m *Manager) admit(a *actor) bool {
	a.parkAsked.Store(false)
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := m.maxLive()
	if limit < 0 {
		return false
	}
	if m.lru == nil {
		m.lru, m.lruPos = list.New(), map[string]*list.Element{}
	}
	if e, ok := m.lruPos[a.key]; ok {
		m.lru.MoveToBack(e)
	} else {
		m.lruPos[a.key] = m.lru.PushBack(a)
	}
	for m.lru.Len() > limit {
		old := m.lru.Remove(m.lru.Front()).(*actor)
		delete(m.lruPos, old.key)
		old.parkAsked.Store(true)
		old.nudge()
	}
	return true
}

// unlist takes the key's actor off the live waits; m.mu is held.
func (m *Manager) unlist(key string) {
	if e, ok := m.lruPos[key]; ok {
		m.lru.Remove(e)
		delete(m.lruPos, key)
	}
}

// retire ends a's place here, from its own goroutine: when waiting it is
// parked (its run waits in the store), otherwise it simply goes (an idle
// agent needs no goroutine). It refuses, reporting false, while a message
// is in the mailbox; Deliver holds the same lock, so once retired no
// message can reach the mailbox.
func (m *Manager) retire(a *actor, waiting bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(a.mailbox) > 0 {
		return false
	}
	a.retired = true
	if m.actors[a.key] == a {
		delete(m.actors, a.key)
	}
	m.unlist(a.key)
	if waiting {
		if m.parked == nil {
			m.parked = map[string]struct{}{}
		}
		m.parked[a.key] = struct{}{}
	}
	return true
}

// park records that the key's agent waits in the store with no live
// actor; unpark that it no longer does.
func (m *Manager) park(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, live := m.actors[key]; live {
		return
	}
	if m.parked == nil {
		m.parked = map[string]struct{}{}
	}
	m.parked[key] = struct{}{}
}

func (m *Manager) unpark(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.parked, key)
}

func (m *Manager) isParked(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.parked[key]
	return ok
}

// holds reports whether this manager holds the agent's lease (Run).
func (m *Manager) holds(agentID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held[agentID]
}

// holdWorktree makes a run's worktree again when it was deleted while the
// agent waited, so the approved action and the rest of the task have a
// place to run; failing that, the wait goes on and the action's own
// result says what is missing.
func (m *Manager) holdWorktree(ctx context.Context, st *state) {
	if _, err := os.Stat(st.wt.dir()); errors.Is(err, fs.ErrNotExist) {
		if err := st.wt.hold(ctx); err != nil {
			m.log().Error("devagent: remaking the waiting run's worktree", "run", st.run.ID, "worktree", st.wt.rel, "err", err)
		}
	}
}

// Restore takes back, at start-up of a process that runs its actors with
// Start, the managed agents whose runs wait in the store: it parks them
// (no goroutine, no conversation in memory: their decisions come through
// the wake worker's store path) and resumes at once those whose action was
// decided while no process ran them. Run does the same for the agents it
// takes the leases of.
func (m *Manager) Restore(ctx context.Context) error {
	list, err := m.waitingAgents(ctx)
	if err != nil {
		return err
	}
	m.takeBack(ctx, list, func(w brabo.WaitingAgent) bool { return m.Manages == nil || m.Manages(&w.Agent) })
	return nil
}

// waitingAgents lists the agents whose runs wait, without their
// conversations (Tx.WaitingAgents).
func (m *Manager) waitingAgents(ctx context.Context) ([]brabo.WaitingAgent, error) {
	var list []brabo.WaitingAgent
	err := m.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		list, err = tx.WaitingAgents(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("devagent: listing waiting agents: %w", err)
	}
	return list, nil
}

// takeBack parks the waiting agents mine selects and resumes, in the
// background, those whose awaited action is already decided: their
// message may have gone to a process that died, or to an actor that
// stopped, before it was read.
func (m *Manager) takeBack(ctx context.Context, list []brabo.WaitingAgent, mine func(brabo.WaitingAgent) bool) {
	var decided []brabo.WaitingAgent
	m.mu.Lock()
	if m.parked == nil {
		m.parked = map[string]struct{}{}
	}
	for _, w := range list {
		if !mine(w) {
			continue
		}
		key := brabo.AgentKey(w.Agent.ID)
		if _, live := m.actors[key]; live {
			continue
		}
		m.parked[key] = struct{}{}
		if w.ActionStatus.Settled() {
			decided = append(decided, w)
		}
	}
	m.mu.Unlock()
	m.checkWorktrees(ctx, list, mine)
	for _, w := range decided {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			if err := m.resumeDecided(ctx, w.RunID, brabo.AgentKey(w.Agent.ID)); err != nil && ctx.Err() == nil {
				m.log().Error("devagent: resuming a run whose action was decided meanwhile", "run", w.RunID, "err", err)
			}
		}()
	}
}

// checkWorktrees makes again the worktrees of the taken-back waiting
// agents that were deleted while no process ran them: the approved action
// runs in the agent's worktree when the human decides, before the agent
// is resumed. It looks with one stat per agent; only a missing worktree
// loads its run.
func (m *Manager) checkWorktrees(ctx context.Context, list []brabo.WaitingAgent, mine func(brabo.WaitingAgent) bool) {
	if m.Scoper == nil {
		return
	}
	roots := map[string]string{} // project id → scope root ("" when it has none)
	for _, w := range list {
		if !mine(w) {
			continue
		}
		root, ok := roots[w.ProjectID]
		if !ok {
			var p *brabo.Project
			if err := m.Store.View(ctx, func(tx brabo.Tx) error {
				var err error
				p, err = tx.Project(ctx, w.ProjectID)
				return err
			}); err == nil {
				if sc, err := m.Scoper.ScopeRoot(p); err == nil {
					root = sc.Root
				}
			}
			roots[w.ProjectID] = root
		}
		if root == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(WorktreeRel(w.Agent.ID)))); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		st, err := m.loadRun(ctx, w.RunID)
		if err != nil {
			m.log().Error("devagent: loading a waiting run whose worktree is gone", "run", w.RunID, "err", err)
			continue
		}
		m.holdWorktree(ctx, st)
	}
}

// resumeDecided resumes, from the store, a waiting run whose awaited
// action is settled, as the actor's catchUp does for a live wait.
func (m *Manager) resumeDecided(ctx context.Context, runID, key string) error {
	l := m.keyLock(key)
	l.Lock()
	defer l.Unlock()
	m.mu.Lock()
	_, live := m.actors[key]
	m.mu.Unlock()
	if live {
		return nil // the live actor catches up by itself
	}
	st, err := m.loadRun(ctx, runID)
	if err != nil {
		return err
	}
	if !waiting(st.run.State) {
		m.unpark(key)
		return nil
	}
	var act *brabo.ProposedAction
	if err := m.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		act, err = tx.Action(ctx, st.run.AwaitingActionID)
		return err
	}); err != nil {
		return err
	}
	if !act.Status.Settled() {
		return nil
	}
	if st.run.State == brabo.RunAwaitingPR {
		if p, ok := prFromAction(act); ok {
			if p.Opened && p.PR == 0 {
				p.PR = m.prOf(ctx, act)
			}
			err := m.finishPR(ctx, st, p)
			if err == nil {
				m.unpark(key)
			}
			return err
		}
	}
	m.log().Info("devagent: the awaited action was decided while no actor held the run; resuming", "run", runID, "action", act.ID)
	return m.resumeStored(ctx, st, brabo.Settled{ActionID: act.ID, Status: act.Status, Result: act.Result, Reason: act.Reason})
}

// Expire blocks the task of a run whose wait cap ran out (wake.Expirer),
// with origin policy and why: the run leaves its wait only if it still
// waits on that action (a decision that resumed it first wins), and only
// if this process may write for the agent (in lease mode, a run whose
// agent another process holds is that process's to expire:
// wake.ErrNotHere). A live actor here waiting on it is told to look at
// the store again, and goes idle.
func (m *Manager) Expire(ctx context.Context, run *brabo.Run, why string) error {
	l := m.keyLock(run.ActorKey)
	if !l.TryLock() {
		// A resume from the store holds the run now: the sweep looks again
		// next time, rather than wait behind the turn.
		return fmt.Errorf("%w: run %s is being resumed here", wake.ErrNotHere, run.ID)
	}
	defer l.Unlock()
	st, err := m.loadRun(ctx, run.ID)
	if err != nil {
		return err
	}
	if !waiting(st.run.State) || st.run.AwaitingActionID != run.AwaitingActionID {
		return nil // it left its wait meanwhile
	}
	switch err := m.block(ctx, st, why, brabo.OriginPolicy, nil); {
	case errors.Is(err, errLeftElsewhere):
		return nil
	case errors.Is(err, errLeaseLost):
		return fmt.Errorf("%w: %v", wake.ErrNotHere, err)
	case err != nil:
		return err
	}
	m.log().Info("devagent: wait cap reached; task blocked", "agent", st.agent.ID, "task", st.task.ID, "action", run.AwaitingActionID)
	m.unpark(run.ActorKey)
	if a := m.actorOf(st.agent.ID); a != nil {
		a.nudge()
	}
	return nil
}
