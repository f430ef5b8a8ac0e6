package toolloop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/brabo-dev/brabo/model"
)

// CtxVersion is the layout of Ctx this build writes and reads. Resume
// refuses any other: a Ctx stored by an incompatible build is not guessed
// at.
const CtxVersion = 1

// Ctx is the state of one conversation of the loop: plain data that
// round-trips through encoding/json exactly, so a suspended loop can be
// stored and resumed in another process (DESIGN §7.3).
type Ctx struct {
	Version  int             `json:"version"`
	Messages []model.Message `json:"messages"`
	// Iterations counts the model calls spent; a suspension spends none.
	Iterations int `json:"iterations"`
	// PendingToolCallID and PendingToolName name the tool call whose
	// result waits for a human decision.
	PendingToolCallID string `json:"pendingToolCallId,omitempty"`
	PendingToolName   string `json:"pendingToolName,omitempty"`
	// AwaitingActionID is the proposed action the loop is suspended on; ""
	// when it awaits nothing. Resume clears it, so a second delivery of the
	// same settled event is refused.
	AwaitingActionID string `json:"awaitingActionId,omitempty"`
	// Queued are the tool calls of the same assistant message after the
	// pending one: they run on Resume, in order, before the model is called
	// again.
	Queued []model.ToolCall `json:"queued,omitempty"`
	// ConsecutiveFailures counts failing tool results in a row (denials
	// neither count nor reset it).
	ConsecutiveFailures int `json:"consecutiveFailures,omitempty"`
	// Resumed lists the actions this conversation was already resumed
	// with, so that a duplicate delivery is named as such.
	Resumed []string `json:"resumed,omitempty"`
}

// Awaits reports whether c is suspended on the action: what a consumer of
// task.action_settled checks before it resumes.
func (c Ctx) Awaits(actionID string) bool {
	return c.AwaitingActionID != "" && c.AwaitingActionID == actionID
}

// clone copies c deeply enough that appending to or editing the copy never
// reaches c (messages, tool calls, arguments).
func (c Ctx) clone() Ctx {
	out := c
	out.Messages = make([]model.Message, len(c.Messages))
	for i, m := range c.Messages {
		m.ToolCalls = cloneCalls(m.ToolCalls)
		out.Messages[i] = m
	}
	if c.Messages == nil {
		out.Messages = nil
	}
	out.Queued = cloneCalls(c.Queued)
	out.Resumed = slices.Clone(c.Resumed)
	return out
}

func cloneCalls(calls []model.ToolCall) []model.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]model.ToolCall, len(calls))
	for i, tc := range calls {
		tc.Arguments = slices.Clone(tc.Arguments)
		out[i] = tc
	}
	return out
}

// normalizeMessage makes an assistant message safe to act on: a tool call
// without an id gets "call_<iteration>_<n>" (a pending call is found again
// on Resume by its id). It also makes the message what Ctx can store and
// give back byte for byte: arguments compacted (encoding/json compacts a
// RawMessage when it writes it), missing arguments as {}, arguments that
// are not JSON kept as a JSON string of their text (a RawMessage that is
// not JSON cannot be written at all), and empty lists as nil.
func normalizeMessage(m model.Message, iteration int) model.Message {
	m.Role = model.Assistant
	m.ToolCallID, m.ToolName, m.IsError = "", "", false
	if len(m.ToolCalls) == 0 {
		m.ToolCalls = nil
		return m
	}
	calls := make([]model.ToolCall, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		tc.Arguments = normalizeArgs(tc.Arguments)
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d_%d", iteration, i+1)
		}
		calls[i] = tc
	}
	m.ToolCalls = calls
	return m
}

func normalizeArgs(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage(`{}`)
	}
	if json.Valid(args) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, args); err == nil {
			return buf.Bytes()
		}
	}
	s, _ := json.Marshal(string(args))
	return s
}
