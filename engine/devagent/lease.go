package devagent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
)

// Defaults for the zero values of Manager's lease fields.
const (
	// DefaultLease is how long an agent's lease lasts unless renewed: how
	// long the agents of a process that died wait for another one.
	DefaultLease = 15 * time.Second
	// DefaultScan is how often Run looks for new agents.
	DefaultScan = 2 * time.Second
)

func (m *Manager) lease() time.Duration {
	if m.Lease > 0 {
		return m.Lease
	}
	return DefaultLease
}

// tick is Run's period: the shorter of Scan and a third of the lease, so
// a lease is renewed at least twice before it runs out.
func (m *Manager) tick() time.Duration {
	scan := m.Scan
	if scan <= 0 {
		scan = DefaultScan
	}
	return max(min(scan, m.lease()/3), time.Millisecond)
}

// Run runs, until ctx ends, the managed agents (Manages; every agent of
// every project when nil) whose lease (brabo.Tx.ClaimAgent) this manager
// holds under Owner, so that of all the processes sharing the store
// exactly one runs each agent (DESIGN §7.2). An agent it holds has a live
// actor only while it works or is among the MaxLive most recent waits; a
// waiting agent is otherwise parked (a row in the store), and an idle one
// is nothing but its lease (park.go):
//
//   - every tick (the shorter of Scan and Lease/3) it claims every managed
//     agent in one transaction: a free agent, a new one, or one whose
//     holder stopped renewing (a process that died) and whose lease ran
//     out is taken. The agents just taken whose runs wait are parked, and
//     those whose action was decided meanwhile resumed from the store; the
//     leases it holds are renewed by the same claim;
//   - an agent whose lease another process holds now (taken over after it
//     ran out here, for instance after a long pause) has its actor stopped,
//     and so has every agent when the leases could not be renewed and
//     would run out before the next tick (the store is unreachable). An
//     actor stops between two turns: a turn in progress is finished and
//     recorded, never cut short;
//   - each tick makes the live actors check their run against the store (a
//     run resumed or blocked by another process is given up), blocks the
//     runs a stopped process left working mid-turn (recoverInterrupted),
//     and starts an actor for the idle agents it holds in the projects
//     that have todo tasks under their cap (dispatch);
//   - when ctx ends it waits for its actors to stop, then releases its
//     leases, so another process takes the agents over at its next tick.
//
// Run puts the manager in lease mode, for good: every transaction that
// claims a task, resumes a run or records a turn's outcome first checks
// that this process holds the agent's lease (fence) and writes nothing
// otherwise, the actor then stopping.
//
// Leases are measured by the wall clock (time.Now), not by Clock. Run
// returns an error only when the manager cannot run (no Owner, store or
// model); store errors are logged and tried again at the next tick.
func (m *Manager) Run(ctx context.Context) error {
	if m.Owner == "" {
		return errors.New("devagent: Run needs an Owner to name this process in agent leases")
	}
	if m.Store == nil || m.Model == nil {
		return errors.New("devagent: the manager needs a store and a model")
	}
	m.leased.Store(true)
	held := map[string]time.Time{} // agent id → when its lease runs out unless renewed
	t := time.NewTicker(m.tick())
	defer t.Stop()
	for {
		m.renew(ctx, held)
		select {
		case <-ctx.Done():
			m.Wait()
			m.release(held)
			m.mu.Lock()
			m.held, m.parked = nil, nil
			m.mu.Unlock()
			return nil
		case <-t.C:
		}
	}
}

// renewChunk is how many agents one renewal transaction claims.
var renewChunk = 2000

// renew claims the managed agents, starts the actors of the agents won
// and stops those of the agents lost.
func (m *Manager) renew(ctx context.Context, held map[string]time.Time) {
	if ctx.Err() != nil {
		return
	}
	now := time.Now()
	agents, leases, err := m.managedAgents(ctx)
	if err != nil {
		m.renewFailed(ctx, held, now, fmt.Errorf("listing the agents: %w", err))
		return
	}
	// An agent another process holds a lease of that has not run out is
	// left out: its claim could not win (ClaimAgents takes a lease only
	// once it ran out), and with several processes most agents are
	// another's. It is claimed at the first tick that reads it run out.
	ids := make([]string, 0, len(agents))
	for _, ag := range agents {
		if l := leases[ag.ID]; l != nil && l.Owner != m.Owner && !l.Until.Before(now) {
			continue
		}
		ids = append(ids, ag.ID)
	}
	// A store that does not answer must not hold the renewal past the
	// point where the leases could run out unnoticed. Bulk claims, not one
	// statement per agent, and one transaction per renewChunk agents: the
	// renewal goes through the store's writer, and every proposal waits
	// behind a transaction it is in (100,000 agents in one took 0.7 s on
	// PostgreSQL; in chunks, proposals go in between). ClaimAgents takes
	// each chunk's rows in the order of their ids, whatever process runs it.
	won := make(map[string]bool, len(ids))
	tctx, cancel := context.WithTimeout(ctx, m.lease()/3)
	for rest := ids; len(rest) > 0 && err == nil; {
		chunk := rest[:min(len(rest), renewChunk)]
		rest = rest[len(chunk):]
		err = m.Store.Update(tctx, func(tx brabo.Tx) error {
			got, err := tx.ClaimAgents(tctx, chunk, m.Owner, now, m.lease())
			for id := range got {
				won[id] = true
			}
			return err
		})
	}
	cancel()
	if err != nil {
		m.renewFailed(ctx, held, now, fmt.Errorf("claiming the agents' leases: %w", err))
		return
	}
	listed := make(map[string]bool, len(agents))
	var fresh map[string]bool // agents won at this tick
	for _, ag := range agents {
		listed[ag.ID] = true
		if !won[ag.ID] {
			if _, ok := held[ag.ID]; ok {
				delete(held, ag.ID)
				m.lose(ag.ID, "another process holds its lease now")
			}
			continue
		}
		if _, ok := held[ag.ID]; !ok {
			m.log().Info("devagent: holding the agent's lease", "agent", ag.ID, "owner", m.Owner)
			if fresh == nil {
				fresh = map[string]bool{}
			}
			fresh[ag.ID] = true
		}
		held[ag.ID] = now.Add(m.lease())
		if a := m.actorOf(ag.ID); a != nil {
			a.nudge()
		}
	}
	for id := range held {
		if !listed[id] {
			delete(held, id)
			m.lose(id, "the agent is no longer managed here")
		}
	}
	m.mu.Lock()
	m.held = make(map[string]bool, len(held))
	for id := range held {
		m.held[id] = true
	}
	m.mu.Unlock()
	if len(fresh) > 0 {
		m.takeOver(ctx, fresh)
	}
	m.recoverInterrupted(ctx)
	m.dispatch(ctx, agents)
}

// takeOver parks the agents just won whose runs wait in the store (no
// goroutine: their decisions come through the store's path), and resumes
// those whose action was decided meanwhile.
func (m *Manager) takeOver(ctx context.Context, fresh map[string]bool) {
	list, err := m.waitingAgents(ctx)
	if err != nil {
		m.log().Error("devagent: the waiting agents taken over", "err", err)
		return
	}
	m.takeBack(ctx, list, func(w brabo.WaitingAgent) bool { return fresh[w.Agent.ID] })
}

// dispatch starts an actor for the held agents that have neither a live
// actor nor a wait, in the projects that have todo tasks and are under
// their cap on parallel dev agents: at most as many as there are tasks
// to claim. The actor claims one, or goes at once if another took it.
func (m *Manager) dispatch(ctx context.Context, agents []*brabo.Agent) {
	byProject := map[string][]*brabo.Agent{}
	m.mu.Lock()
	for _, ag := range agents {
		key := brabo.AgentKey(ag.ID)
		_, live := m.actors[key]
		_, parked := m.parked[key]
		if m.held[ag.ID] && !live && !parked {
			byProject[ag.ProjectID] = append(byProject[ag.ProjectID], ag)
		}
	}
	m.mu.Unlock()
	if len(byProject) == 0 {
		return
	}
	room := map[string]int{}
	err := m.Store.View(ctx, func(tx brabo.Tx) error {
		for pid := range byProject {
			p, err := tx.Project(ctx, pid)
			if err != nil {
				return err
			}
			tasks, err := tx.Tasks(ctx, pid)
			if err != nil {
				return err
			}
			todo, working := 0, 0
			for _, t := range tasks {
				switch t.Status {
				case brabo.TaskTodo:
					todo++
				case brabo.TaskInProgress:
					working++
				}
			}
			room[pid] = min(todo, p.MaxParallel-working)
		}
		return nil
	})
	if err != nil {
		m.log().Error("devagent: looking for tasks to claim", "err", err)
		return
	}
	for pid, idle := range byProject {
		for _, ag := range idle[:max(0, min(room[pid], len(idle)))] {
			if err := m.start(ctx, ag, false); err != nil {
				m.log().Error("devagent: starting an actor", "agent", ag.ID, "err", err)
			}
		}
	}
}

// renewFailed stops the actors whose leases could run out before the next
// tick: another process may take them then.
func (m *Manager) renewFailed(ctx context.Context, held map[string]time.Time, now time.Time, err error) {
	if ctx.Err() != nil {
		return
	}
	m.log().Error("devagent: renewing agent leases", "owner", m.Owner, "err", err)
	for id, until := range held {
		if !now.Add(m.tick()).Before(until) {
			delete(held, id)
			m.lose(id, "its lease could not be renewed in time")
		}
	}
}

// lose stops the agent's actor here, between two turns, and forgets its
// wait: the agent is another process's now.
func (m *Manager) lose(agentID, why string) {
	m.log().Warn("devagent: stopping the actor: the agent's lease is lost", "agent", agentID, "owner", m.Owner, "why", why)
	m.mu.Lock()
	delete(m.held, agentID)
	delete(m.parked, brabo.AgentKey(agentID))
	m.mu.Unlock()
	if a := m.actorOf(agentID); a != nil {
		a.lose()
	}
}

// release ends the leases held, once the actors have stopped.
func (m *Manager) release(held map[string]time.Time) {
	if len(held) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := m.Store.Update(ctx, func(tx brabo.Tx) error {
		for id := range held {
			if err := tx.ReleaseAgent(ctx, id, m.Owner); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		m.log().Error("devagent: releasing agent leases; they run out by themselves", "owner", m.Owner, "err", err)
	}
}

// managedAgents lists the agents of every project that Manages selects,
// and every agent's lease, in one read.
func (m *Manager) managedAgents(ctx context.Context) ([]*brabo.Agent, map[string]*brabo.AgentLease, error) {
	var list []*brabo.Agent
	var leases map[string]*brabo.AgentLease
	err := m.Store.View(ctx, func(tx brabo.Tx) error {
		ps, err := tx.Projects(ctx)
		if err != nil {
			return err
		}
		if leases, err = tx.AgentLeases(ctx); err != nil {
			return err
		}
		for _, p := range ps {
			ags, err := tx.Agents(ctx, p.ID)
			if err != nil {
				return err
			}
			for _, ag := range ags {
				if m.Manages == nil || m.Manages(ag) {
					list = append(list, ag)
				}
			}
		}
		return nil
	})
	return list, leases, err
}

// actorOf is the agent's live actor here, nil for none.
func (m *Manager) actorOf(agentID string) *actor {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.actors[brabo.AgentKey(agentID)]
}

// errLeaseLost says this manager no longer holds the agent's lease: the
// write it was about to make is refused (fence).
var errLeaseLost = errors.New("this process no longer holds the agent's lease")

// fence is the first step of every transaction that records a turn's
// claim, start or outcome, in lease mode (Run): it makes sure, inside tx,
// that this manager's Owner holds the agent's lease, and refuses the write
// with errLeaseLost when another process holds it now. The check is a
// ClaimAgent (a renewal when the lease is ours) rather than a read of
// AgentLease: it is a conditional write, so on PostgreSQL it locks the
// lease row until tx commits, and a process taking the agent over at the
// same moment waits for it and then finds the lease renewed. A lease that
// ran out with nobody taking it is taken again: nobody else acted for the
// agent meanwhile. A resume from the store (Resume) takes the lease of an
// agent nobody holds the same way, so no holder recovers its turn as
// interrupted. Outside lease mode (Start without Run) there is no check.
func (m *Manager) fence(ctx context.Context, tx brabo.Tx, agentID string) error {
	if !m.leased.Load() {
		return nil
	}
	ok, err := tx.ClaimAgent(ctx, agentID, m.Owner, time.Now(), m.lease())
	if err != nil {
		return fmt.Errorf("devagent: checking the lease of agent %s: %w", agentID, err)
	}
	if ok {
		return nil
	}
	holder := "another process"
	if l, err := tx.AgentLease(ctx, agentID); err == nil {
		holder = l.Owner
	}
	return fmt.Errorf("devagent: agent %s is held by %s, not %s: %w", agentID, holder, m.Owner, errLeaseLost)
}

// fenced reports whether err is a write refused by fence; if so the actor
// stops (lose), since another process runs the agent now. What the stale
// turn proposed stays recorded in the pipeline; its outcome is dropped.
func (a *actor) fenced(err error, what string) bool {
	if !errors.Is(err, errLeaseLost) {
		return false
	}
	a.m.log().Warn("devagent: "+what+" not recorded: another process holds the agent's lease now; stopping the actor",
		"agent", a.agent.ID, "owner", a.m.Owner, "err", err)
	a.lose()
	return true
}
