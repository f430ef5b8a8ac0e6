package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devlead"
	"github.com/brabo-dev/brabo/engine/gate"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// leads holds, per project, the QA lead (engine/gate) and the dev lead
// (engine/devlead) of this process, created when first needed; it is the
// brabo.Conversations and brabo.Gates the API is given (Supervisor), and
// the wake router asks it for a project's leads.
//
// The QA lead waits under its sub-agents' keys: a lead is created (and
// its waiting areas restored) for every project at start-up, and for a
// new project the first time a gate is triggered or a sub-agent's action
// settles. The dev lead is the project's agent named dev-lead; after a
// restart it does not take back a suspended turn (DESIGN §7.5, declared
// gap): the decision stays recorded, and the next message closes the
// orphaned turn.
type leads struct {
	ctx   context.Context // the agents' lifetime: gate areas run under it
	store brabo.Store
	svc   *pipeline.Service
	model model.Model
	log   *slog.Logger
	// waitCap is the default inactivity cap of the leads' waits.
	waitCap time.Duration
	// starter starts a project's dev agents within its cap (the dev
	// lead's parallelize).
	starter *devlead.Starter
	// now is the leads' clock (the real one when nil).
	now func() time.Time

	mu      sync.Mutex
	gates   map[string]*gate.Lead    // project id → QA lead
	devs    map[string]*devlead.Lead // project id → dev lead
	running map[string]bool          // task id → a gate area runs here now
	wg      sync.WaitGroup           // gate areas running in the background
}

var (
	_ brabo.Conversations = (*leads)(nil)
	_ brabo.Gates         = (*leads)(nil)
)

// devLeadSystem is the dev lead's system prompt.
const devLeadSystem = "You are the dev lead of this project. You talk with the team about the work, " +
	"propose the execution plan (propose_execution_plan: how many agents per module and why) and assess " +
	"whether stories can be implemented (assess_implementability). A human decides on both; you get the decision as the result. " +
	"The project has a cap on dev agents working at once: an approved plan starts its agents within it; " +
	"for more agents on a module, call parallelize (within the cap the agents start at once; above it a human decides)."

func newLeads(ctx context.Context, store brabo.Store, svc *pipeline.Service, m model.Model, waitCap time.Duration, starter *devlead.Starter, log *slog.Logger) *leads {
	return &leads{ctx: ctx, store: store, svc: svc, model: m, log: log, waitCap: waitCap, starter: starter,
		gates: map[string]*gate.Lead{}, devs: map[string]*devlead.Lead{}, running: map[string]bool{}}
}

// restore creates every project's QA lead, which takes back its areas
// waiting for a decision.
func (l *leads) restore(ctx context.Context) error {
	var ps []*brabo.Project
	if err := l.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		ps, err = tx.Projects(ctx)
		return err
	}); err != nil {
		return fmt.Errorf("listing projects: %w", err)
	}
	for _, p := range ps {
		if _, err := l.gate(ctx, p.ID); err != nil {
			return err
		}
	}
	return nil
}

// gate is the project's QA lead, created, restored and started on first
// use.
func (l *leads) gate(ctx context.Context, projectID string) (*gate.Lead, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g, ok := l.gates[projectID]; ok {
		return g, nil
	}
	g := &gate.Lead{Store: l.store, Proposer: l.svc, Scoper: l.svc, ProjectID: projectID, Model: l.model, Log: l.log,
		WaitCap: l.waitCap, Now: l.now}
	if err := g.Restore(ctx); err != nil {
		return nil, fmt.Errorf("restoring the QA lead of project %s: %w", projectID, err)
	}
	g.Start(l.ctx)
	l.gates[projectID] = g
	return g, nil
}

// dev is the project's dev lead: not_found when the project has no agent
// named dev-lead.
func (l *leads) dev(ctx context.Context, projectID string) (*devlead.Lead, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d, ok := l.devs[projectID]; ok {
		return d, nil
	}
	var agent *brabo.Agent
	if err := l.store.View(ctx, func(tx brabo.Tx) error {
		ags, err := tx.Agents(ctx, projectID)
		for _, a := range ags {
			if a.IsDevLead() {
				agent = a
			}
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("finding the dev lead of project %s: %w", projectID, err)
	}
	if agent == nil {
		return nil, brabo.Errorf(brabo.CodeNotFound, "project %s has no dev lead: a maintainer creates it as an agent named %s", projectID, brabo.DevLeadName)
	}
	d := &devlead.Lead{Store: l.store, Proposer: l.svc, Model: l.model, ProjectID: projectID, Agent: agent,
		System: devLeadSystem, Log: l.log, WaitCap: l.waitCap, Starter: l.starter, Now: l.now,
		OnTurn: func(t devlead.Turn) {
			l.log.Info("the dev lead's turn resumed", "project", projectID, "awaiting", t.Awaiting, "halted", t.Halted)
		}}
	l.devs[projectID] = d
	return d, nil
}

// gateReceiver and leadReceiver are the router's per-project lookups;
// they answer an untyped nil when there is no lead.
func (l *leads) gateReceiver(projectID string) wake.Receiver {
	g, err := l.gate(l.ctx, projectID)
	if err != nil {
		l.log.Error("wake: the QA lead of a project", "project", projectID, "err", err)
		return nil
	}
	return g
}

func (l *leads) leadReceiver(projectID string) wake.Receiver {
	d, err := l.dev(l.ctx, projectID)
	if err != nil {
		if brabo.ErrorCode(err) != brabo.CodeNotFound {
			l.log.Error("wake: the dev lead of a project", "project", projectID, "err", err)
		}
		return nil
	}
	return d
}

// Post runs one turn of the project's dev lead. The turn is not cut short
// when the client goes away: an outcome reached is stored.
func (l *leads) Post(ctx context.Context, projectID, text string) (brabo.LeadTurn, error) {
	d, err := l.dev(ctx, projectID)
	if err != nil {
		return brabo.LeadTurn{}, err
	}
	t, err := d.Post(context.WithoutCancel(ctx), text)
	if errors.Is(err, devlead.ErrAwaiting) {
		return brabo.LeadTurn{}, brabo.Errorf(brabo.CodeLeadAwaiting,
			"the dev lead's turn waits for a decision on its action; decide it first (%s)", err.Error())
	}
	if err != nil {
		return brabo.LeadTurn{}, fmt.Errorf("the dev lead's turn: %w", err)
	}
	switch {
	case t.Awaiting != "":
		return brabo.LeadTurn{Status: brabo.TurnAwaitingApproval, ActionID: t.Awaiting}, nil
	case t.Halted != "":
		return brabo.LeadTurn{Status: brabo.TurnHalted, Reason: t.Halted, Origin: t.Origin}, nil
	}
	return brabo.LeadTurn{Status: brabo.TurnAnswered, Answer: t.Answer}, nil
}

// Read returns the project's dev lead conversation as stored, with the
// action its current turn waits for.
func (l *leads) Read(ctx context.Context, projectID string) (*brabo.Conversation, error) {
	d, err := l.dev(ctx, projectID)
	if err != nil {
		return nil, err
	}
	msgs, err := d.Conversation(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the dev lead's conversation: %w", err)
	}
	c := &brabo.Conversation{ProjectID: projectID, AgentID: d.Agent.ID, Messages: make([]brabo.LeadMessage, 0, len(msgs))}
	for _, m := range msgs {
		lm := brabo.LeadMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError}
		for _, tc := range m.ToolCalls {
			lm.ToolCalls = append(lm.ToolCalls, brabo.LeadToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		c.Messages = append(c.Messages, lm)
	}
	err = l.store.View(ctx, func(tx brabo.Tx) error {
		r, err := tx.WaitingRun(ctx, brabo.AgentKey(d.Agent.ID))
		if err == nil {
			c.AwaitingActionID = r.AwaitingActionID
		}
		return err
	})
	if err != nil && !errors.Is(err, brabo.ErrNotFound) {
		return nil, fmt.Errorf("reading the dev lead's wait: %w", err)
	}
	return c, nil
}

// Trigger starts the QA area on the task in the background. It refuses
// (gate_in_progress) while an area on the task runs here or waits in the
// store, and (not_configured) when the project lacks a sub-agent the area
// delegates to, which would otherwise block the task.
func (l *leads) Trigger(ctx context.Context, taskID string) (brabo.GateStart, error) {
	// Marked running before the store is read: an area that ends clears
	// the mark only after its run is saved, so of two triggers the second
	// sees one or the other.
	l.mu.Lock()
	if l.running[taskID] {
		l.mu.Unlock()
		return brabo.GateStart{}, brabo.Errorf(brabo.CodeGateInProgress, "a gate area on task %s runs already", taskID)
	}
	l.running[taskID] = true
	l.mu.Unlock()
	started := false
	defer func() {
		if !started {
			l.mu.Lock()
			delete(l.running, taskID)
			l.mu.Unlock()
		}
	}()
	g, err := l.checkGate(ctx, taskID)
	if err != nil {
		return brabo.GateStart{}, err
	}
	started = true
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() { l.mu.Lock(); delete(l.running, taskID); l.mu.Unlock() }()
		res, err := g.RunArea(l.ctx, taskID)
		if err != nil {
			l.log.Error("the QA gate", "task", taskID, "err", err)
			return
		}
		l.log.Info("the QA gate", "task", taskID, "result", fmt.Sprintf("%T", res))
	}()
	return brabo.GateStart{TaskID: taskID, Area: gate.DefaultArea, Status: "started"}, nil
}

// checkGate returns the QA lead of the task's project when an area may
// start on the task.
func (l *leads) checkGate(ctx context.Context, taskID string) (*gate.Lead, error) {
	var (
		task   *brabo.Task
		agents []*brabo.Agent
		runs   []*brabo.Run
	)
	var project *brabo.Project
	err := l.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if task, err = tx.Task(ctx, taskID); err != nil {
			return err
		}
		if project, err = tx.Project(ctx, task.ProjectID); err != nil {
			return err
		}
		if agents, err = tx.Agents(ctx, task.ProjectID); err != nil {
			return err
		}
		runs, err = tx.RunsInState(ctx, brabo.RunAwaitingApproval)
		return err
	})
	if errors.Is(err, brabo.ErrNotFound) {
		return nil, brabo.Errorf(brabo.CodeNotFound, "task %s not found", taskID)
	}
	if err != nil {
		return nil, fmt.Errorf("reading task %s: %w", taskID, err)
	}
	have := map[string]bool{}
	for _, a := range agents {
		have[a.Name] = true
	}
	for _, name := range gate.DefaultDelegations {
		if !have[name] {
			return nil, brabo.Errorf(brabo.CodeNotConfigured, "the QA gate of this project delegates to %v: a maintainer creates the agent %s first", gate.DefaultDelegations, name)
		}
	}
	for _, r := range runs {
		var st gate.State
		if r.TaskID == taskID && json.Unmarshal(r.Ctx, &st) == nil && st.Gate != 0 {
			return nil, brabo.Errorf(brabo.CodeGateInProgress,
				"the %s area on task %s waits for a decision on action %s", st.Area, taskID, r.AwaitingActionID)
		}
	}
	g, err := l.gate(ctx, task.ProjectID)
	if err != nil {
		return nil, err
	}
	// Refused now, not blocked in the background: a task no dev agent has
	// worked on has nothing to examine.
	if err := g.Examinable(ctx, project, taskID); err != nil {
		return nil, brabo.Errorf(brabo.CodeInvalidAction, "%s", err.Error())
	}
	return g, nil
}

// wait returns when the gate areas, the QA leads' mailboxes and the dev
// leads' resumed turns have stopped (after the agents' context ended).
func (l *leads) wait() {
	l.wg.Wait()
	l.mu.Lock()
	gs := make([]*gate.Lead, 0, len(l.gates))
	for _, g := range l.gates {
		gs = append(gs, g)
	}
	ds := make([]*devlead.Lead, 0, len(l.devs))
	for _, d := range l.devs {
		ds = append(ds, d)
	}
	l.mu.Unlock()
	for _, g := range gs {
		g.Wait()
	}
	for _, d := range ds {
		d.Wait()
	}
}
