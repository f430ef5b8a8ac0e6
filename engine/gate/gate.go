// Package gate is the QA lead and its gate areas (DESIGN §7.4, ADR 0057).
//
// A Lead (one per project) runs a gate area for a task: the area delegates
// to sub-agents in order (qa-automation, then qa-performance-security), each
// running its own tool loop under its own agent identity in a checkout of
// the task's work (checkout.go): the dev agent's worktree while the dev
// holds it, else the gate's own worktree of the task's branch,
// WorktreeRel. A delegation ends in one of three outcomes: Ok (a verdict),
// Blocked (with a named origin) or Awaiting (a pipeline action waits for a
// human, with the sub-agent's whole loop Ctx).
//
// The area is a recursion over the remaining delegations with the verdicts
// collected so far (continueArea), so it can stop between two delegations,
// or in the middle of one, without losing what it has. On Awaiting the lead
// persists its in-flight state — the delegation in flight, the verdicts so
// far, the ones still to run, and the sub-agent's Ctx — in a brabo.Run keyed
// by the SUB-AGENT's actor key ("agent:<sub-agent id>", the key the pipeline
// routes task.action_settled by, since the sub-agent proposed) and awaiting
// the action id (one Run per delegation: a stored run keeps the actor key
// it was first saved with), appends delegation.awaiting_approval and
// returns. While it
// waits the area does not consolidate, give a verdict, or block the task.
//
// The Lead is the wake worker's Local and Resumer: the settled event of the
// awaited action (approved and executed, failed, or denied — a denial
// resumes too, with the reason as the tool result) resumes that sub-agent's
// loop and the area goes on: the next delegations, then gate.completed with
// every verdict in order. The Run is the truth and the Lead a cache of it,
// so a new Lead on the same store (after a restart) resumes it.
//
// An Awaiting outcome is never recorded as delegation.failed; only a really
// unexpected outcome falls to the catch-all, and its origin is named (code).
package gate

import (
	"encoding/json"
	"fmt"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

// Sub-agents, by agent name, in the order the QA area delegates to them.
const (
	QAAutomation          = "qa-automation"
	QAPerformanceSecurity = "qa-performance-security"
)

// DefaultDelegations is the QA area's delegations, in order.
var DefaultDelegations = []string{QAAutomation, QAPerformanceSecurity}

// Events the lead appends to its project's log.
const (
	EventDelegationStarted   = "delegation.started"
	EventDelegationCompleted = "delegation.completed"
	EventDelegationAwaiting  = "delegation.awaiting_approval"
	EventDelegationFailed    = "delegation.failed"
	EventGateCompleted       = "gate.completed"
	EventTaskBlocked         = "backlog.task_blocked"
)

// Outcome is how one delegation ended: Ok, Blocked or Awaiting.
type Outcome interface{ delegation() }

// Ok: the sub-agent gave its verdict.
type Ok struct{ Verdict string }

// Blocked: the sub-agent could not give a verdict; Origin names why.
type Blocked struct {
	Info   string
	Origin brabo.Origin
}

// Awaiting: a pipeline action of the sub-agent waits for a human. Ctx is
// the sub-agent's whole suspended loop: what makes resuming possible.
type Awaiting struct {
	ActionID   string
	ToolCallID string
	ToolName   string
	Ctx        toolloop.Ctx
}

func (Ok) delegation()       {}
func (Blocked) delegation()  {}
func (Awaiting) delegation() {}

// fromLoop maps a tool loop outcome to a delegation outcome. Anything else
// is a defect of this build: the catch-all names its origin (code), never
// infra by elimination.
func fromLoop(out toolloop.Outcome) Outcome {
	switch o := out.(type) {
	case toolloop.Done:
		return Ok{Verdict: o.Final}
	case toolloop.Halted:
		return Blocked{Info: o.Why, Origin: o.Origin}
	case toolloop.AwaitingApproval:
		return Awaiting{ActionID: o.ActionID, ToolCallID: o.ToolCallID, ToolName: o.ToolName, Ctx: o.Ctx}
	}
	return Blocked{Info: fmt.Sprintf("the tool loop ended with an unexpected outcome %T", out), Origin: brabo.OriginCode}
}

// Verdict is one sub-agent's verdict in an area.
type Verdict struct {
	SubAgent string `json:"subAgent"`
	Verdict  string `json:"verdict"`
}

// StateVersion is the layout of State this build writes and reads.
const StateVersion = 1

// State is the lead's in-flight area, stored as the Run's Ctx: plain data
// that round-trips through encoding/json.
type State struct {
	// Gate marks a Run's Ctx as a gate area's (not a dev agent's Ctx).
	Gate   int    `json:"gate"`
	Area   string `json:"area"`
	TaskID string `json:"taskId"`
	// Current is the delegation in flight ("" between delegations);
	// Remaining the ones after it, in order.
	Current   string    `json:"current,omitempty"`
	Remaining []string  `json:"remaining"`
	Verdicts  []Verdict `json:"verdicts"`
	// Loop is Current's suspended tool loop.
	Loop *toolloop.Ctx `json:"loop,omitempty"`
	// Worktree is the checkout of the task's work the sub-agents act in,
	// relative to the scope root (slash form): WorktreeRel, or the dev
	// agent's worktree. A resumed area goes on there.
	Worktree string `json:"worktree,omitempty"`
}

// decodeState reads a Run's Ctx as a gate State, refusing what is not one
// or another version.
func decodeState(raw json.RawMessage) (State, error) {
	var s State
	if len(raw) == 0 {
		return s, fmt.Errorf("the run has no stored state")
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("the stored state is unreadable: %v", err)
	}
	if s.Gate != StateVersion {
		return s, fmt.Errorf("the stored state has gate version %d; this build reads version %d only", s.Gate, StateVersion)
	}
	return s, nil
}

// Result is how RunArea or a resume left the area: Completed, Suspended
// or Failed.
type Result interface{ result() }

// Completed: every delegation gave its verdict, in order.
type Completed struct{ Verdicts []Verdict }

// Suspended: a sub-agent's action waits for a human; the Run is saved.
type Suspended struct {
	RunID    string
	SubAgent string
	ActorKey string
	ActionID string
	Verdicts []Verdict
}

// Failed: a delegation was blocked; the task is blocked with its origin.
type Failed struct {
	SubAgent string
	Reason   string
	Origin   brabo.Origin
	Verdicts []Verdict
}

func (Completed) result() {}
func (Suspended) result() {}
func (Failed) result()    {}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain values are passed
	}
	return b
}
