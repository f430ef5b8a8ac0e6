package brabo

import (
	"encoding/json"
	"time"
)

// Event types of the append-only log (DESIGN §6.2).
const (
	EventActionCreated  = "proposed_action.created"
	EventActionApproved = "proposed_action.approved"
	EventActionDenied   = "proposed_action.denied"
	// EventCardChanged records an approval refused because it named no
	// revision or a stale one (CodeCardChanged): who tried, the revision
	// sent, the card's revision now and the parts that moved.
	EventCardChanged       = "proposed_action.card_changed"
	EventPermissionGranted = "permission.granted"
	EventActionExecuted    = "action.executed"
	EventActionFailed      = "action.failed"
	// EventActionAbandoned records a pending external action its agent
	// stopped waiting for (StatusAbandoned), with the hook's reason.
	EventActionAbandoned = "action.abandoned"
	// EventActionNotRun records an approved external action its agent
	// refused itself afterwards (StatusNotRun), with the agent's reason.
	EventActionNotRun      = "action.not_run"
	EventTaskStatusChanged = "backlog.task_status_changed"
	// EventProjectProcesses records a maintainer's change of the project's
	// process settings (git hooks, timeout ceiling).
	EventProjectProcesses = "project.processes_changed"
	// EventProjectAgents records a maintainer's change of the project's
	// agent settings: its wait cap and its cap on parallel dev agents.
	EventProjectAgents = "project.agents_changed"
	// EventProtectedRestored records the protected files an executed
	// action changed without a maintainer's approval, which brabo put
	// back (the action failed, naming them).
	EventProtectedRestored = "protected_file.restored"
	// EventAutonomyChanged records a change of what an agent may do
	// without asking: an agent_autonomy rule set, changed or removed, or
	// patterns of the agent's own added or removed. Its payload is an
	// AutonomyChange.
	EventAutonomyChanged = "autonomy.changed"
	// EventPermissionsTrusted records a version of permissions.json
	// becoming trusted other than by Accept: written by PUT or by a
	// write_file a maintainer approved, or found at the first use of a
	// project made before trust was recorded.
	EventPermissionsTrusted = "permissions.trusted"
	// EventPermissionsChanged records, once per content, a permissions.json
	// on disk that is not the trusted version: with the difference, and
	// whether it applies (a tightening) or waits for a maintainer.
	EventPermissionsChanged = "permissions.changed_on_disk"
	// EventPermissionsAccepted records a maintainer accepting the file on
	// disk as the trusted version, with the difference.
	EventPermissionsAccepted = "permissions.accepted"
	// EventPermissionsRestored records a maintainer writing the trusted
	// version back over the file on disk.
	EventPermissionsRestored = "permissions.restored"
	// EventProjectMcpTools records a maintainer's change of the MCP tools
	// mapped to the developer role.
	EventProjectMcpTools = "project.mcp_tools_changed"
	// EventWebhooksChanged records a maintainer's change of the project's
	// notification webhooks (their hosts and formats, never their URLs:
	// a Slack or ntfy URL is a secret of its own), or of its signing
	// secret.
	EventWebhooksChanged = "project.webhooks_changed"
	// EventNotifyFailed records notifications that could not be delivered:
	// a webhook that failed every try, or notices dropped because the
	// queue was full. Delivery never slows a proposal; its failures are
	// here instead.
	EventNotifyFailed = "notification.failed"
	// EventExecutionActivated records a maintainer activating execution:
	// the seeded patterns written into permissions.json and the dev
	// agents given git_commit: auto_approve, in one event (payload
	// Activation), only when something changed.
	EventExecutionActivated = "project.execution_activated"
	// EventBudgetChanged records the owner setting the project's budget
	// (limit and model prices).
	EventBudgetChanged = "budget.changed"
	// EventModuleMapChanged records a maintainer setting the project's
	// module map.
	EventModuleMapChanged = "project.module_map_changed"
	// EventContainerChanged records a lifecycle change of the project's
	// container (provisioning, running, stopped, removed, failed) and
	// the mounted folder proven writable (workspaceVerifiedAt).
	EventContainerChanged = "container.state_changed"
)

// Via values of an AutonomyChange: what made the change.
const (
	ViaAPI         = "api"          // PUT …/autonomy, DELETE …/patterns
	ViaWeb         = "web"          // the agent card
	ViaAlwaysAllow = "always_allow" // an always-allow click
	ViaMigration   = "migration"    // a click-written blanket rule turned into patterns at start
)

// AutonomyChange is the payload of autonomy.changed. The event's actor is
// who made the change (a member, or SystemActor for a migration).
type AutonomyChange struct {
	AgentID string `json:"agentId"`
	// Via says what made the change (ViaAPI, ViaWeb, …).
	Via string `json:"via"`
	// ActionType, Mode and PreviousMode describe a rule's change: Mode ""
	// is a rule removed, PreviousMode "" a rule that did not exist.
	ActionType   ActionType `json:"actionType,omitempty"`
	Mode         Policy     `json:"mode,omitempty"`
	PreviousMode Policy     `json:"previousMode,omitempty"`
	// Added and Removed are the agent's own patterns that changed.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// ActionIDs are the clicked actions the change came from (a click, or
	// the clicks a migration read).
	ActionIDs []string `json:"actionIds,omitempty"`
	// Note says what a reader of the change needs besides (a migration's
	// clicks that gave no pattern, and why).
	Note string `json:"note,omitempty"`
}

// Outbox topics.
const (
	TopicActionSettled = "task.action_settled"
	TopicPRSettled     = "task.pr_settled"
)

// SystemActor is the actor of events no person or agent caused.
const SystemActor = "system"

// Event is one entry of a project's log, numbered from 1 without gaps.
type Event struct {
	ProjectID string          `json:"projectId"`
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	ActorID   string          `json:"actorId"`
	ActionID  string          `json:"actionId,omitempty"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"createdAt"`
}

// OutboxMessage is transport to the agents: at least once, keyed by the
// proposing actor. Consumers are idempotent on ActionID.
type OutboxMessage struct {
	ID        int64           `json:"id"`
	ProjectID string          `json:"projectId"`
	Topic     string          `json:"topic"`
	ActorKey  string          `json:"actorKey"`
	ActionID  string          `json:"actionId"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"createdAt"`
	// ClaimedUntil is the lease of the worker that delivers it.
	ClaimedUntil time.Time `json:"claimedUntil,omitzero"`
	DeliveredAt  time.Time `json:"deliveredAt,omitzero"`
}

// Settled is the payload of task.action_settled.
type Settled struct {
	ActionID string       `json:"actionId"`
	Status   ActionStatus `json:"status"`
	Result   *Result      `json:"result,omitempty"`
	Reason   string       `json:"reason,omitempty"`
}
