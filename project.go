package brabo

import "time"

// DefaultMaxParallel is a new project's cap on dev agents working at once.
const DefaultMaxParallel = 3

// Bounds of a project's agent settings (Project.MaxParallel,
// Project.WaitCapSec).
const (
	MaxMaxParallel = 1000
	MinWaitCapSec  = 60
	MaxWaitCapSec  = 90 * 24 * 3600
)

// WaitCap is the project's inactivity cap: its own (WaitCapSec) when set,
// else def, the server's default.
func (p *Project) WaitCap(def time.Duration) time.Duration {
	if p != nil && p.WaitCapSec > 0 {
		return time.Duration(p.WaitCapSec) * time.Second
	}
	return def
}

// Project is a folder agents work in, with its own permissions.json,
// members and agents.
type Project struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	// Mode decides the scope root (DESIGN §5).
	Mode ExecutionMode `json:"mode"`
	// Root is the absolute folder in local mode, typed at creation. The
	// API shows it to the project's members and agents (it is where their
	// commands run); events and cards carry the relative WorkspaceDir.
	Root string `json:"root,omitempty"`
	// WorkspaceDir is <slug>-<8 chars of id>, frozen at creation; the folder
	// under the workspaces root in container and runner mode, and the
	// relative identifier events carry in every mode.
	WorkspaceDir string `json:"workspaceDir"`
	// ContainerRunning is true while the project's container is registered
	// running (the container floor).
	ContainerRunning bool `json:"containerRunning"`
	// GitHooks is true when the project's maintainer turned the
	// repository's git hooks on for the git steps brabo runs in the
	// sandbox (git_commit, git_branch_create). Off by default: a hook is
	// code the agent may have written. Even on, no hook runs on the host
	// (a push's, or any step of a server without a sandbox).
	GitHooks bool `json:"gitHooks"`
	// MaxTimeoutSec is the project's ceiling on a terminal command's
	// timeoutSec, on top of the executor's own; 0 leaves only the
	// executor's.
	MaxTimeoutSec int `json:"maxTimeoutSec"`
	// McpTools are the MCP tools a maintainer mapped, server__tool or
	// server__*: an mcp_tool action of a mapped tool is approved by a
	// developer; any other needs a maintainer (DESIGN §9, "Effective
	// role").
	McpTools []string `json:"mcpTools"`
	// MaxParallel is the project's cap on dev agents working at once
	// (each holding a task in progress): a dev agent claims a task only
	// below it, the dev lead starts agents within it and proposes
	// parallelize above it (docs/engine.md). Raised by an approved
	// parallelize or raise_max_parallel, lowered by a maintainer.
	MaxParallel int `json:"maxParallel"`
	// WaitCapSec is the project's inactivity cap in seconds: how long a
	// dev agent, a gate area or a dev-lead turn may wait for a decision
	// before it is blocked with origin policy. 0 takes the server's
	// default (brabo serve --wait-cap).
	WaitCapSec int `json:"waitCapSec"`
	// OwnerID is the workspace owner: auto-approved actions execute with
	// this member's credential.
	OwnerID   string    `json:"ownerId"`
	CreatedAt time.Time `json:"createdAt"`
}

// Member is a human with an API token; Role is per project.
type Member struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Admin     bool      `json:"admin,omitempty"` // may create projects
	TokenHash string    `json:"-"`
	CreatedAt time.Time `json:"createdAt"`
	// RevokedAt is when the member's token was revoked; a revoked token
	// authenticates nobody.
	RevokedAt time.Time `json:"revokedAt,omitzero"`
}

// Membership is a member's role in one project.
type Membership struct {
	ProjectID string `json:"projectId"`
	MemberID  string `json:"memberId"`
	Role      Role   `json:"role"`
}

// PullRequest is a PR on the local git provider.
type PullRequest struct {
	ProjectID string    `json:"projectId"`
	Number    int64     `json:"number"`
	Title     string    `json:"title"`
	Head      string    `json:"head"`
	Base      string    `json:"base"`
	State     PRState   `json:"state"`
	TaskID    string    `json:"taskId,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// MergedBy is the git_merge action whose execution merged it.
	MergedBy string `json:"mergedBy,omitempty"`
}

// PRState is the state of a pull request.
type PRState string

// Pull request states.
const (
	PROpen   PRState = "open"
	PRMerged PRState = "merged"
)

// ExecutionMode is where a project's actions run; it decides the scope root
// (DESIGN §5).
type ExecutionMode string

// Execution modes.
const (
	ModeContainer ExecutionMode = "container"
	ModeRunner    ExecutionMode = "runner"
	ModeLocal     ExecutionMode = "local"
)

// ProtectedBranch is a branch a git_branch_protect added to a project's
// protected list. The merge cap reads the list on top of the built-in
// dev, qa, rc and main, which nothing unprotects.
type ProtectedBranch struct {
	ProjectID string    `json:"projectId"`
	Branch    string    `json:"branch"`
	ActionID  string    `json:"actionId,omitempty"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
}
