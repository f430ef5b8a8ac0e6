package brabo

import (
	"context"
	"time"
)

// ErrNotFound is returned by stores for a row that does not exist.
var ErrNotFound = Errorf(CodeNotFound, "not found")

// ErrConflict is returned by stores when a write would break a uniqueness
// rule (a second live merge proposal for one PR, a slug taken).
var ErrConflict = Errorf(CodeConflict, "conflict")

// Store is the persistence the pipeline runs on. Both stores (SQLite and
// PostgreSQL) pass one contract suite (store/storetest).
type Store interface {
	// Update runs fn in one write transaction: everything fn wrote is
	// committed, or nothing when fn or the commit fails.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read transaction.
	View(ctx context.Context, fn func(Tx) error) error
	// Subscribe returns a channel that receives a value (coalesced, never
	// blocking the writer) after a commit appended events or outbox
	// messages for the project; "" subscribes to every project. AuthSignal
	// subscribes to the commits that revoked or replaced a token or a
	// session. cancel releases it. It is a fast path: readers still read
	// from the store.
	Subscribe(projectID string) (ch <-chan struct{}, cancel func())
	Close() error
}

// LatestViewer is a Store that offers a second way to read, for the short
// read each proposal makes (its ProposalFacts).
type LatestViewer interface {
	// ViewLatest runs fn as View does, read-only and seeing every write
	// committed before the call, but on the store's writer: what fn
	// writes is rolled back, and it returns once the transaction it ran
	// in committed, with that commit's error when it failed. The SQLite store offers it because SQLite empties a
	// read connection's page cache whenever another connection committed
	// since that connection's last read, so under load every View starts
	// cold, while the writer's cache stays warm (docs/PERFORMANCE.md,
	// "Issue 16").
	ViewLatest(ctx context.Context, fn func(Tx) error) error
}

// ActionFilter selects actions for a queue listing. Empty fields match all.
type ActionFilter struct {
	ProjectIDs []string
	Status     ActionStatus
	Type       ActionType
	ActorID    string
	// Text, when set, keeps the actions whose subject (command, path,
	// message, branch, title, tool) or reason holds it, case aside.
	Text  string
	Limit int
	// Offset skips that many actions of the ordered list (a page).
	Offset int
}

// ActionUpdate is what a transition writes besides the new status. Zero
// fields are left as they are.
type ActionUpdate struct {
	Status    ActionStatus
	Reason    string
	DecidedBy string
	DecidedAt time.Time
	Result    *Result
	SettledAt time.Time
	// Preview, when set, replaces the stored card: the card an approval
	// bound, or the new card of an approval refused as card_changed.
	Preview *Preview
}

// ProposalFacts is what deciding one proposal reads, in one query.
type ProposalFacts struct {
	Project *Project
	Owner   *Member
	// Role is the principal's role in the project, "" for none.
	Role Role
	// Specific and Wildcard are the agent's agent_autonomy modes for the
	// type and for "*", "" where there is no rule.
	Specific, Wildcard Policy
	// AgentPatterns are the agent's own allow patterns (AgentPattern), in
	// the order they were recorded.
	AgentPatterns []string
	// Trust is the project's trusted permissions.json version, nil for a
	// project that has none recorded yet (read in the same statement as
	// the rest: one read per proposal).
	Trust *PermissionsTrust
}

// Tx is one transaction on a Store. It is one interface per entity,
// embedded, so that a reader finds an entity's reads and writes together;
// every method of every part runs in the one transaction.
type Tx interface {
	ProjectTx
	MemberTx
	SessionTx
	AgentTx
	ActionTx
	EventTx
	TaskTx
	RunTx
	ProcessTx
	TrustTx
	WebhookTx
	BudgetTx
	ContainerTx
}

// ProjectTx is the part of a Tx that reads and writes the projects, their
// settings and pull requests.
type ProjectTx interface {
	CreateProject(ctx context.Context, p *Project) error
	Project(ctx context.Context, id string) (*Project, error)
	Projects(ctx context.Context) ([]*Project, error)
	SetContainerRunning(ctx context.Context, projectID string, running bool) error

	// SetProjectProcesses writes the project's process settings: whether
	// brabo's git actions run the repository's hooks, and the ceiling on a
	// terminal command's timeoutSec (0: none of the project's own).
	SetProjectProcesses(ctx context.Context, projectID string, gitHooks bool, maxTimeoutSec int) error

	// SetProjectMcpTools replaces the project's mapped MCP tools.
	SetProjectMcpTools(ctx context.Context, projectID string, tools []string) error

	// InfraAgent is the id of the project's infra agent (the one that may
	// propose container_handoff, docs/actions.md), "" when it has none;
	// SetInfraAgent names it ("" for none).
	InfraAgent(ctx context.Context, projectID string) (string, error)
	SetInfraAgent(ctx context.Context, projectID, agentID string) error

	// CreatePR stores a PR and gives it the project's next number.
	CreatePR(ctx context.Context, pr *PullRequest) error

	PR(ctx context.Context, projectID string, number int64) (*PullRequest, error)
	PRs(ctx context.Context, projectID string) ([]*PullRequest, error)

	// MarkPRMerged records that actionID merged the PR, once: it reports
	// false when the PR was merged already.
	MarkPRMerged(ctx context.Context, projectID string, number int64, actionID string) (bool, error)

	// SetProjectAgents writes the project's agent settings: its cap on dev
	// agents working at once (at least 1) and its inactivity cap in
	// seconds (0: the server's default).
	SetProjectAgents(ctx context.Context, projectID string, maxParallel, waitCapSec int) error

	// AddProtectedBranch adds a branch to the project's protected list and
	// reports false (writing nothing) when it is there already.
	AddProtectedBranch(ctx context.Context, b *ProtectedBranch) (bool, error)

	// ProtectedBranches lists the branches git_branch_protect added, in
	// the order they were added (the built-in ones are not rows).
	ProtectedBranches(ctx context.Context, projectID string) ([]ProtectedBranch, error)
}

// MemberTx is the part of a Tx that reads and writes the members, their
// tokens and roles.
type MemberTx interface {
	CreateMember(ctx context.Context, m *Member) error
	Member(ctx context.Context, id string) (*Member, error)

	// MemberByTokenHash finds the member whose live token has the hash;
	// a revoked token is ErrNotFound.
	MemberByTokenHash(ctx context.Context, hash string) (*Member, error)

	// Admins lists the admin members, oldest first.
	Admins(ctx context.Context) ([]*Member, error)

	// RevokeMemberToken revokes the member's token and ends every session
	// of the member, and reports whether the token was live. It signals
	// AuthSignal on commit.
	RevokeMemberToken(ctx context.Context, memberID string, at time.Time) (bool, error)

	// SetMemberToken gives the member a new token (its hash), which
	// replaces the old one and lifts a revocation, and ends every session
	// of the member. It signals AuthSignal on commit.
	SetMemberToken(ctx context.Context, memberID, hash string, at time.Time) error

	CountMembers(ctx context.Context) (int, error)
	SetRole(ctx context.Context, m Membership) error

	// Role returns the member's role in the project, "" for none.
	Role(ctx context.Context, projectID, memberID string) (Role, error)

	Memberships(ctx context.Context, memberID string) ([]Membership, error)
}

// SessionTx is the part of a Tx that reads and writes the web sessions.
type SessionTx interface {
	// CreateSession stores a new web session.
	CreateSession(ctx context.Context, s *Session) error

	// SessionByTokenHash finds a session by its secret's hash, live or
	// not (Session.Live says), or ErrNotFound.
	SessionByTokenHash(ctx context.Context, hash string) (*Session, error)

	// Sessions lists the member's sessions that are live at now, newest
	// first.
	Sessions(ctx context.Context, memberID string, now time.Time) ([]*Session, error)

	// RevokeSession ends one session of the member, and reports whether
	// it was live (false for one that is the member's no more, ended or
	// never was). It signals AuthSignal on commit.
	RevokeSession(ctx context.Context, memberID, sessionID string, at time.Time) (bool, error)
}

// AgentTx is the part of a Tx that reads and writes the agents, their
// tokens, autonomy, own patterns, instructions and leases.
type AgentTx interface {
	CreateAgent(ctx context.Context, a *Agent) error
	Agent(ctx context.Context, id string) (*Agent, error)

	// AgentByTokenHash finds the agent whose live token has the hash; a
	// revoked token is ErrNotFound.
	AgentByTokenHash(ctx context.Context, hash string) (*Agent, error)

	Agents(ctx context.Context, projectID string) ([]*Agent, error)

	// RevokeAgentToken revokes the agent's token and reports whether it
	// was live. It signals AuthSignal on commit.
	RevokeAgentToken(ctx context.Context, agentID string, at time.Time) (bool, error)

	// SetAgentToken gives the agent a new token (its hash), which replaces
	// the old one and lifts a revocation (a re-installed hook agent). It
	// signals AuthSignal on commit.
	SetAgentToken(ctx context.Context, agentID, hash string) error

	PutAutonomy(ctx context.Context, a AgentAutonomy) error
	Autonomy(ctx context.Context, agentID string) ([]AgentAutonomy, error)

	// DeleteAutonomy removes the agent's rule for a.ActionType if and only
	// if its mode is still a.Mode, and reports whether it did: of two
	// processes removing one rule, exactly one proceeds.
	DeleteAutonomy(ctx context.Context, a AgentAutonomy) (bool, error)

	// AddAgentPattern records one of an agent's own patterns, and reports
	// false (and writes nothing) when the agent has it already.
	AddAgentPattern(ctx context.Context, p *AgentPattern) (bool, error)

	// AgentPatterns lists an agent's own patterns in the order they were
	// recorded.
	AgentPatterns(ctx context.Context, agentID string) ([]AgentPattern, error)

	// DeleteAgentPattern removes one of an agent's own patterns, and
	// reports whether it was there.
	DeleteAgentPattern(ctx context.Context, agentID, pattern string) (bool, error)

	// ClaimAgent leases the agent's actor to owner (one process) until
	// now+lease if the agent is free, its lease ran out (until before now),
	// or owner holds it already, which renews it; it reports whether owner
	// holds it now. Of several owners claiming at once, at most one wins.
	ClaimAgent(ctx context.Context, agentID, owner string, now time.Time, lease time.Duration) (bool, error)

	// ClaimAgents is ClaimAgent for many agents at once, in a few
	// statements rather than one per agent (a process renews every lease
	// it holds at every tick): it returns the ids owner holds now. An id
	// given twice counts once.
	ClaimAgents(ctx context.Context, agentIDs []string, owner string, now time.Time, lease time.Duration) (map[string]bool, error)

	// ReleaseAgent ends owner's lease of the agent, so another process may
	// claim it at once; a lease another owner holds is left as it is.
	ReleaseAgent(ctx context.Context, agentID, owner string) error

	// AgentLease reads the agent's lease, or ErrNotFound when nobody ever
	// claimed it or its holder released it.
	AgentLease(ctx context.Context, agentID string) (*AgentLease, error)

	// AgentLeases reads every agent's lease, by agent id (a process that
	// renews its leases reads them first, to leave out the agents another
	// owner holds).
	AgentLeases(ctx context.Context) (map[string]*AgentLease, error)

	// AgentInstructions reads an agent's stored instructions, or
	// ErrNotFound when it has none.
	AgentInstructions(ctx context.Context, agentID string) (*AgentInstructions, error)

	// PutAgentInstructions replaces an agent's stored instructions.
	PutAgentInstructions(ctx context.Context, in *AgentInstructions) error
}

// ActionTx is the part of a Tx that reads and writes the proposed actions
// and their transitions.
type ActionTx interface {
	// ProposalFacts reads the project, its owner, the principal's role,
	// the agent's autonomy for type t and its own patterns (agentID "" for
	// a human proposal), and the project's trusted permissions version.
	ProposalFacts(ctx context.Context, projectID, principalID, agentID string, t ActionType) (*ProposalFacts, error)

	// ExpiredWaits lists the pending external actions whose hook's
	// announced deadline (Execution.WaitUntil) is before before, oldest
	// first, at most limit: the agent no longer waits for them.
	ExpiredWaits(ctx context.Context, before time.Time, limit int) ([]*ProposedAction, error)

	// InsertAction stores a new action. A second live git_merge for one PR
	// is ErrConflict.
	InsertAction(ctx context.Context, a *ProposedAction) error

	Action(ctx context.Context, id string) (*ProposedAction, error)
	Actions(ctx context.Context, f ActionFilter) ([]*ProposedAction, error)

	// CountActions counts the actions f selects, ignoring its Limit and
	// Offset: the true size of a list shown a page at a time.
	CountActions(ctx context.Context, f ActionFilter) (int, error)

	// PendingOfAgent counts the agent's pending actions. It holds the
	// agent's row until the transaction ends, so that the proposals of one
	// agent in concurrent transactions are counted one after the other.
	PendingOfAgent(ctx context.Context, agentID string) (int, error)

	// TransitionAction applies u if and only if the action's status is one
	// of from, and reports whether it did: the claim that makes execution
	// exactly-once.
	TransitionAction(ctx context.Context, id string, from []ActionStatus, u ActionUpdate) (bool, error)

	// ActionEvents lists the events of one action, in their order.
	ActionEvents(ctx context.Context, projectID, actionID string) ([]Event, error)

	// MergeActions lists the git_merge actions proposed for one PR.
	MergeActions(ctx context.Context, projectID string, pr int64) ([]*ProposedAction, error)
}

// EventTx is the part of a Tx that reads and writes the projects' event
// logs and the outbox.
type EventTx interface {
	// AppendEvent numbers e in its project's log and stores it.
	AppendEvent(ctx context.Context, e *Event) error

	Events(ctx context.Context, projectID string, after int64, limit int) ([]Event, error)

	// EventsOfType is Events holding only the events of one type.
	EventsOfType(ctx context.Context, projectID, eventType string, after int64, limit int) ([]Event, error)

	// LastEventSeq is the sequence number of the project's newest event, 0
	// for an empty log: where a reader that wants only what comes next
	// starts.
	LastEventSeq(ctx context.Context, projectID string) (int64, error)

	Enqueue(ctx context.Context, m *OutboxMessage) error

	// ClaimOutbox leases up to limit undelivered messages whose lease has
	// run out, until now+lease.
	ClaimOutbox(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]OutboxMessage, error)

	MarkDelivered(ctx context.Context, id int64, at time.Time) error

	// ClaimOutboxFor is ClaimOutbox for the process owner: it leaves out
	// the messages whose actor key ("agent:<id>") names an agent that
	// another owner holds a lease of that has not run out at now, so they
	// go to the worker of the process that runs that agent's actor. When
	// the holder dies, its lease runs out and anyone may claim them.
	ClaimOutboxFor(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]OutboxMessage, error)
}

// TaskTx is the part of a Tx that reads and writes the backlog.
type TaskTx interface {
	CreateTask(ctx context.Context, t *Task) error
	Task(ctx context.Context, id string) (*Task, error)
	Tasks(ctx context.Context, projectID string) ([]*Task, error)

	// UpdateTask writes the task's status, blocked reason and origin, agent
	// and updated_at.
	UpdateTask(ctx context.Context, t *Task) error

	// ClaimTask gives a todo task to an agent (status in_progress), if and
	// only if it is still todo, and reports whether it did: two agents
	// racing for a task cannot both have it, whatever the isolation.
	ClaimTask(ctx context.Context, taskID, agentID string, now time.Time) (bool, error)

	// ClaimTaskWithin is ClaimTask within the project's cap on parallel
	// dev agents: it claims only while fewer of the project's tasks than
	// its MaxParallel are in progress, and reports false otherwise. The
	// claims of one project are counted one after the other (the
	// project's row is held until the transaction ends), so concurrent
	// claims never pass the cap together.
	ClaimTaskWithin(ctx context.Context, taskID, agentID string, now time.Time) (bool, error)
}

// RunTx is the part of a Tx that reads and writes the agents' runs.
type RunTx interface {
	// SaveRun inserts or replaces a run (its lease is left as it is).
	SaveRun(ctx context.Context, r *Run) error

	Run(ctx context.Context, id string) (*Run, error)

	// AwaitingRun finds the run of an actor waiting (awaiting_approval or
	// awaiting_pr) for an action, or ErrNotFound.
	AwaitingRun(ctx context.Context, actorKey, actionID string) (*Run, error)

	// WaitingRun finds an actor's latest run that waits (awaiting_approval
	// or awaiting_pr), or ErrNotFound.
	WaitingRun(ctx context.Context, actorKey string) (*Run, error)

	// LeaveWait moves a run that awaits actionID (awaiting_approval or
	// awaiting_pr) to state to, clearing the awaited action and its
	// deadline, if and only if it still awaits it, and reports whether it
	// did: of two processes resuming (or blocking) one run, exactly one
	// proceeds.
	LeaveWait(ctx context.Context, runID, actionID string, to RunState, now time.Time) (bool, error)

	// RunsInState lists the runs in a state, oldest first.
	RunsInState(ctx context.Context, state RunState) ([]*Run, error)

	// WaitingAgents lists every run that waits (awaiting_approval or
	// awaiting_pr) of an agent, without its Ctx: the agent, the awaited
	// action and that action's status now ("" when the store has no such
	// action). It is what a process restores waiting agents from without
	// holding their conversations.
	WaitingAgents(ctx context.Context) ([]WaitingAgent, error)

	// ExpiredRuns lists up to limit runs that still wait
	// (awaiting_approval or awaiting_pr) and whose Deadline is at or
	// before now, earliest deadline first.
	ExpiredRuns(ctx context.Context, now time.Time, limit int) ([]*Run, error)

	// ClaimRun leases a run to owner until now+lease if it is free, its
	// lease ran out, or owner holds it already; it reports whether it did.
	ClaimRun(ctx context.Context, id, owner string, now time.Time, lease time.Duration) (bool, error)

	// ReleaseRun ends owner's lease.
	ReleaseRun(ctx context.Context, id, owner string) error
}

// ProcessTx is the part of a Tx that reads and writes the instances and the
// actions they run.
type ProcessTx interface {
	// PutInstance inserts the instance or replaces its row (a renewal of
	// its lease).
	PutInstance(ctx context.Context, in *Instance) error

	// Instances lists the instances recorded, oldest first.
	Instances(ctx context.Context) ([]*Instance, error)

	// DeleteInstance removes the instance's row (a graceful stop); a
	// missing row is not an error.
	DeleteInstance(ctx context.Context, id string) error

	// PutRunning records an action as running, or replaces its record (a
	// new process group).
	PutRunning(ctx context.Context, r *RunningAction) error

	// FinishRunning removes the action's running record; a missing one is
	// not an error.
	FinishRunning(ctx context.Context, actionID string) error

	// RunningActions lists the running records, oldest first.
	RunningActions(ctx context.Context) ([]*RunningAction, error)
}

// TrustTx is the part of a Tx that reads and writes the trusted versions of
// the projects' permissions.json.
type TrustTx interface {
	// PermissionsTrust reads which version of the project's
	// permissions.json is the current trusted one, or ErrNotFound for a
	// project made before trust was recorded (it is trusted at first use).
	PermissionsTrust(ctx context.Context, projectID string) (*PermissionsTrust, error)

	// LockPermissionsTrust is PermissionsTrust holding the project's trust
	// row until the transaction ends (on PostgreSQL, SELECT … FOR UPDATE),
	// so that of two concurrent changes of the trusted version one waits
	// for the other. A project without a row is ErrNotFound, and nothing is
	// held.
	LockPermissionsTrust(ctx context.Context, projectID string) (*PermissionsTrust, error)

	// InitPermissionsTrust records v as the project's first trusted
	// version, if and only if the project has none yet, and reports whether
	// it did: of two first uses at once, one records.
	InitPermissionsTrust(ctx context.Context, v *PermissionsVersion) (bool, error)

	// TrustPermissions adds v (with its content) to the project's accepted
	// versions, or leaves an already accepted one as it was, and makes it
	// the current one: unless it is current already, it is appended to the
	// project's history with the next sequence number. Only the current
	// version is trusted; an older one on disk is a change like any other.
	TrustPermissions(ctx context.Context, v *PermissionsVersion) error

	// PermissionsHistory lists the versions that became the project's
	// current one, in order (Seq from 1): the last is the trusted one.
	PermissionsHistory(ctx context.Context, projectID string) ([]PermissionsHistoryEntry, error)

	// PermissionsVersion reads one version of the project's file by its
	// hash, with its content when it was ever accepted, or ErrNotFound for
	// a hash brabo never trusted nor reported.
	PermissionsVersion(ctx context.Context, projectID, hash string) (*PermissionsVersion, error)

	// PermissionsVersions lists the project's versions ever accepted,
	// oldest first, without their content.
	PermissionsVersions(ctx context.Context, projectID string) ([]*PermissionsVersion, error)

	// ReportPermissions records that a content brabo does not trust was seen
	// on disk while the history entry seq was current (a content never seen
	// gets a reported row; an older accepted one keeps its row), and
	// reports whether this is the first time against seq or a later entry:
	// the change is recorded in the log once per content and current
	// version, whichever instance sees it.
	ReportPermissions(ctx context.Context, projectID, hash string, seq int64, at time.Time) (bool, error)
}

// WebhookTx is the part of a Tx that reads and writes the projects'
// notification webhooks.
type WebhookTx interface {
	// Webhooks lists the project's notification webhooks, oldest first.
	Webhooks(ctx context.Context, projectID string) ([]*Webhook, error)

	// SetWebhooks replaces the project's webhooks with hooks.
	SetWebhooks(ctx context.Context, projectID string, hooks []*Webhook) error

	// WebhookSecret reads the project's signing secret, or ErrNotFound for
	// a project that has none yet.
	WebhookSecret(ctx context.Context, projectID string) (string, error)

	// SetWebhookSecret sets (or replaces) the project's signing secret.
	SetWebhookSecret(ctx context.Context, projectID, secret string, at time.Time) error
}

// BudgetTx is the part of a Tx that reads and writes the projects' budgets
// and ledgers.
type BudgetTx interface {
	// Budget reads the project's budget, or ErrNotFound when its owner set
	// none.
	Budget(ctx context.Context, projectID string) (*Budget, error)

	// PutBudget sets the project's limit and prices (Spent is the
	// ledger's, and is left as it is).
	PutBudget(ctx context.Context, b *Budget) error

	// DebitBudget adds e to the project's ledger and to what its budget
	// has spent. With capped, it does so if and only if the budget has
	// e.Amount left, and reports whether it did: of two spends racing for
	// the last of a budget, one proceeds. A project with no budget is
	// ErrNotFound.
	DebitBudget(ctx context.Context, e *BudgetEntry, capped bool) (bool, error)

	// BudgetEntries lists the project's ledger, newest first, at most
	// limit lines.
	BudgetEntries(ctx context.Context, projectID string, limit int) ([]BudgetEntry, error)
}

// ContainerTx is the part of a Tx that reads and writes the projects'
// module maps and container rows.
type ContainerTx interface {
	// ModuleMap reads the project's module map, or ErrNotFound for none.
	ModuleMap(ctx context.Context, projectID string) (*ModuleMap, error)

	// PutModuleMap replaces the project's module map.
	PutModuleMap(ctx context.Context, m *ModuleMap) error

	// ProjectContainer reads the lifecycle row of the project's container,
	// or ErrNotFound when it never had one.
	ProjectContainer(ctx context.Context, projectID string) (*ProjectContainer, error)

	// PutProjectContainer writes the lifecycle row of the project's
	// container.
	PutProjectContainer(ctx context.Context, c *ProjectContainer) error

	// ProjectContainers lists every project's container row, by project.
	ProjectContainers(ctx context.Context) ([]*ProjectContainer, error)
}

// WaitingAgent is one agent's waiting run, as Tx.WaitingAgents lists it.
type WaitingAgent struct {
	RunID     string
	ProjectID string
	State     RunState
	// Agent holds the agent's ID, ProjectID and Name.
	Agent Agent
	// ActionID is the awaited action; ActionStatus its status now, ""
	// when the store has no such action.
	ActionID     string
	ActionStatus ActionStatus
}
