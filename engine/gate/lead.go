package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// Defaults for the zero values of Lead's fields.
const (
	DefaultLeadID      = "qa-lead"
	DefaultArea        = "qa"
	DefaultMailboxSize = 16
)

// Lead is a project's QA lead. It is the wake worker's Local (Deliver) and
// Resumer (Resume) for its sub-agents' keys.
type Lead struct {
	Store    brabo.Store
	Proposer toolloop.Proposer
	// Scoper gives the project's scope root, the git repository where the
	// area checks out the task's work (*pipeline.Service satisfies it).
	// Without it every area fails with origin infra.
	Scoper    devagent.Scoper
	ProjectID string
	// ID is the lead's actor id in the log (DefaultLeadID when "").
	ID string
	// Area names the area (DefaultArea when "").
	Area string
	// Delegations are the sub-agents' names, in order
	// (DefaultDelegations when nil); each is an agent of the project.
	Delegations []string
	// Models gives each sub-agent (by name) its model; Model is the
	// fallback.
	Models map[string]model.Model
	Model  model.Model
	// Systems gives each sub-agent its system prompt (a default names
	// its role).
	Systems       map[string]string
	MaxIterations int
	MailboxSize   int
	// WaitCap is the default inactivity cap of a waiting area, for a
	// project that sets none (Project.WaitCapSec); brabo.DefaultWaitCap
	// when zero. The wait's deadline is stored with its run, and the
	// store's sweep expires it (Expire).
	WaitCap time.Duration
	Now     func() time.Time
	Log     *slog.Logger

	work    sync.Mutex // serialises the lead's areas: one actor per project
	mu      sync.Mutex
	waiting map[string]string // sub-agent key → awaited action (a cache of the runs)
	mailbox chan brabo.OutboxMessage
	wg      sync.WaitGroup
}

func (l *Lead) now() time.Time {
	if l.Now != nil {
		return l.Now().UTC()
	}
	return time.Now().UTC()
}

func (l *Lead) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.Default()
}

func (l *Lead) id() string {
	if l.ID != "" {
		return l.ID
	}
	return DefaultLeadID
}

func (l *Lead) area() string {
	if l.Area != "" {
		return l.Area
	}
	return DefaultArea
}

func (l *Lead) delegations() []string {
	if l.Delegations != nil {
		return slices.Clone(l.Delegations)
	}
	return slices.Clone(DefaultDelegations)
}

// Start starts the lead's mailbox, where Deliver puts the settled events of
// the actions it waits for; it stops when ctx ends. Without it the wake
// worker resumes through Resume.
func (l *Lead) Start(ctx context.Context) {
	size := l.MailboxSize
	if size <= 0 {
		size = DefaultMailboxSize
	}
	mb := make(chan brabo.OutboxMessage, size)
	l.mu.Lock()
	l.mailbox = mb
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() {
			l.mu.Lock()
			if l.mailbox == mb {
				l.mailbox = nil
			}
			l.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case msg := <-mb:
				if err := l.handle(ctx, msg); err != nil {
					l.log().Error("gate: resuming an area", "actor", msg.ActorKey, "action", msg.ActionID, "err", err)
				}
			}
		}
	}()
}

// Wait returns when the mailbox started by Start has stopped.
func (l *Lead) Wait() { l.wg.Wait() }

// Restore takes back the project's gate areas that wait for approval in
// the store (call it at start-up), so Deliver knows their keys again. The
// Run is the truth: Resume works without it.
func (l *Lead) Restore(ctx context.Context) error {
	var runs []*brabo.Run
	if err := l.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		runs, err = tx.RunsInState(ctx, brabo.RunAwaitingApproval)
		return err
	}); err != nil {
		return fmt.Errorf("gate: listing waiting runs: %w", err)
	}
	for _, r := range runs {
		if r.ProjectID != l.ProjectID {
			continue
		}
		if _, err := decodeState(r.Ctx); err != nil {
			continue // not a gate area's run
		}
		l.setWaiting(r.ActorKey, r.AwaitingActionID)
	}
	return nil
}

func (l *Lead) setWaiting(key, actionID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiting == nil {
		l.waiting = map[string]string{}
	}
	if actionID == "" {
		delete(l.waiting, key)
	} else {
		l.waiting[key] = actionID
	}
}

// Waits reports whether the lead knows of an area waiting for the action
// under the sub-agent's key.
func (l *Lead) Waits(actorKey, actionID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return actionID != "" && l.waiting[actorKey] == actionID
}

// Deliver puts msg in the lead's mailbox when the lead is started and an
// area of it waits for that action under that key, without blocking; it
// reports false otherwise (the wake worker then resumes through Resume).
func (l *Lead) Deliver(actorKey string, msg brabo.OutboxMessage) bool {
	if !l.Waits(actorKey, msg.ActionID) {
		return false
	}
	l.mu.Lock()
	mb := l.mailbox
	l.mu.Unlock()
	if mb == nil {
		return false
	}
	select {
	case mb <- msg:
		return true
	default:
		return false
	}
}

// Resume resumes the area waiting in run with a settled message
// (wake.Resumer): the sub-agent's loop goes on with the real result or
// the denial reason, then the area's next delegations. It returns once the
// area is saved again: suspended, completed or failed.
func (l *Lead) Resume(ctx context.Context, run *brabo.Run, msg brabo.OutboxMessage) error {
	return l.handle(ctx, msg)
}

// handle resumes the area that waits for msg's action under msg's key, if
// one still does: a second delivery finds none and is done.
func (l *Lead) handle(ctx context.Context, msg brabo.OutboxMessage) error {
	l.work.Lock()
	defer l.work.Unlock()
	if msg.Topic != brabo.TopicActionSettled {
		l.log().Warn("gate: not resuming on a message of another topic", "topic", msg.Topic, "action", msg.ActionID)
		return nil
	}
	var settled brabo.Settled
	if err := json.Unmarshal(msg.Payload, &settled); err != nil {
		l.log().Error("gate: unreadable settled message", "message", msg.ID, "err", err)
		return nil
	}
	if settled.ActionID == "" {
		settled.ActionID = msg.ActionID
	}
	var run *brabo.Run
	err := l.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		run, err = tx.AwaitingRun(ctx, msg.ActorKey, settled.ActionID)
		return err
	})
	if errors.Is(err, brabo.ErrNotFound) {
		l.setWaiting(msg.ActorKey, "")
		return nil // resumed already by an earlier delivery
	}
	if err != nil {
		return err
	}
	if run.State != brabo.RunAwaitingApproval {
		return nil
	}
	a, err := l.load(ctx, run)
	if err != nil {
		return err
	}
	st, err := decodeState(run.Ctx)
	if err == nil && (st.Loop == nil || st.Current == "" || !st.Loop.Awaits(run.AwaitingActionID)) {
		err = fmt.Errorf("the stored state does not await action %s", run.AwaitingActionID)
	}
	if err != nil {
		sub, _ := brabo.AgentOfKey(run.ActorKey)
		why := fmt.Sprintf("the suspended area could not be restored, so the decision on action %s cannot reach it: %v (the action stays recorded)",
			run.AwaitingActionID, err)
		_, ferr := l.fail(ctx, a, sub, sub, why, brabo.OriginInfra)
		return ferr
	}
	a.state = st
	agent, err := l.subAgent(ctx, a.project.ID, st.Current)
	if err != nil {
		_, ferr := l.fail(ctx, a, st.Current, "", err.Error(), brabo.OriginInfra)
		return ferr
	}
	// The checkout the sub-agent suspended in, as it is: not refreshed.
	co, err := l.openCheckout(ctx, a.project, a.task.ID, st.Worktree, false)
	if err != nil {
		why := fmt.Sprintf("the decision on action %s arrived, but the checkout of the task's work is gone: %v", run.AwaitingActionID, err)
		_, ferr := l.fail(ctx, a, st.Current, agent.ID, why, brabo.OriginInfra)
		return ferr
	}
	a.co, a.state.Worktree = co, co.Rel
	l.setWaiting(msg.ActorKey, "")
	loop := l.buildLoop(agent, a.project, co)
	out := fromLoop(toolloop.Resume(ctx, loop, *st.Loop, settled))
	_, err = l.settle(ctx, a, agent, st.Remaining, st.Verdicts, out)
	return err
}

// area is one gate area in progress.
type area struct {
	run     *brabo.Run
	task    *brabo.Task
	project *brabo.Project
	state   State
	co      checkout // where the sub-agents act
}

func (l *Lead) load(ctx context.Context, run *brabo.Run) (*area, error) {
	a := &area{run: run}
	err := l.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if a.task, err = tx.Task(ctx, run.TaskID); err != nil {
			return err
		}
		a.project, err = tx.Project(ctx, run.ProjectID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gate: loading run %s: %w", run.ID, err)
	}
	return a, nil
}

// RunArea runs the lead's area for a task until it completes, fails, or
// suspends on a sub-agent's action.
func (l *Lead) RunArea(ctx context.Context, taskID string) (Result, error) {
	if l.Store == nil {
		return nil, errors.New("gate: the lead needs a store")
	}
	l.work.Lock()
	defer l.work.Unlock()
	a := &area{}
	err := l.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if a.task, err = tx.Task(ctx, taskID); err != nil {
			return err
		}
		a.project, err = tx.Project(ctx, a.task.ProjectID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gate: loading task %s: %w", taskID, err)
	}
	if l.ProjectID != "" && a.task.ProjectID != l.ProjectID {
		return nil, fmt.Errorf("gate: task %s belongs to project %s, not to this lead's %s", taskID, a.task.ProjectID, l.ProjectID)
	}
	// The lead's own run, saved only when the area ends before any
	// delegation started (no delegations, or the first sub-agent missing).
	a.run = &brabo.Run{ID: brabo.NewID("run"), ProjectID: a.project.ID, ActorKey: "lead:" + l.id(), TaskID: taskID,
		State: brabo.RunWorking, UpdatedAt: l.now()}
	a.state = State{Gate: StateVersion, Area: l.area(), TaskID: taskID}
	delegations := l.delegations()
	if len(delegations) > 0 {
		co, err := l.openCheckout(ctx, a.project, taskID, "", true)
		if err != nil {
			return l.fail(ctx, a, delegations[0], "", err.Error(), brabo.OriginInfra)
		}
		a.co, a.state.Worktree = co, co.Rel
	}
	return l.continueArea(ctx, a, delegations, nil)
}

// continueArea is the area: a recursion over the remaining delegations
// with the verdicts collected so far. It stops (returns Suspended) in the
// middle when a sub-agent waits for a human; consolidation happens only
// when nothing remains.
func (l *Lead) continueArea(ctx context.Context, a *area, remaining []string, verdicts []Verdict) (Result, error) {
	if len(remaining) == 0 {
		return l.consolidate(ctx, a, verdicts)
	}
	name, rest := remaining[0], remaining[1:]
	agent, err := l.subAgent(ctx, a.project.ID, name)
	if err != nil {
		return l.fail(ctx, a, name, "", err.Error(), brabo.OriginInfra)
	}
	// Each delegation has its own Run, keyed by the sub-agent from the
	// start: the store keeps a run's actor key as first saved.
	a.run = &brabo.Run{ID: brabo.NewID("run"), ProjectID: a.project.ID, ActorKey: brabo.AgentKey(agent.ID), TaskID: a.task.ID,
		State: brabo.RunWorking, UpdatedAt: l.now()}
	if err := l.appendEvent(ctx, a, EventDelegationStarted, agent.ID, "",
		map[string]any{"taskId": a.task.ID, "area": l.area(), "subAgent": name}); err != nil {
		return nil, err
	}
	out := fromLoop(toolloop.Run(ctx, l.buildLoop(agent, a.project, a.co), l.prompt(a, name, verdicts)))
	return l.settle(ctx, a, agent, rest, verdicts, out)
}

// settle applies one delegation's outcome and goes on with the area.
func (l *Lead) settle(ctx context.Context, a *area, agent *brabo.Agent, rest []string, verdicts []Verdict, out Outcome) (Result, error) {
	ctx = context.WithoutCancel(ctx) // an outcome reached is recorded, even while shutting down
	name := agent.Name
	switch o := out.(type) {
	case Ok:
		verdicts = append(slices.Clone(verdicts), Verdict{SubAgent: name, Verdict: o.Verdict})
		a.state.Current, a.state.Remaining, a.state.Verdicts, a.state.Loop = "", rest, verdicts, nil
		// The delegation's run is done; it keeps the verdicts so far.
		a.run.State, a.run.AwaitingActionID, a.run.Ctx, a.run.UpdatedAt = brabo.RunDone, "", mustJSON(a.state), l.now()
		err := l.Store.Update(ctx, func(tx brabo.Tx) error {
			if err := tx.SaveRun(ctx, a.run); err != nil {
				return err
			}
			return tx.AppendEvent(ctx, l.event(a, EventDelegationCompleted, agent.ID, "",
				map[string]any{"taskId": a.task.ID, "area": l.area(), "subAgent": name, "verdict": o.Verdict}))
		})
		if err != nil {
			return nil, fmt.Errorf("gate: recording %s's verdict: %w", name, err)
		}
		return l.continueArea(ctx, a, rest, verdicts)
	case Awaiting:
		c := o.Ctx
		a.state.Current, a.state.Remaining, a.state.Verdicts, a.state.Loop = name, rest, verdicts, &c
		key := a.run.ActorKey
		a.run.State, a.run.AwaitingActionID, a.run.Ctx, a.run.UpdatedAt = brabo.RunAwaitingApproval, o.ActionID, mustJSON(a.state), l.now()
		err := l.Store.Update(ctx, func(tx brabo.Tx) error {
			// The wait's deadline: the project's cap as it is now.
			p, err := tx.Project(ctx, a.project.ID)
			if err != nil {
				return err
			}
			a.project = p
			a.run.Deadline = a.run.UpdatedAt.Add(p.WaitCap(l.waitCap()))
			if err := tx.SaveRun(ctx, a.run); err != nil {
				return err
			}
			return tx.AppendEvent(ctx, l.event(a, EventDelegationAwaiting, agent.ID, o.ActionID,
				map[string]any{"taskId": a.task.ID, "area": l.area(), "subAgent": name, "actionId": o.ActionID, "toolName": o.ToolName}))
		})
		if err != nil {
			return nil, fmt.Errorf("gate: persisting the suspension of %s on action %s: %w", name, o.ActionID, err)
		}
		l.setWaiting(key, o.ActionID)
		return Suspended{RunID: a.run.ID, SubAgent: name, ActorKey: key, ActionID: o.ActionID, Verdicts: verdicts}, nil
	case Blocked:
		a.state.Verdicts = verdicts
		return l.fail(ctx, a, name, agent.ID, o.Info, o.Origin)
	}
	return l.fail(ctx, a, name, agent.ID, fmt.Sprintf("the delegation ended with an unexpected outcome %T", out), brabo.OriginCode)
}

// consolidate ends the area: gate.completed with every verdict, in order.
func (l *Lead) consolidate(ctx context.Context, a *area, verdicts []Verdict) (Result, error) {
	ctx = context.WithoutCancel(ctx)
	if verdicts == nil {
		verdicts = []Verdict{}
	}
	a.state.Current, a.state.Remaining, a.state.Verdicts, a.state.Loop = "", nil, verdicts, nil
	a.run.State, a.run.AwaitingActionID, a.run.Ctx, a.run.UpdatedAt = brabo.RunDone, "", mustJSON(a.state), l.now()
	err := l.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.SaveRun(ctx, a.run); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, l.event(a, EventGateCompleted, l.id(), "",
			map[string]any{"taskId": a.task.ID, "area": l.area(), "verdicts": verdicts}))
	})
	if err != nil {
		return nil, fmt.Errorf("gate: recording the area's completion: %w", err)
	}
	// The verdicts are recorded: the gate's own checkout has served.
	if err := a.co.close(ctx); err != nil {
		l.log().Warn("gate: the area completed but its worktree stays", "task", a.task.ID, "err", err)
	}
	return Completed{Verdicts: verdicts}, nil
}

// fail records delegation.failed with the named origin and blocks the task
// and the run (awaiting nothing).
func (l *Lead) fail(ctx context.Context, a *area, name, agentID, why string, origin brabo.Origin) (Result, error) {
	ctx = context.WithoutCancel(ctx)
	actor := agentID
	if actor == "" {
		actor = l.id()
	}
	now := l.now()
	err := l.Store.Update(ctx, func(tx brabo.Tx) error { return l.failTx(ctx, tx, a, name, actor, why, origin, now) })
	if err != nil {
		return nil, fmt.Errorf("gate: recording %s's failure (%s): %w", name, why, err)
	}
	return Failed{SubAgent: name, Reason: why, Origin: origin, Verdicts: a.state.Verdicts}, nil
}

func (l *Lead) event(a *area, typ, actor, actionID string, payload map[string]any) *brabo.Event {
	return &brabo.Event{ProjectID: a.project.ID, Type: typ, ActorID: actor, ActionID: actionID, CreatedAt: l.now(), Payload: mustJSON(payload)}
}

func (l *Lead) appendEvent(ctx context.Context, a *area, typ, actor, actionID string, payload map[string]any) error {
	return l.Store.Update(ctx, func(tx brabo.Tx) error { return tx.AppendEvent(ctx, l.event(a, typ, actor, actionID, payload)) })
}

// subAgent finds the project's agent with that name.
func (l *Lead) subAgent(ctx context.Context, projectID, name string) (*brabo.Agent, error) {
	var agents []*brabo.Agent
	if err := l.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		agents, err = tx.Agents(ctx, projectID)
		return err
	}); err != nil {
		return nil, fmt.Errorf("gate: listing the agents of project %s: %w", projectID, err)
	}
	for _, ag := range agents {
		if ag.Name == name {
			return ag, nil
		}
	}
	return nil, fmt.Errorf("gate: project %s has no agent named %q to delegate to", projectID, name)
}

// buildLoop is a sub-agent's tool loop, under its own identity: the
// standard pipeline tools and read_file, acting in the checkout of the
// task's work (its paths are relative to it); the pipeline still scopes
// every action to the project's folder. In the gate's own worktree there
// is no git_commit: only the dev's worktree has a branch to commit to.
func (l *Lead) buildLoop(agent *brabo.Agent, p *brabo.Project, co checkout) *toolloop.Loop {
	m := l.Models[agent.Name]
	if m == nil {
		m = l.Model
	}
	system := l.Systems[agent.Name]
	if system == "" {
		system = fmt.Sprintf("You are %s, a QA sub-agent of the %s gate. Your folder is %s: examine the task's work there and answer with your verdict.",
			agent.Name, l.area(), co.Where)
	}
	var tools []toolloop.Tool
	for _, t := range append(toolloop.StandardTools(), devagent.ReadFileTool(co.Dir(), nil)) {
		if co.own && t.Spec.Name == toolloop.GitCommitTool().Spec.Name {
			// The gate's own worktree is detached and goes when the area
			// completes: a commit there would be lost without a word.
			continue
		}
		tools = append(tools, co.Tool(t))
	}
	return &toolloop.Loop{Model: m, Proposer: l.Proposer, ProjectID: p.ID, Actor: pipeline.Actor{Agent: agent},
		System: system, Tools: tools, MaxIterations: l.MaxIterations}
}

// prompt is a delegation's task message: the task and the verdicts so far.
func (l *Lead) prompt(a *area, name string, verdicts []Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Gate %s, delegation to %s, for task %q: %s\n%s\n", l.area(), name, a.task.ID, a.task.Title, a.task.Description)
	for _, v := range verdicts {
		fmt.Fprintf(&b, "\nVerdict of %s: %s\n", v.SubAgent, v.Verdict)
	}
	return b.String()
}
