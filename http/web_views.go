package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// agentCard is one agent: what it is doing and whether it asks.
type agentCard struct {
	Project   string // project id
	Agent     *brabo.Agent
	State     string // working, awaiting approval, waiting on N approvals, awaiting PR, blocked, idle
	Detail    string // the task, the awaited action, the block's reason
	ActionID  string // the awaited action, for the link to its card
	Origin    brabo.Origin
	Auto      bool // the wildcard is auto_approve
	Wildcard  bool // a wildcard rule exists: the toggle edits it
	CanToggle bool // maintainer and above: the toggle, and removing a pattern
	// Patterns are the agent's own allow patterns (always-allow clicks on
	// its terminal actions), each removable by a maintainer.
	Patterns []brabo.AgentPattern
	// Terminal is the agent's type-level terminal rule, "" for none:
	// shown, since it frees every command of the agent.
	Terminal brabo.Policy
	Error    string
}

type agentsView struct {
	ProjectID, Slug string
	Settings        agentSettingsView
	Agents          []agentCard
	Tasks           []*brabo.Task
	// Execution is the project's Execution section (web_execution.go).
	Execution executionSection
}

// agentCardFor reads an agent's state from its runs and tasks: the run is
// the truth of a wait, the task of work and blocks.
func (s *Server) agentCardFor(ctx context.Context, p *brabo.Project, role brabo.Role, a *brabo.Agent, tasks []*brabo.Task) (agentCard, error) {
	c := agentCard{Project: p.ID, Agent: a, State: "idle", CanToggle: role.AtLeast(brabo.Maintainer)}
	rules, err := s.Agents.Autonomy(ctx, a.ID)
	if err != nil {
		return c, err
	}
	for _, r := range rules {
		switch r.ActionType {
		case brabo.AnyActionType:
			c.Wildcard, c.Auto = true, r.Mode == brabo.AutoApprove
		case brabo.Terminal:
			c.Terminal = r.Mode
		}
	}
	if c.Patterns, err = s.Agents.AgentPatterns(ctx, a.ID); err != nil {
		return c, err
	}
	// What the agent waits on: its pending actions, counted (a hook
	// agent has no run, and five pending actions are not "idle").
	pending, npending, err := s.Actions.Actions(ctx, brabo.ActionFilter{ProjectIDs: []string{p.ID},
		Status: brabo.StatusPending, ActorID: a.ID, Limit: 1})
	if err != nil {
		return c, err
	}
	run, err := s.Agents.WaitingRun(ctx, brabo.AgentKey(a.ID))
	switch {
	case err == nil && run.State == brabo.RunAwaitingApproval:
		c.State, c.ActionID = "awaiting approval", run.AwaitingActionID
		c.Detail = "on action " + shortID(run.AwaitingActionID)
		if npending > 1 {
			c.Detail += " (" + waitingOn(npending) + ")"
		}
		return c, nil
	case err == nil:
		c.State, c.ActionID = "awaiting PR", run.AwaitingActionID
		c.Detail = "pull request proposed by action " + shortID(run.AwaitingActionID)
		return c, nil
	case !errors.Is(err, brabo.ErrNotFound):
		return c, err
	}
	if npending > 0 && len(pending) > 0 {
		c.State, c.ActionID = waitingOn(npending), pending[0].ID
		c.Detail = "the newest: action " + shortID(pending[0].ID)
		return c, nil
	}
	var latest *brabo.Task
	for _, t := range tasks {
		if t.AgentID != a.ID {
			continue
		}
		if t.Status == brabo.TaskInProgress {
			c.State, c.Detail = "working", "on “"+t.Title+"”"
			return c, nil
		}
		if latest == nil || t.UpdatedAt.After(latest.UpdatedAt) {
			latest = t
		}
	}
	if latest != nil && latest.Status == brabo.TaskBlocked {
		c.State, c.Origin = "blocked", latest.BlockedOrigin
		c.Detail = "“" + latest.Title + "”: " + latest.BlockedReason
	}
	return c, nil
}

// waitingOn is an agent's state while its actions wait for people:
// "waiting on 1 approval", "waiting on 5 approvals".
func waitingOn(n int) string {
	if n == 1 {
		return "waiting on 1 approval"
	}
	return fmt.Sprintf("waiting on %d approvals", n)
}

func (s *Server) agentsView(ctx context.Context, p *brabo.Project, role brabo.Role) (agentsView, error) {
	v := agentsView{ProjectID: p.ID, Slug: p.Slug}
	agents, err := s.Agents.Agents(ctx, p.ID)
	if err != nil {
		return v, err
	}
	tasks, err := s.Projects.Tasks(ctx, p.ID)
	if err != nil {
		return v, err
	}
	v.Tasks = recentFirst(tasks)
	if v.Settings, err = s.agentSettingsFor(ctx, p.ID, role); err != nil {
		return v, err
	}
	for _, a := range agents {
		c, err := s.agentCardFor(ctx, p, role, a, v.Tasks)
		if err != nil {
			return v, err
		}
		v.Agents = append(v.Agents, c)
	}
	return v, nil
}

func (s *Server) agentsPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	view, err := s.agentsView(r.Context(), p, role)
	if err != nil {
		return err
	}
	if view.Execution, err = s.executionSectionFor(r.Context(), p, role, v.Member); err != nil {
		return err
	}
	return s.renderPage(w, r, v, p.Slug+" · agents — brabo", "agents", view)
}

// webSetMode is the agent card's manual/auto toggle: auto mode is the
// wildcard "*": auto_approve; manual rewrites the same wildcard as
// require_approval (seed 003, RN-153). Maintainer only, as every autonomy
// rule.
func (s *Server) webSetMode(w http.ResponseWriter, r *http.Request, v *viewer) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	mode := brabo.RequireApproval
	switch r.PostFormValue("mode") {
	case "auto":
		mode = brabo.AutoApprove
	case "manual":
	default:
		return badRequest("mode %q: want auto or manual", r.PostFormValue("mode"))
	}
	if err := requireRole(role, brabo.Maintainer, "changing an agent's mode"); err != nil {
		return err
	}
	return s.updateAgentCard(w, r, p, role, a, func() error {
		_, err := s.Agents.PutAutonomy(r.Context(), p.ID, v.Member.ID,
			brabo.AgentAutonomy{AgentID: a.ID, ActionType: brabo.AnyActionType, Mode: mode}, brabo.ViaWeb)
		return err
	})
}

// webRevokeAgent is the agent card's "Revoke token" button: maintainer
// only, as DELETE …/agents/{agent}/token. The agent stays, with its
// actions and its state; its token opens nothing anymore.
func (s *Server) webRevokeAgent(w http.ResponseWriter, r *http.Request, v *viewer) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	if err := requireRole(role, brabo.Maintainer, "revoking an agent's token"); err != nil {
		return err
	}
	return s.updateAgentCard(w, r, p, role, a, func() error { return s.Agents.RevokeAgentToken(r.Context(), a.ID) })
}

// updateAgentCard runs change (a service call, in its own transaction)
// and renders the agent's card as it is after it.
func (s *Server) updateAgentCard(w http.ResponseWriter, r *http.Request, p *brabo.Project, role brabo.Role, a *brabo.Agent, change func() error) error {
	if err := change(); err != nil {
		return err
	}
	fresh, err := s.Agents.Agent(r.Context(), a.ID)
	if err != nil {
		return err
	}
	tasks, err := s.Projects.Tasks(r.Context(), p.ID)
	if err != nil {
		return err
	}
	c, err := s.agentCardFor(r.Context(), p, role, fresh, tasks)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "agent-card", c)
	return nil
}

// logLine is one event of a session log.
type logLine struct {
	E        brabo.Event
	Actor    string
	Sentence string
	// Type and Subject name the event's action (its type and the first
	// line of its command, path or message), linked to its page; "" for
	// an event of no action.
	Type    brabo.ActionType
	Subject string
	// Bad marks a failure or a denial: red.
	Bad bool
}

type sessionView struct {
	Task  *brabo.Task
	Slug  string
	Lines []logLine
}

// sessionLogPage is a task's events in order, each with its actor and its
// sentence: the events that name the task, and every event of an action
// whose created event names it (an agent marks each of its proposals with
// its task, and the created event carries the mark).
func (s *Server) sessionLogPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	ctx := r.Context()
	task, p, _, err := s.visibleTask(r)
	if err != nil {
		return err
	}
	view := sessionView{Task: task, Slug: p.Slug}
	err = func() error {
		ofTask := map[string]bool{}
		names := s.actorNames(ctx, p.ID)
		actions := map[string]*brabo.ProposedAction{}
		for after := int64(0); ; {
			evs, err := s.Events.Events(ctx, p.ID, after, 1000)
			if err != nil {
				return err
			}
			for _, e := range evs {
				after = e.Seq
				if payloadTask(e.Payload) == task.ID {
					if e.ActionID != "" {
						ofTask[e.ActionID] = true // its later events belong to the task too
					}
				} else if !ofTask[e.ActionID] {
					continue
				}
				line := logLine{E: e, Actor: names(e.ActorID), Sentence: logSentence(e, names(e.ActorID))}
				if e.ActionID != "" {
					a, seen := actions[e.ActionID]
					if !seen {
						a, _ = s.Actions.Action(ctx, e.ActionID)
						actions[e.ActionID] = a
					}
					if a != nil {
						line.Type, line.Subject = a.Type, clip(brabo.FirstLine(subject(a)), 160)
					}
				}
				line.Bad = e.Type == brabo.EventActionFailed || e.Type == brabo.EventActionDenied || e.Type == brabo.EventNotifyFailed
				view.Lines = append(view.Lines, line)
			}
			if len(evs) < 1000 {
				return nil
			}
		}
	}()
	if err != nil {
		return err
	}
	return s.renderPage(w, r, v, "“"+task.Title+"” · session log — brabo", "session", view)
}

// actorNames resolves event actors to names: agents and members of the
// project, and "system".
func (s *Server) actorNames(ctx context.Context, projectID string) func(string) string {
	names := map[string]string{brabo.SystemActor: "system"}
	if agents, err := s.Agents.Agents(ctx, projectID); err == nil {
		for _, a := range agents {
			names[a.ID] = a.Name
		}
	}
	return func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		if m, err := s.Projects.Member(ctx, id); err == nil {
			names[id] = m.Name
			return m.Name
		}
		names[id] = id
		return id
	}
}

func payloadTask(raw json.RawMessage) string {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.TaskID
}

func payloadStatus(raw json.RawMessage) string {
	var p struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.Status
}

// eventSentence is what the session log says of an event. A created event
// reads the same sentence as the approval card (brabo.DecisionSentence).
func eventSentence(e brabo.Event) string {
	var p struct {
		Status     brabo.ActionStatus `json:"status"`
		Reason     string             `json:"reason"`
		ScopeRoot  brabo.ScopeRoot    `json:"scopeRoot"`
		Pattern    string             `json:"pattern"`
		AgentID    string             `json:"agentId"`
		ActionType string             `json:"actionType"`
		ExitCode   *int               `json:"exitCode"`
		Error      string             `json:"error"`
		Origin     string             `json:"origin"`
		ToolName   string             `json:"toolName"`
	}
	_ = json.Unmarshal(e.Payload, &p)
	switch e.Type {
	case brabo.EventActionCreated:
		return brabo.DecisionSentence(p.Status, p.Reason, p.ScopeRoot)
	case brabo.EventActionDenied:
		if p.Reason == "" {
			return "denied: not recorded"
		}
		return "denied: " + p.Reason
	case brabo.EventActionApproved:
		return "approved by a human"
	case brabo.EventPermissionGranted:
		if p.Pattern != "" && p.AgentID != "" {
			return "always allow recorded " + p.Pattern + " for this agent alone"
		}
		if p.Pattern != "" {
			return "always allow recorded " + p.Pattern
		}
		return "always allow recorded agent_autonomy for " + p.ActionType
	case brabo.EventAutonomyChanged:
		return autonomySentence(e.Payload)
	case brabo.EventActionExecuted, brabo.EventActionFailed:
		if p.Error != "" {
			return p.Error
		}
		if p.ExitCode != nil {
			return fmt.Sprintf("exit %d", *p.ExitCode)
		}
	case brabo.EventTaskStatusChanged:
		if p.Status != "" {
			return "the task is now " + string(p.Status)
		}
	case "backlog.task_blocked":
		return fmt.Sprintf("blocked (origin %s): %s", p.Origin, p.Reason)
	case brabo.EventNotifyFailed:
		if p.Error != "" {
			return "a notification was not delivered: " + p.Error
		}
	case "dev.awaiting_approval":
		return "suspended, waiting for a decision on " + p.ToolName
	}
	if p.Reason != "" {
		return p.Reason
	}
	return ""
}

type permissionsView struct {
	ProjectID, Slug string
	Content         string
	Valid           bool
	Errors          []policy.EntryError
	Warnings        []string
	CanEdit         bool
	// Trust is the file against its trusted version (web_trust.go).
	Trust trustSection
}

// permissionsPage shows permissions.json as it is on disk, each invalid
// entry with its error, and a box that explains a command as brabo check
// does.
func (s *Server) permissionsPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	f, err := s.permissionsOf(p)
	if err != nil {
		return err
	}
	perr := f.err
	view := permissionsView{ProjectID: p.ID, Slug: p.Slug, Content: string(f.data), Valid: perr == nil,
		Warnings: f.rules.Warnings(), CanEdit: role.AtLeast(brabo.Maintainer)}
	var fe *policy.FileError
	if errors.As(perr, &fe) {
		view.Errors = fe.Entries
	} else if perr != nil {
		view.Errors = []policy.EntryError{{Why: perr.Error()}}
	}
	if view.Trust, err = s.trustSectionFor(r, p, role); err != nil {
		return err
	}
	return s.renderPage(w, r, v, p.Slug+" · permissions — brabo", "permissions", view)
}

// webCheck decides a typed command as a proposal of it would be decided
// now (the pipeline's Check): the rules brabo decides the project's actions with
// (the file on disk, or the trusted version while the file waits for a
// maintainer), its scope root, the protected table, the container floor
// and the programs the names resolve to, as a developer's agent with no
// autonomy rule, or as the agent the agent parameter names. Nothing runs
// and nothing is recorded.
func (s *Server) webCheck(w http.ResponseWriter, r *http.Request, v *viewer) error {
	p, _, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	command := r.URL.Query().Get("command")
	if strings.TrimSpace(command) == "" {
		s.render(w, http.StatusOK, "check", map[string]any{"Empty": true})
		return nil
	}
	if len(command) > policy.MaxCommandBytes {
		return badRequest("the command is over %d bytes", policy.MaxCommandBytes)
	}
	q := r.URL.Query()
	ans, err := s.Rules.Check(r.Context(), p, brabo.CheckRequest{Command: command,
		Cwd: strings.TrimSpace(q.Get("cwd")), Agent: strings.TrimSpace(q.Get("agent"))})
	if err != nil {
		return err
	}
	view := map[string]any{"Command": command, "D": ans.Decision, "Held": ans.Held}
	if ans.FileErr != nil {
		view["FileError"] = ans.FileErr.Error()
	}
	s.render(w, http.StatusOK, "check", view)
	return nil
}

// recentFirst orders tasks for the agents page: the newest work on top.
func recentFirst(ts []*brabo.Task) []*brabo.Task {
	out := slices.Clone(ts)
	slices.SortFunc(out, func(a, b *brabo.Task) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return out
}
