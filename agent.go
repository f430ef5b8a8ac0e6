package brabo

import (
	"strconv"
	"strings"
	"time"
)

// Agent is an AI agent working in one project. Its principal is the member
// its proposals act for.
type Agent struct {
	ID          string `json:"id"`
	ProjectID   string `json:"projectId"`
	Name        string `json:"name"`
	PrincipalID string `json:"principalId"`
	// Kind is AgentKindHook for the token of an agent brabo does not run
	// (Claude Code, Codex, Gemini CLI through brabo hook), "" otherwise.
	Kind      string    `json:"kind,omitempty"`
	TokenHash string    `json:"-"`
	CreatedAt time.Time `json:"createdAt"`
	// RevokedAt is when the agent's token was revoked; a revoked token
	// authenticates nobody.
	RevokedAt time.Time `json:"revokedAt,omitzero"`
}

// AgentKindHook is the kind of a hook agent: its token may only propose
// actions it runs itself (execution external), wait for their decision and
// report their result; it never reads other actions or decides.
const AgentKindHook = "hook"

// IsHook reports whether the agent is a hook agent (AgentKindHook).
func (a *Agent) IsHook() bool { return a.Kind == AgentKindHook }

// IsModuleDev reports whether the agent is a dev-<module> agent, whose
// always-allow clicks record patterns of its own (AgentPattern) for a
// terminal action and agent_autonomy for the other types, never
// permissions.json. The dev
// lead (DevLeadName) is not one: it has no module, task or worktree.
func (a *Agent) IsModuleDev() bool {
	return len(a.Name) > len("dev-") && a.Name[:len("dev-")] == "dev-" && a.Name != DevLeadName
}

// Module is the module of a dev-<module> agent (ModuleDevName's inverse),
// and false for an agent that is not a module dev agent.
func (a *Agent) Module() (string, bool) {
	if !a.IsModuleDev() {
		return "", false
	}
	m := strings.TrimPrefix(a.Name, "dev-")
	if i := strings.LastIndexByte(m, '-'); i > 0 {
		if n, err := strconv.Atoi(m[i+1:]); err == nil && n >= 2 {
			return m[:i], true
		}
	}
	return m, true
}

// DevLeadName is the name of a project's dev lead agent (DESIGN §7.5): the
// conversational agent of the lead API. A project has one when a
// maintainer creates an agent with this name.
const DevLeadName = "dev-lead"

// IsDevLead reports whether the agent is its project's dev lead.
func (a *Agent) IsDevLead() bool { return a.Name == DevLeadName }

// IsQASubAgent reports whether the agent is a qa-<role> sub-agent the QA
// lead delegates gate areas to (DESIGN §7.4): qa-automation,
// qa-performance-security.
func (a *Agent) IsQASubAgent() bool {
	return len(a.Name) > len("qa-") && a.Name[:len("qa-")] == "qa-"
}

// MaxInstructionsBytes bounds an agent's stored instructions.
const MaxInstructionsBytes = 64 << 10

// AgentInstructions are an agent's stored instructions: the project's
// words for that agent, which brabo adds to its built-in prompt at every
// model call, so that the agent's next turn uses the text an approved
// instruction_patch wrote. They change only through instruction_patch.
type AgentInstructions struct {
	AgentID string `json:"agentId"`
	Content string `json:"content"`
	// ActionID is the instruction_patch that wrote them; UpdatedBy the
	// member who approved it (or the workspace owner for an
	// auto-approval).
	ActionID  string    `json:"actionId"`
	UpdatedBy string    `json:"updatedBy"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// AnyActionType is the agent_autonomy wildcard: auto mode when its mode is
// auto_approve.
const AnyActionType ActionType = "*"

// AgentAutonomy is one agent_autonomy rule: (agent, type or "*") → mode.
type AgentAutonomy struct {
	AgentID    string     `json:"agentId"`
	ActionType ActionType `json:"actionType"`
	Mode       Policy     `json:"mode"`
}

// AutonomyOrigin says where an agent_autonomy opinion came from.
type AutonomyOrigin string

// Autonomy origins.
const (
	OriginSpecific AutonomyOrigin = "specific"
	OriginWildcard AutonomyOrigin = "wildcard"
)

// AgentPattern is one of an agent's own allow patterns: what an
// always-allow click on a module dev agent's terminal action records
// (Terminal(pnpm lint)), matched like permissions.json's allow list for
// that agent only.
type AgentPattern struct {
	AgentID string `json:"agentId"`
	Pattern string `json:"pattern"`
	// ActionID is the clicked action it came from ("" for none).
	ActionID string `json:"actionId,omitempty"`
	// CreatedBy is the member who clicked, or SystemActor.
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
}

// AgentLease says which process runs an agent's actor, until when
// (ClaimAgent).
type AgentLease struct {
	AgentID string
	// Owner names the holding process.
	Owner string
	// Until is when the lease runs out unless renewed.
	Until time.Time
}
