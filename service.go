package brabo

import (
	"context"
	"time"
)

// The services: what http, the engine, the hook and the MCP server ask of
// brabo, grouped by noun. The pipeline implements every one and owns
// every transaction behind them: a caller hands in values and gets values
// back, and never holds a Tx. A read method opens its own read
// transaction; a write method validates, writes and records its events in
// one. Errors are *Error with a stable code where the caller's input is
// refused, ErrNotFound (wrapped) for what the caller cannot see.

// ActionService proposes, decides, reports and reads actions.
type ActionService interface {
	// Propose decides an action, records it with its created event, and
	// runs it at once when it is auto-approved.
	Propose(ctx context.Context, req ProposeRequest) (*ProposedAction, error)
	// Approve approves a pending action as m and runs it; exactly once.
	// revision is the revision of the card m saw (Preview.Revision): one
	// that is not the card's now, or none, is CodeCardChanged and leaves
	// the action pending with its new card.
	Approve(ctx context.Context, actionID string, m *Member, revision string) (*Decided, error)
	// Deny denies a pending action as m, with the reason its agent reads.
	Deny(ctx context.Context, actionID string, m *Member, reason string) (*ProposedAction, error)
	// AlwaysAllowPreview says what ApproveAlways would record, writing
	// nothing.
	AlwaysAllowPreview(ctx context.Context, actionID string, m *Member) (*Decided, error)
	// ApproveAlways approves the action and records the rule that lets
	// its like through from now on.
	// revision is as Approve's.
	ApproveAlways(ctx context.Context, actionID string, m *Member, revision string) (*Decided, error)
	// AllowNetwork records the hosts a command was refused and reruns it.
	AllowNetwork(ctx context.Context, actionID string, m *Member) (*Decided, error)
	// Report records the result of an action its agent ran itself, once.
	Report(ctx context.Context, actionID string, agent *Agent, res Result) (*ProposedAction, error)
	// Abandon settles an action its agent gave up on.
	Abandon(ctx context.Context, actionID string, agent *Agent, reason string) (*ProposedAction, error)

	// Action reads one action, whoever may see it (the caller checks).
	Action(ctx context.Context, id string) (*ProposedAction, error)
	// VisibleAction reads an action the actor may read: an agent its own,
	// a member one of a project it has a role in; else ErrNotFound.
	VisibleAction(ctx context.Context, by Actor, id string) (*ProposedAction, error)
	// Actions reads one page of the actions f selects and how many it
	// selects in all, from one snapshot.
	Actions(ctx context.Context, f ActionFilter) ([]*ProposedAction, int, error)
	// PendingOf reads one page (limit, offset) of the pending actions of
	// every project the member has a role in, and their count.
	PendingOf(ctx context.Context, memberID string, limit, offset int) ([]*ProposedAction, int, error)
	// CardNow is a copy of the action with its card as it is shown: a
	// pending action's computed now (cached by repository state), with
	// Revision set.
	CardNow(ctx context.Context, a *ProposedAction) *ProposedAction
	// Preview computes an action's card now (p and pr as read).
	Preview(ctx context.Context, a *ProposedAction, p *Project, pr *PullRequest) *Preview
	// CurrentReason is the reason a pending action would get if proposed
	// now.
	CurrentReason(ctx context.Context, a *ProposedAction) (string, error)
	// PR reads one pull request of the project.
	PR(ctx context.Context, projectID string, number int64) (*PullRequest, error)
	// PRs lists the project's pull requests.
	PRs(ctx context.Context, projectID string) ([]*PullRequest, error)
}

// EventService reads a project's event log and signals its changes.
type EventService interface {
	// Events reads up to limit events of the project after seq after.
	Events(ctx context.Context, projectID string, after int64, limit int) ([]Event, error)
	// ActionEvents reads the events of one action, in their order.
	ActionEvents(ctx context.Context, projectID, actionID string) ([]Event, error)
	// LastEventSeqs reads the newest event's sequence number of every
	// project the member has a role in.
	LastEventSeqs(ctx context.Context, memberID string) (map[string]int64, error)
	// Subscribe receives a value (coalesced) after each commit that
	// touches the topic: a project id, or AuthSignal.
	Subscribe(topic string) (ch <-chan struct{}, cancel func())
}

// ProjectService creates and reads projects, their members, settings and
// tasks, and whom a credential belongs to.
type ProjectService interface {
	// CreateProject creates a project of the admin m, its owner, with its
	// first trusted permissions.json (the slug rule and the workspace
	// folder's name: Project rules in pipeline/projects.go).
	CreateProject(ctx context.Context, m *Member, in NewProject) (*Project, error)
	// LocalRoots lists the folders of the local projects.
	LocalRoots(ctx context.Context) ([]string, error)
	// Project reads one project.
	Project(ctx context.Context, id string) (*Project, error)
	// ProjectAccess reads the project and the actor's role in it; a
	// project the actor cannot see is ErrNotFound. An agent has no role.
	ProjectAccess(ctx context.Context, by Actor, projectID string) (*Project, Role, error)
	// Role reads the member's role in the project, "" for none.
	Role(ctx context.Context, projectID, memberID string) (Role, error)
	// Memberships lists the member's roles.
	Memberships(ctx context.Context, memberID string) ([]Membership, error)
	// ProjectsOf lists the projects the actor sees: an agent its own, a
	// member those it has a role in.
	ProjectsOf(ctx context.Context, by Actor) ([]*Project, error)
	// Member reads one member.
	Member(ctx context.Context, id string) (*Member, error)
	// Bootstrap creates the first member, an admin, when there is none,
	// and returns its token; "" when members exist.
	Bootstrap(ctx context.Context, name string) (string, error)
	// CreateMember creates a member with a role in the project and
	// returns its token (shown once).
	CreateMember(ctx context.Context, projectID, name string, role Role) (*Member, string, error)
	// SetContainerRunning records whether the project's container runs.
	SetContainerRunning(ctx context.Context, projectID string, running bool) error
	// UpdateProject writes the settings u sets, with their events by the
	// member; a raise of the agent cap is refused (needs_approval).
	UpdateProject(ctx context.Context, projectID, memberID string, u ProjectUpdate) (*Project, error)
	// SetMcpTools replaces the project's mapped MCP tools, with an event.
	SetMcpTools(ctx context.Context, projectID, memberID string, tools []string) error
	// CreateTask puts a task in the project's backlog.
	CreateTask(ctx context.Context, projectID, title, description string) (*Task, error)
	// Task reads one task.
	Task(ctx context.Context, id string) (*Task, error)
	// Tasks lists the project's tasks.
	Tasks(ctx context.Context, projectID string) ([]*Task, error)
	// Webhooks lists the project's webhooks and whether a signing secret
	// is set.
	Webhooks(ctx context.Context, projectID string) ([]*Webhook, bool, error)
	// SetWebhooks replaces the project's webhooks, for a maintainer.
	SetWebhooks(ctx context.Context, projectID string, m *Member, in []WebhookInput) ([]*Webhook, string, error)
	// RotateWebhookSecret replaces the signing secret, for a maintainer.
	RotateWebhookSecret(ctx context.Context, projectID string, m *Member) (string, error)

	// ByTokenHash finds whose API token has this hash: a member or an
	// agent; ErrNotFound for nobody's.
	ByTokenHash(ctx context.Context, hash string) (*Member, *Agent, error)
	// OpenSession stores a new web session of m lasting ttl and returns
	// its secret.
	OpenSession(ctx context.Context, m *Member, userAgent string, ttl time.Duration) (string, *Session, error)
	// LiveSession finds the live session with this secret's hash and its
	// member; ErrNotFound when it is nobody's, expired or revoked.
	LiveSession(ctx context.Context, hash string, now time.Time) (*Session, *Member, error)
	// Sessions lists the member's live sessions.
	Sessions(ctx context.Context, memberID string) ([]*Session, error)
	// RevokeSession ends one live session of the member.
	RevokeSession(ctx context.Context, memberID, sessionID string) (bool, error)
	// RevokeMemberToken revokes target's token and sessions, as me: the
	// member itself, an admin, or an owner of every project target is in.
	RevokeMemberToken(ctx context.Context, me *Member, targetID string) error
}

// AgentService creates agents and reads and changes their autonomy,
// patterns and tokens.
type AgentService interface {
	// CreateAgent creates an agent of the project with principal as its
	// human and returns its token (shown once).
	CreateAgent(ctx context.Context, projectID, principalID, name, kind string) (*Agent, string, error)
	// Agent reads one agent.
	Agent(ctx context.Context, id string) (*Agent, error)
	// Agents lists the project's agents.
	Agents(ctx context.Context, projectID string) ([]*Agent, error)
	// Autonomy lists the agent's agent_autonomy rules.
	Autonomy(ctx context.Context, agentID string) ([]AgentAutonomy, error)
	// AgentPatterns lists the agent's own allow patterns.
	AgentPatterns(ctx context.Context, agentID string) ([]AgentPattern, error)
	// WaitingRun reads the actor's latest waiting run; ErrNotFound for
	// none.
	WaitingRun(ctx context.Context, actorKey string) (*Run, error)
	// PutAutonomy writes one rule, with autonomy.changed when it changes
	// it; it reports whether it did.
	PutAutonomy(ctx context.Context, projectID, actorID string, rule AgentAutonomy, via string) (bool, error)
	// RemoveAgentPattern removes one of the agent's patterns, with
	// autonomy.changed; false when the agent has no such pattern.
	RemoveAgentPattern(ctx context.Context, projectID, actorID, agentID, pattern, via string) (bool, error)
	// RevokeAgentToken revokes the agent's token.
	RevokeAgentToken(ctx context.Context, agentID string) error
	// RotateAgentToken gives the agent a new token, lifting a revocation.
	RotateAgentToken(ctx context.Context, agentID string) (string, error)
	// AgentInstructions is the agent's stored instructions, what an
	// approved instruction_patch wrote ("" for none): the engine's tool
	// loop reads them at every model call.
	AgentInstructions(ctx context.Context, agentID string) (string, error)
	// AgentInstructionsOf reads an agent's stored instructions, for a
	// member of its project.
	AgentInstructionsOf(ctx context.Context, projectID, agentID string, m *Member) (*AgentInstructions, error)
	// SetInfraAgent names the project's infra agent ("" for none).
	SetInfraAgent(ctx context.Context, projectID, memberID, agentID string) error
}

// TrustService judges, shows and changes a project's permissions.json.
type TrustService interface {
	// PermissionsTrust is the trust state of the project's file.
	PermissionsTrust(ctx context.Context, p *Project) (*TrustState, error)
	// DecidingPermissions is the trust state and the content decisions
	// use now.
	DecidingPermissions(ctx context.Context, p *Project) (*TrustState, []byte, error)
	// TrustedContent reads the bytes of a trusted version.
	TrustedContent(ctx context.Context, projectID, hash string) ([]byte, error)
	// WritePermissions replaces the file, trusted as written.
	WritePermissions(ctx context.Context, p *Project, m *Member, content []byte) error
	// AcceptPermissions trusts the file on disk with this hash.
	AcceptPermissions(ctx context.Context, projectID string, m *Member, hash string) (*TrustState, error)
	// RestorePermissions writes the trusted version back over the file.
	RestorePermissions(ctx context.Context, projectID string, m *Member, hash string) (*TrustState, error)
}

// ExecutionService holds a project's execution settings: activation, the
// budget, the module map, protected branches and containers.
type ExecutionService interface {
	// ActivateExecution seeds the project for its dev agents.
	ActivateExecution(ctx context.Context, projectID string, m *Member) (*Activation, error)
	// BudgetOf reads the budget and its latest ledger lines.
	BudgetOf(ctx context.Context, projectID string, m *Member) (*BudgetView, error)
	// SetBudget sets the budget, for its owner.
	SetBudget(ctx context.Context, projectID string, m *Member, limit, inputPrice, outputPrice Money) (*BudgetView, error)
	// ModuleMapOf reads the module map.
	ModuleMapOf(ctx context.Context, projectID string, m *Member) (*ModuleMap, error)
	// SetModuleMap replaces the module map.
	SetModuleMap(ctx context.Context, projectID string, m *Member, modules []Module) (*ModuleMap, error)
	// ProtectedBranchesOf reads the branches added to the protected ones.
	ProtectedBranchesOf(ctx context.Context, projectID string, m *Member) ([]ProtectedBranch, error)
	// ContainersOf lists the containers of the member's projects.
	ContainersOf(ctx context.Context, m *Member) ([]ContainerRow, error)
	// RecordModelUsage records a model call of brabo's own agents against
	// its project's budget.
	RecordModelUsage(ctx context.Context, u ModelUsage) error
}
