package brabo

import (
	"encoding/json"
	"time"
)

// Event types of the append-only log (DESIGN §6.2).
const (
	EventActionCreated     = "proposed_action.created"
	EventActionApproved    = "proposed_action.approved"
	EventActionDenied      = "proposed_action.denied"
	EventPermissionGranted = "permission.granted"
	EventActionExecuted    = "action.executed"
	EventActionFailed      = "action.failed"
	EventTaskStatusChanged = "backlog.task_status_changed"
	// EventProjectProcesses records a maintainer's change of the project's
	// process settings (git hooks, timeout ceiling).
	EventProjectProcesses = "project.processes_changed"
	// EventProjectMcpTools records a maintainer's change of the MCP tools
	// mapped to the developer role.
	EventProjectMcpTools = "project.mcp_tools_changed"
)

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
