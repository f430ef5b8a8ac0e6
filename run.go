package brabo

import (
	"encoding/json"
	"strings"
	"time"
)

// DefaultWaitCap is the inactivity cap of a project that sets none, unless
// the server sets another (brabo serve --wait-cap).
const DefaultWaitCap = 24 * time.Hour

// TaskStatus is where a task is in the backlog.
type TaskStatus string

// Task statuses. A task moves to done exactly once: when the merge of its
// pull request executes (DESIGN §6.4). Opening that pull request moves it
// to in_review, where it waits for the merge with no agent holding it.
const (
	TaskTodo       TaskStatus = "todo"
	TaskInProgress TaskStatus = "in_progress"
	TaskInReview   TaskStatus = "in_review"
	TaskDone       TaskStatus = "done"
	TaskBlocked    TaskStatus = "blocked"
)

// Origin names why a task or delegation stopped, never inferred by
// elimination (DESIGN §1).
type Origin string

// Origins.
const (
	OriginPolicy Origin = "policy"
	OriginInfra  Origin = "infra"
	OriginCode   Origin = "code"
	OriginModel  Origin = "model"
	OriginUser   Origin = "user"
)

// Task is a unit of work a dev agent takes.
type Task struct {
	ID            string     `json:"id"`
	ProjectID     string     `json:"projectId"`
	Title         string     `json:"title"`
	Description   string     `json:"description"`
	AgentID       string     `json:"agentId,omitempty"`
	Status        TaskStatus `json:"status"`
	BlockedReason string     `json:"blockedReason,omitempty"`
	BlockedOrigin Origin     `json:"blockedOrigin,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
}

// RunState is where an agent's run is (DESIGN §7.2).
type RunState string

// Run states.
const (
	RunWorking          RunState = "working"
	RunAwaitingApproval RunState = "awaiting_approval"
	RunAwaitingPR       RunState = "awaiting_pr"
	RunDone             RunState = "done"
	RunBlocked          RunState = "blocked"
)

// AgentKey is the actor key of an agent ("agent:<id>"): what settled
// events are routed by (Run.ActorKey, OutboxMessage.ActorKey).
func AgentKey(agentID string) string { return agentKeyPrefix + agentID }

// AgentOfKey returns the agent id an actor key names, and false for a key
// that names no agent.
func AgentOfKey(key string) (string, bool) { return strings.CutPrefix(key, agentKeyPrefix) }

const agentKeyPrefix = "agent:"

// Run is an agent's turn at a task, persisted whenever it suspends: the
// in-memory actor is a cache of it, and any process sharing the store can
// resume it from Ctx (DESIGN §7.3).
type Run struct {
	ID        string `json:"id"`
	ProjectID string `json:"projectId"`
	// ActorKey is the proposing actor's key ("agent:<id>") the outbox
	// routes settled events by.
	ActorKey string   `json:"actorKey"`
	TaskID   string   `json:"taskId,omitempty"`
	State    RunState `json:"state"`
	// AwaitingActionID is the action whose settlement resumes the run.
	AwaitingActionID string `json:"awaitingActionId,omitempty"`
	// Ctx is the suspended loop, opaque to the store.
	Ctx json.RawMessage `json:"ctx,omitempty"`
	// Deadline is when a waiting run's inactivity cap runs out (its
	// project's wait cap after the suspension); the store's sweep blocks
	// a run still waiting then, with origin policy (engine/wake.Sweeper).
	// Zero for a run that does not wait, or a wait without a cap.
	Deadline time.Time `json:"deadline,omitzero"`
	// LeaseOwner holds the run until LeaseUntil: one process resumes it.
	LeaseOwner string    `json:"leaseOwner,omitempty"`
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
	UpdatedAt  time.Time `json:"updatedAt"`
}
