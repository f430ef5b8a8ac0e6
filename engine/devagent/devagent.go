// Package devagent is the dev agent (DESIGN §7.2): a goroutine actor per
// agent at work, with a mailbox, that takes the oldest todo task of its
// project and works it with the tool loop. An agent that waits for a
// decision, or has no task, is a row in the store, not a goroutine
// (park.go): only the MaxLive most recent waits keep their actor live.
//
// When a pipeline tool's action waits for a human (ADR 0052) the actor
// persists the run — state awaiting_approval, the awaited action id and the
// loop's Ctx as JSON — before anything else, appends dev.awaiting_approval
// to the project's log and goes back to its select loop: it never blocks
// its mailbox. The action's task.action_settled, routed by the wake worker
// (engine/wake) to Manager.Deliver, resumes the loop with the real result
// or the denial reason. Each wait is stored with its deadline, the
// project's wait cap after the suspension (Run.Deadline); the store's
// sweep (engine/wake.Sweeper, calling Manager.Expire) blocks the task of a
// run still waiting then with origin policy, naming the action nobody
// decided. No live actor holds a timer for it.
//
// The run in the store is the truth; the actor is a cache of it. After a
// restart Manager.Restore parks the agents that were waiting (their
// conversations stay in the store), and when no actor holds a run here,
// Manager.Resume (the wake worker's Resumer) resumes it from its stored
// Ctx. A Ctx that cannot be restored blocks the task with origin infra and
// a diagnostic naming the action, when the decision arrives; the action
// itself stays as the pipeline recorded it.
//
// Each agent works in its own git worktree of the project's repository,
// <scope root>/.brabo/worktrees/<agent id> (WorktreeRel; WorktreesDir says
// why there), on a branch per task, brabo/<task id> (TaskBranch). The
// worktree is made when the agent claims the task (a claim that cannot
// make it blocks the task with origin infra), and it is held as it is,
// never removed or reset, while the agent works, waits in
// awaiting_approval or awaiting_pr, and across a restart: its path depends
// on the agent alone, so the restored agent finds it. The tools act there:
// the terminal's cwd and write_file's path are rebased onto it (a path
// that leaves it is refused), git_commit commits there, read_file reads
// there, and git_push pushes the task's branch (a pipeline action, capped,
// so it waits for a human like any pending action). When the pull request
// is opened the task is in review and the worktree is removed; the branch
// stays. A task that ends otherwise (blocked, or done without a pull
// request) keeps its worktree for a human to look at, until the agent
// claims its next task: then a clean one is removed and one holding
// uncommitted work is moved aside, to <agent id>-<task id>.
//
// The agent ends a task with report_done {title, summary}. It is refused
// (the tool result says so, nothing is proposed, and it counts as a
// failing tool result toward the loop's circuit breaker) until a terminal
// command has exited 0 in the conversation; then it proposes, through the
// pipeline, a pr_open of the task's branch into main for the task. pr_open
// is capped, so it waits for a human: the run is stored awaiting_pr with
// the action id and the Ctx, dev.awaiting_pr is appended, and the task
// stays in_progress. The
// action's task.pr_settled releases it without calling the model again:
//
//   - opened: the run is done and the agent takes its next task. The task
//     is in_review: the pipeline moved it there, with a
//     backlog.task_status_changed naming the PR, in the transaction that
//     opened the PR; the merge of that PR, when it executes, moves it to
//     done, once (DESIGN §6.4). No second done is ever recorded.
//   - opened: false (a human denied the pr_open): a user decision, not a
//     failure. The task is blocked with origin user and the human's reason,
//     so it shows who stopped it and why, and never counts as an infra or
//     code failure; a human moves it on from there.
//
// The pipeline also enqueues task.action_settled for the pr_open: a run in
// awaiting_pr ignores it when it says executed or denied (task.pr_settled,
// written in the same transaction, is the signal), and resumes the loop
// with it when it says failed (no pull request was opened, for instance the
// branch is not on the remote): the model reads the error and may push and
// report again. The wait cap applies to awaiting_pr as to
// awaiting_approval.
package devagent

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/policy"
)

// Events the dev agent appends to its project's log.
const (
	EventAwaitingApproval = "dev.awaiting_approval"
	EventAwaitingPR       = "dev.awaiting_pr"
	EventTaskBlocked      = "backlog.task_blocked"
	EventLimitReached     = "toolloop.limit_reached"
)

// Defaults for the zero values of Manager's tuning fields.
const (
	DefaultWaitCap     = brabo.DefaultWaitCap
	DefaultMailboxSize = 4
	DefaultIdlePoll    = 2 * time.Second
)

// Clock is the time runs are stamped with, their wait-cap deadlines
// included; tests use a fake.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now().UTC() }

// Scoper gives a project's scope root; *pipeline.Service satisfies it.
type Scoper interface {
	ScopeRoot(p *brabo.Project) (policy.Scope, error)
}

var _ Scoper = (*pipeline.Service)(nil)

// Manager holds the dev agent actors of this process. It is the wake
// worker's Local (Deliver) and Resumer (Resume).
type Manager struct {
	Store    brabo.Store
	Proposer toolloop.Proposer
	Scoper   Scoper
	Model    model.Model
	System   string
	// MaxIterations bounds the model calls of one task's conversation
	// (toolloop's default when zero).
	MaxIterations int
	// WaitCap is the default inactivity cap, for a project that sets
	// none of its own (Project.WaitCapSec): how long a run may wait for a
	// decision before its task is blocked with origin policy
	// (DefaultWaitCap when zero).
	WaitCap time.Duration
	// Clock stamps the runs and their deadlines (the real clock when nil).
	Clock Clock
	// MailboxSize is each actor's buffer (DefaultMailboxSize when zero);
	// a full mailbox refuses a delivery, which the wake worker then
	// retries through the store.
	MailboxSize int
	// IdlePoll is how often an idle actor looks for a todo task, in real
	// time (DefaultIdlePoll when zero).
	IdlePoll time.Duration
	// Manages selects the agents Run keeps actors for and Restore brings
	// back (all when nil).
	Manages func(*brabo.Agent) bool
	// Owner names this process in agent leases (Run). The wake worker of
	// the process must have the same Owner: workers leave the messages of
	// a held agent to the worker whose Owner holds it.
	Owner string
	// Lease is how long an agent's lease lasts unless renewed
	// (DefaultLease when zero): an agent whose process died is taken over
	// after it. Run renews every Lease/3 at least.
	Lease time.Duration
	// Scan is how often Run looks for new agents and renews its leases
	// (DefaultScan when zero, and never less often than Lease/3).
	Scan time.Duration
	Log  *slog.Logger

	// MaxLive bounds the actors kept live (a goroutine and a mailbox)
	// while they wait for a decision: the most recent waits, a cache of
	// recently woken agents whose next decision is delivered to their
	// mailbox. Past it the oldest waiting actor parks: its goroutine ends,
	// its run waits in the store, and its decision is resumed from there
	// (park.go). DefaultMaxLive when zero; negative keeps none.
	MaxLive int

	// leased is set by Run: the manager is in lease mode (fence, recover).
	leased atomic.Bool

	mu     sync.Mutex
	actors map[string]*actor
	// parked are the agents known here to wait in the store with no live
	// actor (actor key → nothing): Live, not Running.
	parked map[string]struct{}
	// held are the agents whose lease this manager holds (Run).
	held map[string]bool
	// lru lists the live actors that wait, oldest wait first; lruPos
	// finds an actor's place in it.
	lru    *list.List
	lruPos map[string]*list.Element
	locks  map[string]*sync.Mutex
	wg     sync.WaitGroup
}

func (m *Manager) clock() Clock {
	if m.Clock != nil {
		return m.Clock
	}
	return realClock{}
}

func (m *Manager) now() time.Time { return m.clock().Now().UTC() }

func (m *Manager) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.Default()
}

func (m *Manager) waitCap() time.Duration {
	if m.WaitCap > 0 {
		return m.WaitCap
	}
	return DefaultWaitCap
}

// keyLock serialises restoring and store-side resuming of one actor's run
// in this process.
func (m *Manager) keyLock(key string) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks == nil {
		m.locks = map[string]*sync.Mutex{}
	}
	l, ok := m.locks[key]
	if !ok {
		l = &sync.Mutex{}
		m.locks[key] = l
	}
	return l
}

// Start starts the agent's actor, unless one is live here already. The
// actor first takes back the agent's run waiting for approval, if the
// store has one; otherwise it claims todo tasks, and polls for them while
// it has none (a pinned actor). It stops when ctx ends. Past MaxLive
// actors waiting, it parks like any other (park.go).
//
// Start takes no lease: it is for a process that alone runs the agent
// (tests, benchmarks), and neither fences its writes nor recovers cut
// turns. Run is what a process sharing its store with others uses; it
// starts an actor for an agent it holds the lease of only while the agent
// has work.
func (m *Manager) Start(ctx context.Context, agent *brabo.Agent) error {
	return m.start(ctx, agent, true)
}

// start starts the agent's actor unless one is live here; pinned says
// whether it stays when it has no task (Start) or goes (Run).
func (m *Manager) start(ctx context.Context, agent *brabo.Agent, pinned bool) error {
	if m.Store == nil || m.Model == nil {
		return errors.New("devagent: the manager needs a store and a model")
	}
	key := brabo.AgentKey(agent.ID)
	size := m.MailboxSize
	if size <= 0 {
		size = DefaultMailboxSize
	}
	m.mu.Lock()
	if m.actors == nil {
		m.actors = map[string]*actor{}
	}
	if _, ok := m.actors[key]; ok {
		m.mu.Unlock()
		return nil
	}
	a := &actor{m: m, agent: agent, key: key, mailbox: make(chan brabo.OutboxMessage, size),
		stop: make(chan struct{}), sync: make(chan struct{}, 1), pinned: pinned}
	m.actors[key] = a
	delete(m.parked, key) // the actor restores the waiting run, if any
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		defer func() {
			m.mu.Lock()
			if m.actors[key] == a {
				delete(m.actors, key)
				m.unlist(key)
			}
			m.mu.Unlock()
		}()
		a.loop(ctx)
	}()
	return nil
}

// Wait returns when every actor started so far has stopped.
func (m *Manager) Wait() { m.wg.Wait() }

// waitsHere reports whether this process's actor for the key waits on the
// action.
func (m *Manager) waitsHere(actorKey, actionID string) bool {
	m.mu.Lock()
	a, ok := m.actors[actorKey]
	m.mu.Unlock()
	return ok && a.waitsFor(actionID)
}

// Waits reports whether the agent's actor runs in this process (a live
// goroutine) and waits for a decision.
func (m *Manager) Waits(agentID string) bool {
	m.mu.Lock()
	a, ok := m.actors[brabo.AgentKey(agentID)]
	m.mu.Unlock()
	if !ok {
		return false
	}
	id, _ := a.waitingFor.Load().(string)
	return id != ""
}

// Live reports whether this process runs the agent: it holds the agent's
// lease (Run), or has its actor live, or knows it waits in the store with
// no actor (parked). A waiting agent is a row, not a goroutine (Running
// says whether a goroutine runs it now).
func (m *Manager) Live(agentID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := brabo.AgentKey(agentID)
	_, live := m.actors[key]
	_, parked := m.parked[key]
	return live || parked || m.held[agentID]
}

// Running reports whether a goroutine runs the agent's actor here now: it
// works, or waits among the MaxLive most recent waits.
func (m *Manager) Running(agentID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.actors[brabo.AgentKey(agentID)]
	return ok
}

func waiting(s brabo.RunState) bool {
	return s == brabo.RunAwaitingApproval || s == brabo.RunAwaitingPR
}

// Deliver puts msg in the mailbox of the actor with that key, without
// blocking: it reports false when no actor with that key is live here or
// its mailbox is full (the wake worker then resumes through the store).
func (m *Manager) Deliver(actorKey string, msg brabo.OutboxMessage) bool {
	// Held under m.mu until the message is in the mailbox: an actor parks
	// (retire) only with an empty mailbox, under the same lock, so a
	// message delivered here is never left in the mailbox of an actor that
	// went away.
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.actors[actorKey]
	// Only an actor that waits on this very action takes it: an actor live
	// here but idle (the run was suspended by another process) must leave
	// it to the store's way, or the message would be lost on it.
	if !ok || a.retired || !a.waitsFor(msg.ActionID) {
		return false
	}
	select {
	case a.mailbox <- msg:
		return true
	default:
		m.log().Warn("devagent: mailbox full; the message goes the store's way", "actor", actorKey, "action", msg.ActionID)
		return false
	}
}

// apply persists an outcome of the loop. On a suspension the run is saved
// awaiting_approval with its Ctx, and dev.awaiting_approval appended, in
// one transaction.
func (m *Manager) apply(ctx context.Context, st *state, out toolloop.Outcome) (*toolloop.AwaitingApproval, error) {
	ctx = context.WithoutCancel(ctx) // an outcome reached is recorded, even while shutting down
	switch o := out.(type) {
	case toolloop.AwaitingApproval:
		raw, err := json.Marshal(o.Ctx)
		if err != nil {
			return nil, m.block(ctx, st, fmt.Sprintf("the suspended conversation (awaiting action %s) could not be encoded: %v", o.ActionID, err), brabo.OriginCode, nil)
		}
		// report_done's pr_open waiting is the run's last wait: awaiting_pr.
		runState, event := brabo.RunAwaitingApproval, EventAwaitingApproval
		payload := map[string]any{"taskId": st.task.ID, "actionId": o.ActionID, "toolName": o.ToolName}
		if o.ToolName == ReportDone {
			runState, event = brabo.RunAwaitingPR, EventAwaitingPR
			if args, ok := pendingArgs(o.Ctx); ok {
				payload["title"], payload["summary"] = args.Title, args.Summary
			}
		}
		st.run.State, st.run.AwaitingActionID, st.run.Ctx, st.run.UpdatedAt = runState, o.ActionID, raw, m.now()
		err = m.Store.Update(ctx, func(tx brabo.Tx) error {
			if err := m.fence(ctx, tx, st.agent.ID); err != nil {
				return err
			}
			// The wait's deadline: the project's cap as it is now.
			p, err := tx.Project(ctx, st.project.ID)
			if err != nil {
				return err
			}
			st.project = p
			st.run.Deadline = st.run.UpdatedAt.Add(p.WaitCap(m.waitCap()))
			if err := tx.SaveRun(ctx, st.run); err != nil {
				return err
			}
			return tx.AppendEvent(ctx, &brabo.Event{ProjectID: st.project.ID, Type: event, ActorID: st.agent.ID,
				ActionID: o.ActionID, CreatedAt: st.run.UpdatedAt, Payload: mustJSON(payload)})
		})
		if err != nil {
			return nil, fmt.Errorf("devagent: persisting the suspension of run %s on action %s: %w", st.run.ID, o.ActionID, err)
		}
		return &o, nil
	case toolloop.Done:
		raw, _ := json.Marshal(o.Ctx)
		now := m.now()
		st.run.State, st.run.AwaitingActionID, st.run.Ctx, st.run.UpdatedAt = brabo.RunDone, "", raw, now
		err := m.Store.Update(ctx, func(tx brabo.Tx) error {
			if err := m.fence(ctx, tx, st.agent.ID); err != nil {
				return err
			}
			if err := endTask(ctx, tx, st, brabo.TaskDone, "", "", now); err != nil {
				return err
			}
			return tx.AppendEvent(ctx, &brabo.Event{ProjectID: st.project.ID, Type: brabo.EventTaskStatusChanged, ActorID: st.agent.ID,
				CreatedAt: now, Payload: mustJSON(map[string]any{"taskId": st.task.ID, "status": brabo.TaskDone})})
		})
		if err != nil {
			return nil, fmt.Errorf("devagent: recording task %s done: %w", st.task.ID, err)
		}
		return nil, nil
	case toolloop.Halted:
		var limit *toolloop.Ctx
		if o.Why == toolloop.WhyMaxIterations {
			limit = &o.Ctx
		}
		if raw, err := json.Marshal(o.Ctx); err == nil {
			st.run.Ctx = raw
		}
		return nil, m.block(ctx, st, o.Why, o.Origin, limit)
	}
	return nil, m.block(ctx, st, fmt.Sprintf("the tool loop ended with an unknown outcome %T", out), brabo.OriginCode, nil)
}

// block moves the task to blocked and the run to blocked (awaiting
// nothing, so a later decision resumes nothing), with
// backlog.task_blocked; limit, when set, adds toolloop.limit_reached.
func (m *Manager) block(ctx context.Context, st *state, why string, origin brabo.Origin, limit *toolloop.Ctx) error {
	ctx = context.WithoutCancel(ctx)
	now := m.now()
	prev := *st.run
	err := m.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := m.fence(ctx, tx, st.agent.ID); err != nil {
			return err
		}
		if err := leaveRun(ctx, tx, st.run, brabo.RunBlocked, now); err != nil {
			return err
		}
		if err := endTask(ctx, tx, st, brabo.TaskBlocked, why, origin, now); err != nil {
			return err
		}
		if limit != nil {
			max := st.loop.MaxIterations
			if max <= 0 {
				max = toolloop.DefaultMaxIterations
			}
			if err := tx.AppendEvent(ctx, &brabo.Event{ProjectID: st.project.ID, Type: EventLimitReached, ActorID: st.agent.ID, CreatedAt: now,
				Payload: mustJSON(map[string]any{"taskId": st.task.ID, "iteration": limit.Iterations, "max_iterations": max})}); err != nil {
				return err
			}
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: st.project.ID, Type: EventTaskBlocked, ActorID: st.agent.ID, CreatedAt: now,
			Payload: mustJSON(map[string]any{"taskId": st.task.ID, "reason": why, "origin": origin})})
	})
	if err != nil {
		*st.run = prev
		return fmt.Errorf("devagent: blocking task %s (%s): %w", st.task.ID, why, err)
	}
	return nil
}

// endTask records, inside tx, how the task ended (done, or blocked with
// why and origin) and saves the run as it now stands: the one write every
// way out of a task shares.
func endTask(ctx context.Context, tx brabo.Tx, st *state, status brabo.TaskStatus, why string, origin brabo.Origin, now time.Time) error {
	task, err := tx.Task(ctx, st.task.ID)
	if err != nil {
		return err
	}
	task.Status, task.BlockedReason, task.BlockedOrigin, task.UpdatedAt = status, why, origin, now
	if err := tx.UpdateTask(ctx, task); err != nil {
		return err
	}
	st.task = task
	return tx.SaveRun(ctx, st.run)
}
