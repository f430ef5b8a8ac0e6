package brabo

import (
	"context"
	"encoding/json"
)

// Statuses of a LeadTurn.
const (
	TurnAnswered         = "answered"
	TurnAwaitingApproval = "awaiting_approval"
	TurnHalted           = "halted"
)

// LeadTurn is how one turn of the dev lead ended: answered (Answer), or
// suspended on a pending action (ActionID; the decision resumes the turn
// and its answer appears in the conversation), or halted (Reason, with a
// named Origin).
type LeadTurn struct {
	Status   string `json:"status"`
	Answer   string `json:"answer,omitempty"`
	ActionID string `json:"actionId,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Origin   Origin `json:"origin,omitempty"`
}

// LeadMessage is one message of the dev lead's conversation: the user's
// ("user"), the lead's ("assistant", with the tools it called) or a tool's
// result ("tool", naming the call it answers).
type LeadMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content,omitempty"`
	ToolCalls  []LeadToolCall `json:"toolCalls,omitempty"`
	ToolCallID string         `json:"toolCallId,omitempty"`
	ToolName   string         `json:"toolName,omitempty"`
	IsError    bool           `json:"isError,omitempty"`
}

// LeadToolCall is one tool call of the lead: its id, tool and arguments.
type LeadToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Conversation is a project's dev lead conversation as stored. Messages
// is never nil; AwaitingActionID names the action the current turn waits
// for ("" when none).
type Conversation struct {
	ProjectID        string        `json:"projectId"`
	AgentID          string        `json:"agentId"`
	AwaitingActionID string        `json:"awaitingActionId,omitempty"`
	Messages         []LeadMessage `json:"messages"`
}

// Conversations is the dev lead's conversation API (DESIGN §7.5). The
// wiring (cmd/brabo) implements it with engine/devlead; the HTTP API takes
// it as an optional dependency.
type Conversations interface {
	// Post appends the user's text to the project's dev lead conversation
	// and runs one turn; it returns when the turn answered, suspended on
	// a pending action, or halted, with the turn stored. Errors carry a
	// code: not_found when the project has no dev lead agent,
	// lead_awaiting_decision while a turn waits for a decision.
	Post(ctx context.Context, projectID, text string) (LeadTurn, error)
	// Read returns the project's dev lead conversation as stored
	// (not_found when the project has no dev lead agent).
	Read(ctx context.Context, projectID string) (*Conversation, error)
}

// GateStart says that a gate area was started on a task.
type GateStart struct {
	TaskID string `json:"taskId"`
	Area   string `json:"area"`
	// Status is "started": the area runs in the background, and its
	// progress is in the project's event log (delegation.*,
	// gate.completed).
	Status string `json:"status"`
}

// Gates runs the QA gate (DESIGN §7.4). The wiring (cmd/brabo) implements
// it with engine/gate; the HTTP API takes it as an optional dependency.
type Gates interface {
	// Trigger starts the project's QA gate area on the task and returns at
	// once: the area runs in the background, may suspend on a sub-agent's
	// pending action, and the decision resumes it. Errors carry a code:
	// not_found for an unknown task, gate_in_progress when an area on the
	// task runs or waits already.
	Trigger(ctx context.Context, taskID string) (GateStart, error)
}
