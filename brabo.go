// Package brabo holds the domain of the approval pipeline for AI coding
// agents: the action types an agent can propose, the roles of the humans it
// acts for, and the decisions the policy engine returns.
//
// The package holds types and interfaces only. It imports nothing of this
// module; every adapter (stores, HTTP, executor, models) imports it.
package brabo

import "fmt"

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
	// ContainerHandoff is the infra agent's handoff (ADR 0190): approved by
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

// Role is a member's role in a project. Roles are ordered:
// Developer < Maintainer < Owner. The zero value is no role at all and is
// below every minimum.
type Role string

// The three roles of DESIGN §3.2.
const (
	Developer  Role = "developer"
	Maintainer Role = "maintainer"
	Owner      Role = "owner"
)

func (r Role) rank() int {
	switch r {
	case Developer:
		return 1
	case Maintainer:
		return 2
	case Owner:
		return 3
	}
	return 0
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r is min or above it. An invalid role is below
// everything, an invalid min is above everything.
func (r Role) AtLeast(min Role) bool {
	return r.Valid() && min.Valid() && r.rank() >= min.rank()
}

// ParseRole returns the role for its name, or an error that names the value.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !r.Valid() {
		return "", fmt.Errorf("unknown role %q (want developer, maintainer or owner)", s)
	}
	return r, nil
}

// Policy is what the policy engine decides for an action.
type Policy string

// The three decisions. The zero value is "no opinion".
const (
	AutoApprove     Policy = "auto_approve"
	RequireApproval Policy = "require_approval"
	Deny            Policy = "deny"
)

// Valid reports whether p is one of the three decisions.
func (p Policy) Valid() bool {
	return p == AutoApprove || p == RequireApproval || p == Deny
}

// ParsePolicy returns the decision for its name, or an error that names it.
func ParsePolicy(s string) (Policy, error) {
	p := Policy(s)
	if !p.Valid() {
		return "", fmt.Errorf("unknown policy %q (want auto_approve, require_approval or deny)", s)
	}
	return p, nil
}

// ExecutionMode is where a project's actions run; it decides the scope root
// (DESIGN §5).
type ExecutionMode string

// Execution modes.
const (
	ModeContainer ExecutionMode = "container"
	ModeRunner    ExecutionMode = "runner"
	ModeLocal     ExecutionMode = "local"
)
