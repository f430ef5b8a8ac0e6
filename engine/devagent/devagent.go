// Package devagent is the dev agent (DESIGN §7.2): one goroutine actor per
// agent, with a mailbox, that takes the oldest todo task of its project and
// works it with the tool loop.
//
// When a pipeline tool's action waits for a human (ADR 0052) the actor
// persists the run — state awaiting_approval, the awaited action id and the
// loop's Ctx as JSON — before anything else, appends dev.awaiting_approval
// to the project's log and goes back to its select loop: it never blocks
// its mailbox. The action's task.action_settled, routed by the wake worker
// (engine/wake) to Manager.Deliver, resumes the loop with the real result
// or the denial reason. Waiting longer than the wait cap blocks the task
// with origin policy ("nobody decided").
//
// The run in the store is the truth; the actor is a cache of it. After a
// restart Manager.Restore brings back the actors that were waiting, and
// when no actor holds a run here, Manager.Resume (the wake worker's
// Resumer) resumes it from its stored Ctx. A Ctx that cannot be restored
// blocks the task with origin infra and a diagnostic naming the action; the
// action itself stays as the pipeline recorded it.
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
// is opened the task is done and the worktree is removed; the branch
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
//   - opened: the task is done and its backlog.task_status_changed names
//     the PR number; the run is done.
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
	DefaultWaitCap     = 24 * time.Hour
	DefaultMailboxSize = 4
	DefaultIdlePoll    = 2 * time.Second
)

// Clock is the time the wait cap is measured with; tests use a fake.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now().UTC() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

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
	// WaitCap is the task inactivity cap: how long a run may wait for a
	// decision before its task is blocked with origin policy
	// (DefaultWaitCap when zero).
	WaitCap time.Duration
	// Clock measures the wait cap (the real clock when nil).
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

	// leased is set by Run: the manager is in lease mode (fence, recover).
	leased atomic.Bool

	mu     sync.Mutex
	actors map[string]*actor
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
// store has one; otherwise it claims todo tasks. It stops when ctx ends.
//
// Start takes no lease: it is for a process that alone runs the agent
// (tests, benchmarks), and neither fences its writes nor recovers cut
// turns. Run is what a process sharing its store with others uses; it
// starts the actors of the agents it holds the lease of.
func (m *Manager) Start(ctx context.Context, agent *brabo.Agent) error {
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
		stop: make(chan struct{}), sync: make(chan struct{}, 1)}
	m.actors[key] = a
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		defer func() {
			m.mu.Lock()
			if m.actors[key] == a {
				delete(m.actors, key)
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

// Live reports whether the agent's actor runs in this process.
func (m *Manager) Live(agentID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.actors[brabo.AgentKey(agentID)]
	return ok
}

// Restore starts the actors of the managed agents whose runs wait for
// approval in the store: call it at start-up of a process that runs its
// actors with Start (Run restores the agents it holds by itself). Each restored actor waits
// for its decision again (or blocks its task when the stored Ctx cannot be
// restored).
func (m *Manager) Restore(ctx context.Context) error {
	runs, err := m.waitingRuns(ctx)
	if err != nil {
		return fmt.Errorf("devagent: listing waiting runs: %w", err)
	}
	seen := map[string]bool{}
	var errs []error
	for _, r := range runs {
		id, ok := brabo.AgentOfKey(r.ActorKey)
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		var agent *brabo.Agent
		err := m.Store.View(ctx, func(tx brabo.Tx) error {
			var err error
			agent, err = tx.Agent(ctx, id)
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("devagent: agent of run %s: %w", r.ID, err))
			continue
		}
		if m.Manages != nil && !m.Manages(agent) {
			continue
		}
		if err := m.Start(ctx, agent); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitingRuns lists the runs waiting for a decision: awaiting_approval
// and awaiting_pr.
func (m *Manager) waitingRuns(ctx context.Context) ([]*brabo.Run, error) {
	var runs []*brabo.Run
	err := m.Store.View(ctx, func(tx brabo.Tx) error {
		for _, st := range []brabo.RunState{brabo.RunAwaitingApproval, brabo.RunAwaitingPR} {
			rs, err := tx.RunsInState(ctx, st)
			if err != nil {
				return err
			}
			runs = append(runs, rs...)
		}
		return nil
	})
	return runs, err
}

func waiting(s brabo.RunState) bool {
	return s == brabo.RunAwaitingApproval || s == brabo.RunAwaitingPR
}

// Deliver puts msg in the mailbox of the actor with that key, without
// blocking: it reports false when no actor with that key is live here or
// its mailbox is full (the wake worker then resumes through the store).
func (m *Manager) Deliver(actorKey string, msg brabo.OutboxMessage) bool {
	m.mu.Lock()
	a, ok := m.actors[actorKey]
	m.mu.Unlock()
	// Only an actor that waits on this very action takes it: an actor live
	// here but idle (the run was suspended by another process) must leave
	// it to the store's way, or the message would be lost on it.
	if !ok || !a.waitsFor(msg.ActionID) {
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
	st, err := m.loadRun(ctx, run.ID)
	if err != nil {
		return err
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
			return m.finishPR(ctx, st, step.pr)
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
	c, err := m.restoreCtx(st.run)
	if err != nil {
		return m.blockUnrestorable(ctx, st, err)
	}
	next, err := m.resume(ctx, st, c, settled)
	if errors.Is(err, errLeftElsewhere) {
		return nil // resumed by someone else first: delivered
	}
	if err != nil {
		return err
	}
	_ = next // no live actor: a new suspension waits for the next delivery
	return nil
}

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
	st := &state{}
	err := m.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if st.run, err = tx.Run(ctx, runID); err != nil {
			return err
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
