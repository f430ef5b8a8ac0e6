// Package brabo holds the domain of the approval pipeline for AI coding
// agents: the action types an agent can propose, the roles of the humans it
// acts for, and the decisions the policy engine returns.
//
// The package holds types and interfaces only. It imports nothing of this
// module; every adapter (stores, HTTP, executor, models) imports it.
package brabo

import (
	"encoding/json"
	"fmt"
	"time"
)

// ActionType is the kind of a proposed action, as stored and sent over the
// API (snake_case, e.g. "git_push").
type ActionType string

// The twenty action types of DESIGN §3.2.
const (
	Terminal               ActionType = "terminal"
	GitCommit              ActionType = "git_commit"
	WriteFile              ActionType = "write_file"
	GitPush                ActionType = "git_push"
	PrOpen                 ActionType = "pr_open"
	GitRepoCreate          ActionType = "git_repo_create"
	GitBranchCreate        ActionType = "git_branch_create"
	GitBranchProtect       ActionType = "git_branch_protect"
	OpenAdrPr              ActionType = "open_adr_pr"
	OpenInfraPr            ActionType = "open_infra_pr"
	GitMerge               ActionType = "git_merge"
	InstructionPatch       ActionType = "instruction_patch"
	Parallelize            ActionType = "parallelize"
	RaiseMaxParallel       ActionType = "raise_max_parallel"
	ProposeExecutionPlan   ActionType = "propose_execution_plan"
	AssessImplementability ActionType = "assess_implementability"
	ContainerStart         ActionType = "container_start"
	ContainerStop          ActionType = "container_stop"
	ContainerRemove        ActionType = "container_remove"
	Spend                  ActionType = "spend"
	// ContainerHandoff is the infra agent's handoff (docs/actions.md): approved by
	// a maintainer, it seeds container_start: auto_approve for that agent
	// and proposes the start as it. Never auto-approved.
	ContainerHandoff ActionType = "container_handoff"
)

// The types of DESIGN §9 ("Typed content"), proposed by the agents that run
// their tools themselves (Claude Code, Codex, Gemini CLI through brabo
// hook): brabo decides them and never executes them.
const (
	// ReadFile is a read the path scope alone cannot approve: outside the
	// project folder, or of a read-protected path. Its pattern content is
	// a path pattern (ReadFile(docs/**)).
	ReadFile ActionType = "read_file"
	// McpTool is a call of an MCP server's tool; its pattern content is the
	// tool's name as the agent spells it, server__tool
	// (McpTool(github__create_issue), McpTool(github__*)).
	McpTool ActionType = "mcp_tool"
)

var labels = func() map[string]ActionType {
	m := make(map[string]ActionType, len(traits))
	for t, info := range traits {
		m[info.Label] = t
	}
	return m
}()

// ActionTypes returns the twenty action types of DESIGN §3.2, in its order,
// then container_handoff (DESIGN §10):
// the types brabo's own agents propose and brabo can execute. AllActionTypes
// adds the types of the agents that run their tools themselves.
func ActionTypes() []ActionType {
	return []ActionType{
		Terminal, GitCommit, WriteFile, GitPush, PrOpen, GitRepoCreate,
		GitBranchCreate, GitBranchProtect, OpenAdrPr, OpenInfraPr, GitMerge,
		InstructionPatch, Parallelize, RaiseMaxParallel, ProposeExecutionPlan,
		AssessImplementability, ContainerStart, ContainerStop, ContainerRemove, Spend,
		ContainerHandoff,
	}
}

// AllActionTypes returns every action type: the twenty of DESIGN §3.2,
// then read_file and mcp_tool (DESIGN §9).
func AllActionTypes() []ActionType { return append(ActionTypes(), ReadFile, McpTool) }

// DecideOnly reports whether brabo can only decide an action of type t: it
// has no executor for it, so only an agent that runs it itself (execution
// external) may propose it.
func (t ActionType) DecideOnly() bool { return traits[t].Route == RouteAgent }

// Valid reports whether t is one of the known action types.
func (t ActionType) Valid() bool {
	_, ok := traits[t]
	return ok
}

// Label is the PascalCase name patterns use (GitPush for git_push); "" for an
// unknown type.
func (t ActionType) Label() string { return traits[t].Label }

// MinRole is the least role a principal needs for the type; for an unknown
// type it is Owner, so that nothing unknown is granted below the top.
func (t ActionType) MinRole() Role {
	if info, ok := traits[t]; ok {
		return info.MinRole
	}
	return Owner
}

// ActionTypeForLabel returns the type a pattern label names, and false for a
// label that names none.
func ActionTypeForLabel(label string) (ActionType, bool) {
	t, ok := labels[label]
	return t, ok
}

// ParseActionType returns the type for its snake_case name, or an error that
// names the bad value.
func ParseActionType(s string) (ActionType, error) {
	t := ActionType(s)
	if !t.Valid() {
		return "", fmt.Errorf("unknown action type %q", s)
	}
	return t, nil
}

// ActionStatus is where a proposed action is in its life (DESIGN §6.1).
type ActionStatus string

// Action statuses. pending, auto_approved and denied are how an action is
// born; approved is a human's claim to execute it; executed and failed are
// outcomes.
const (
	StatusPending      ActionStatus = "pending"
	StatusAutoApproved ActionStatus = "auto_approved"
	StatusApproved     ActionStatus = "approved"
	StatusDenied       ActionStatus = "denied"
	StatusExecuted     ActionStatus = "executed"
	StatusFailed       ActionStatus = "failed"
	// StatusAbandoned is a pending external action its agent will never
	// run: the hook that waited for it gave up (its deadline, the agent's
	// own stop). It leaves the queue; a later approve or deny is 409
	// abandoned.
	StatusAbandoned ActionStatus = "abandoned"
	// StatusNotRun is an external action brabo approved that its agent
	// did not run: the agent refused it itself afterwards (its own deny
	// rule, its command policy, another hook). Its result carries no exit
	// code, the code CodeNotRun and the agent's reason as its error.
	StatusNotRun ActionStatus = "not_run"
)

// Settled reports whether the action has left pending for good: executed,
// failed, denied, abandoned or not run.
func (s ActionStatus) Settled() bool {
	return s == StatusExecuted || s == StatusFailed || s == StatusDenied || s == StatusAbandoned || s == StatusNotRun
}

// Payload is what an action would do. Each type reads the fields it needs.
type Payload struct {
	Command    string `json:"command,omitempty"`    // terminal
	Cwd        string `json:"cwd,omitempty"`        // terminal: relative to the scope root
	TimeoutSec int    `json:"timeoutSec,omitempty"` // terminal
	Path       string `json:"path,omitempty"`       // write_file: relative to the scope root; open_adr_pr, open_infra_pr: the document
	Content    string `json:"content,omitempty"`    // write_file, open_adr_pr, open_infra_pr, instruction_patch (the new text)
	Message    string `json:"message,omitempty"`    // git_commit
	// Branch is the branch of git_branch_create, git_push, pr_open (its
	// head), git_branch_protect, git_repo_create (the default branch) and
	// open_adr_pr/open_infra_pr (the head, made up when empty).
	Branch       string `json:"branch,omitempty"`
	From         string `json:"from,omitempty"`         // git_branch_create: start point
	Remote       string `json:"remote,omitempty"`       // git_push (default origin)
	Title        string `json:"title,omitempty"`        // pr_open, open_adr_pr, open_infra_pr
	Base         string `json:"base,omitempty"`         // pr_open, open_adr_pr, open_infra_pr (main when empty)
	PR           int64  `json:"pr,omitempty"`           // git_merge
	TargetBranch string `json:"targetBranch,omitempty"` // git_merge (filled from the PR)
	TaskID       string `json:"taskId,omitempty"`
	// Tool is the MCP tool an mcp_tool action calls, server__tool.
	Tool string `json:"tool,omitempty"`
	// Agent is the agent whose instructions an instruction_patch replaces
	// with Content; Previous is the text it replaces, filled in by brabo
	// when the action is proposed (whatever the proposer sent), so that
	// the card shows the difference and execution refuses instructions
	// that changed since.
	Agent    string `json:"agent,omitempty"`
	Previous string `json:"previous,omitempty"`
	// Amount is what a spend debits from the project's budget, a decimal
	// ("12.50"); Purpose says what for.
	Amount  string `json:"amount,omitempty"`
	Purpose string `json:"purpose,omitempty"`
	// Image, CPUs, MemoryMB and Args describe a container_start: the image
	// (the server's default when empty), the resources (the module map's
	// minimum for an omitted one) and the command (the image's when
	// empty).
	Image    string   `json:"image,omitempty"`
	CPUs     float64  `json:"cpus,omitempty"`
	MemoryMB int64    `json:"memoryMb,omitempty"`
	Args     []string `json:"args,omitempty"`
	// Extra carries the fields of types brabo has no executor for.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// Result is the real outcome of an executed action, handed back to the
// agent.
type Result struct {
	ExitCode  int    `json:"exitCode"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
	TimedOut  bool   `json:"timedOut,omitempty"`
	Error     string `json:"error,omitempty"`
	// Code is set when the action failed before anything ran, with a
	// stable reason (CodeProjectFolderMissing): such a result has no exit
	// code, and its JSON carries none.
	Code Code `json:"code,omitempty"`
	// Detail holds type-specific facts: the commit hash, the PR number.
	Detail map[string]string `json:"detail,omitempty"`
}

// Ran reports whether the action ran, so that ExitCode means something:
// false for a failure before anything started (Code set).
func (r *Result) Ran() bool { return r.Code == "" }

// MarshalJSON leaves exitCode out of a result whose action never ran: a 0
// there would read as a success.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	out := struct {
		ExitCode *int `json:"exitCode,omitempty"` // first, as the field is
		plain
	}{plain: plain(r)}
	if r.Ran() {
		out.ExitCode = &r.ExitCode
	}
	return json.Marshal(out)
}

// ProposedAction is one action an agent (or a human) proposed.
type ProposedAction struct {
	ID        string     `json:"id"`
	ProjectID string     `json:"projectId"`
	Type      ActionType `json:"type"`
	Payload   Payload    `json:"payload"`
	// ActorID is who proposed: an agent id, or a member id for a human.
	ActorID   string `json:"actorId"`
	ActorKind string `json:"actorKind"` // "agent" or "member"
	// PrincipalID is the member the proposal acts for.
	PrincipalID string       `json:"principalId"`
	Status      ActionStatus `json:"status"`
	// Execution is set when the proposing agent runs the action itself
	// (execution external): brabo decides and records it, never runs it,
	// and the agent reports the result (POST /v1/actions/{id}/result).
	Execution *Execution `json:"execution,omitempty"`
	// Reason names the rule that decided (and for a denial by a human, the
	// human's reason).
	Reason string `json:"reason"`
	// ReasonText is Reason in plain words for people and the agent
	// (ReasonText): filled in by the API's answers, never stored.
	ReasonText string   `json:"reasonText,omitempty"`
	Decision   Decision `json:"decision"`
	DecidedBy  string   `json:"decidedBy,omitempty"` // empty for auto-approval
	Result     *Result  `json:"result,omitempty"`
	// Preview is the card's view of the change, computed when the action
	// was proposed (nil for an action recorded before previews were),
	// again when it is shown while pending, and stored as approved.
	Preview *Preview `json:"preview,omitempty"`
	// Revision is the revision of the card (Preview.Revision) as the
	// answer shows it: of a pending action, the card as it is now, which
	// an approve must name (docs/api.md, "Approving what was shown").
	Revision  string    `json:"revision,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	DecidedAt time.Time `json:"decidedAt,omitzero"`
	SettledAt time.Time `json:"settledAt,omitzero"`
}

// ExecutionExternal is the one execution mode a proposal may name: the
// proposing agent runs the action itself once brabo has decided it.
const ExecutionExternal = "external"

// Execution says who runs an action brabo only decides, and where in the
// agent's own conversation it comes from, so that a human reading the card
// can find it in the agent's transcript.
type Execution struct {
	// Mode is ExecutionExternal.
	Mode string `json:"mode"`
	// Runner names the program that runs it: claude-code, codex,
	// gemini-cli, or what the proposing agent calls itself.
	Runner string `json:"runner,omitempty"`
	// SessionID, TurnID and ToolUseID are the agent's own ids of its
	// session, turn and tool call.
	SessionID string `json:"sessionId,omitempty"`
	TurnID    string `json:"turnId,omitempty"`
	ToolUseID string `json:"toolUseId,omitempty"`
	// Description is the agent's own words about the call, as its hook
	// input carries them (Claude Code's and Gemini CLI's description,
	// Codex's justification): shown beside the command, labelled as the
	// agent's, never read by a rule. At most MaxDescription bytes.
	Description string `json:"description,omitempty"`
	// WaitUntil is the hook's own deadline for a decision: past it, the
	// agent no longer waits (the hook never waits longer), so a decision
	// then abandons the action instead (409 abandoned).
	WaitUntil time.Time `json:"waitUntil,omitzero"`
}

// MaxDescription bounds an Execution's Description, in bytes: a sentence
// or three (the agents ask their models for one).
const MaxDescription = 1000

// External reports whether the proposing agent runs the action itself.
func (a *ProposedAction) External() bool {
	return a.Execution != nil && a.Execution.Mode == ExecutionExternal
}

// Unreported reports whether the action is external, decided to run, and
// its agent has not reported what happened: it may have run, or not.
func (a *ProposedAction) Unreported() bool {
	return a.External() && (a.Status == StatusApproved || a.Status == StatusAutoApproved)
}
