package brabo

import (
	"encoding/json"
	"time"
)

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
)

// Settled reports whether the action has left pending for good: executed,
// failed or denied.
func (s ActionStatus) Settled() bool {
	return s == StatusExecuted || s == StatusFailed || s == StatusDenied
}

// Payload is what an action would do. Each type reads the fields it needs.
type Payload struct {
	Command      string `json:"command,omitempty"`      // terminal
	Cwd          string `json:"cwd,omitempty"`          // terminal: relative to the scope root
	TimeoutSec   int    `json:"timeoutSec,omitempty"`   // terminal
	Path         string `json:"path,omitempty"`         // write_file: relative to the scope root
	Content      string `json:"content,omitempty"`      // write_file
	Message      string `json:"message,omitempty"`      // git_commit
	Branch       string `json:"branch,omitempty"`       // git_branch_create, git_push
	From         string `json:"from,omitempty"`         // git_branch_create: start point
	Remote       string `json:"remote,omitempty"`       // git_push (default origin)
	Title        string `json:"title,omitempty"`        // pr_open
	Base         string `json:"base,omitempty"`         // pr_open
	PR           int64  `json:"pr,omitempty"`           // git_merge
	TargetBranch string `json:"targetBranch,omitempty"` // git_merge (filled from the PR)
	TaskID       string `json:"taskId,omitempty"`
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
	// Detail holds type-specific facts: the commit hash, the PR number.
	Detail map[string]string `json:"detail,omitempty"`
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
	// Reason names the rule that decided (and for a denial by a human, the
	// human's reason).
	Reason    string    `json:"reason"`
	Decision  Decision  `json:"decision"`
	DecidedBy string    `json:"decidedBy,omitempty"` // empty for auto-approval
	Result    *Result   `json:"result,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	DecidedAt time.Time `json:"decidedAt,omitzero"`
	SettledAt time.Time `json:"settledAt,omitzero"`
}
