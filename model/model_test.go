package model_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/brabo-dev/brabo/model"
)

// A conversation survives JSON: a suspended run is stored and resumed in
// another process (DESIGN §7.2), so nothing may be lost on the way.
func TestRequestRoundTripsThroughJSON(t *testing.T) {
	req := model.Request{
		System: "sys",
		Messages: []model.Message{
			{Role: model.User, Content: "go"},
			{Role: model.Assistant, Content: "ok", ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "terminal", Arguments: json.RawMessage(`{"command":"ls -la","env":{"A":"1"}}`)},
			}},
			{Role: model.ToolResult, ToolCallID: "call_1", ToolName: "terminal", Content: "denied", IsError: true},
		},
		Tools:     []model.Tool{{Name: "terminal", Description: "run", Parameters: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens: 10,
	}
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back model.Request
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, req) {
		t.Fatalf("round trip changed the request:\n%s\n%+v", data, back)
	}
}

func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  model.Error
		want string
	}{
		{model.Error{Provider: "openai", Status: 429, Retryable: true, Message: "slow down"}, "openai: HTTP 429: slow down"},
		{model.Error{Provider: "anthropic", Retryable: true, Message: "connection refused"}, "anthropic: connection refused"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	for status, want := range map[int]bool{200: false, 400: false, 401: false, 404: false,
		408: true, 409: true, 429: true, 500: true, 502: true, 503: true, 529: true} {
		if got := model.RetryableStatus(status); got != want {
			t.Errorf("RetryableStatus(%d) = %v, want %v", status, got, want)
		}
	}
}
