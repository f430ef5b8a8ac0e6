// Package model is the one interface brabo's agents talk to language
// models through (DESIGN §7.6). Providers live in subpackages: openai
// (any OpenAI-compatible server), anthropic, and scripted (replays a script;
// tests and the demo).
//
// Messages and tool calls are plain data that round-trip through JSON, so
// a suspended conversation can be stored and resumed in another process.
package model

import (
	"context"
	"encoding/json"
	"fmt"
)

// Role is who a message is from.
type Role string

// Message roles.
const (
	User      Role = "user"
	Assistant Role = "assistant"
	// ToolResult messages answer one tool call of the assistant message
	// before them, by ToolCallID.
	ToolResult Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are what an assistant message asks to run, in order.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID and ToolName say which call a tool result answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	// IsError marks a tool result that reports a failure or a denial.
	IsError bool `json:"isError,omitempty"`
}

// ToolCall is one call the model asks for.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Tool describes a tool the model may call; Parameters is a JSON Schema
// object.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one call to a model.
type Request struct {
	System    string    `json:"system,omitempty"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools,omitempty"`
	MaxTokens int       `json:"maxTokens,omitempty"`
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons.
const (
	StopEnd       StopReason = "end"        // the model is done
	StopToolCalls StopReason = "tool_calls" // it asks for tools
	StopMaxTokens StopReason = "max_tokens" // it ran out of tokens
)

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// Response is the model's answer: one assistant message.
type Response struct {
	Message    Message    `json:"message"`
	StopReason StopReason `json:"stopReason"`
	Usage      Usage      `json:"usage"`
}

// Model completes conversations. Implementations are safe for concurrent
// use.
type Model interface {
	Complete(ctx context.Context, req Request) (*Response, error)
}

// Error is a provider failure with what a caller needs to decide whether
// to try again.
type Error struct {
	Provider string
	// Status is the HTTP status, 0 when the request never got an answer.
	Status int
	// Retryable is true for rate limits, overload and transport errors.
	Retryable bool
	Message   string
}

// RetryableStatus reports whether an HTTP status from a provider is worth
// another try: 408 and 409, 429 (rate limited) and every 5xx (Anthropic's
// 529 overloaded included). Providers share the rule, so that the tool
// loop's retries mean the same thing whichever model runs.
func RetryableStatus(status int) bool {
	return status == 408 || status == 409 || status == 429 || status >= 500
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Message)
	}
	return e.Provider + ": " + e.Message
}
