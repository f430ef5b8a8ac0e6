package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/model/openai"
)

// server is an OpenAI-compatible endpoint that records each request and
// answers with the next canned (status, body).
type server struct {
	*httptest.Server
	requests atomic.Int32
	last     atomic.Pointer[recorded]
}

type recorded struct {
	method, path string
	header       http.Header
	body         map[string]any
	raw          string
}

func newServer(t *testing.T, status int, contentType, body string) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		raw, _ := io.ReadAll(r.Body)
		rec := &recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), raw: string(raw)}
		if err := json.Unmarshal(raw, &rec.body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, raw)
		}
		s.last.Store(rec)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func newModel(t *testing.T, cfg openai.Config) *openai.Model {
	t.Helper()
	m, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A real-shaped answer with two tool calls, as api.openai.com sends it.
const toolCallsAnswer = `{
  "id": "chatcmpl-abc123",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1-2025-04-14",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant",
      "content": null,
      "tool_calls": [
        {"id": "call_Xy1", "type": "function",
         "function": {"name": "terminal", "arguments": "{\"command\":\"go test ./...\"}"}},
        {"id": "call_Xy2", "type": "function",
         "function": {"name": "read_file", "arguments": "{\"path\":\"go.mod\"}"}}
      ],
      "refusal": null,
      "annotations": []
    },
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
  "service_tier": "default",
  "system_fingerprint": "fp_abc"
}`

func contentAnswer(content, finish string) string {
	c, _ := json.Marshal(content)
	return `{"id": "chatcmpl-2", "object": "chat.completion", "created": 1741569952, "model": "local",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": ` + string(c) + `},
               "logprobs": null, "finish_reason": "` + finish + `"}],
  "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}`
}

func conversation() model.Request {
	return model.Request{
		System: "You are a careful engineer.",
		Messages: []model.Message{
			{Role: model.User, Content: "Fix the build."},
			{Role: model.Assistant, Content: "Looking.", ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "terminal", Arguments: json.RawMessage(`{"command":"ls"}`)},
				{ID: "call_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
			}},
			{Role: model.ToolResult, ToolCallID: "call_1", ToolName: "terminal", Content: "go.mod\nmain.go"},
			{Role: model.ToolResult, ToolCallID: "call_2", ToolName: "read_file", Content: "denied: not now", IsError: true},
			{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "call_3", Name: "terminal", Arguments: json.RawMessage(`{"command":"go build"}`)}}},
			{Role: model.ToolResult, ToolCallID: "call_3", Content: "ok"},
		},
		Tools: []model.Tool{{
			Name:        "terminal",
			Description: "Run a shell command.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","maxLength":10000}},"required":["command"]}`),
		}, {
			Name:       "read_file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		}},
		MaxTokens: 512,
	}
}

// asJSON re-encodes v so it can be compared with a literal regardless of
// key order and spacing.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want for %s: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, asJSON(t, got), asJSON(t, w))
	}
}

func TestRequestWireFormatAndToolCallAnswer(t *testing.T) {
	srv := newServer(t, 200, "application/json", toolCallsAnswer)
	m := newModel(t, openai.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "gpt-4.1"})

	res, err := m.Complete(context.Background(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.last.Load()
	if rec.method != "POST" || rec.path != "/v1/chat/completions" {
		t.Errorf("request %s %s", rec.method, rec.path)
	}
	if got := rec.header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if rec.body["model"] != "gpt-4.1" {
		t.Errorf("model = %v", rec.body["model"])
	}
	if rec.body["max_completion_tokens"] != float64(512) || rec.body["max_tokens"] != nil {
		t.Errorf("token bound: max_completion_tokens=%v max_tokens=%v", rec.body["max_completion_tokens"], rec.body["max_tokens"])
	}
	if _, ok := rec.body["stream"]; ok {
		t.Errorf("stream sent: %v", rec.body["stream"])
	}
	sameJSON(t, "messages", rec.body["messages"], `[
	  {"role": "system", "content": "You are a careful engineer."},
	  {"role": "user", "content": "Fix the build."},
	  {"role": "assistant", "content": "Looking.", "tool_calls": [
	    {"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\":\"ls\"}"}},
	    {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"go.mod\"}"}}]},
	  {"role": "tool", "tool_call_id": "call_1", "content": "go.mod\nmain.go"},
	  {"role": "tool", "tool_call_id": "call_2", "content": "denied: not now"},
	  {"role": "assistant", "tool_calls": [
	    {"id": "call_3", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\":\"go build\"}"}}]},
	  {"role": "tool", "tool_call_id": "call_3", "content": "ok"}
	]`)
	sameJSON(t, "tools", rec.body["tools"], `[
	  {"type": "function", "function": {"name": "terminal", "description": "Run a shell command.",
	    "parameters": {"type":"object","properties":{"command":{"type":"string","maxLength":10000}},"required":["command"]}}},
	  {"type": "function", "function": {"name": "read_file",
	    "parameters": {"type":"object","properties":{"path":{"type":"string"}}}}}
	]`)

	want := &model.Response{
		Message: model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{
			{ID: "call_Xy1", Name: "terminal", Arguments: json.RawMessage(`{"command":"go test ./..."}`)},
			{ID: "call_Xy2", Name: "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
		}},
		StopReason: model.StopToolCalls,
		Usage:      model.Usage{InputTokens: 82, OutputTokens: 17},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("response:\n got %s\nwant %s", asJSON(t, res), asJSON(t, want))
	}
}

func TestContentAnswerAndDefaults(t *testing.T) {
	// The SDK's environment variables are not read: they would send the
	// request elsewhere, with someone else's key.
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-env")

	srv := newServer(t, 200, "application/json", contentAnswer("All tests pass.", "stop"))
	m := newModel(t, openai.Config{BaseURL: srv.URL, Model: "qwen", MaxTokens: 300, LegacyMaxTokens: true})
	res, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.User, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{
		Message:    model.Message{Role: model.Assistant, Content: "All tests pass."},
		StopReason: model.StopEnd,
		Usage:      model.Usage{InputTokens: 10, OutputTokens: 3},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("response %s", asJSON(t, res))
	}
	rec := srv.last.Load()
	if rec.path != "/chat/completions" {
		t.Errorf("path %s", rec.path)
	}
	if h := rec.header.Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
	if h := rec.header.Get("OpenAI-Organization"); h != "" {
		t.Errorf("organization from the environment sent: %q", h)
	}
	// Config.MaxTokens applies when the request says nothing, in the
	// legacy field when asked.
	if rec.body["max_tokens"] != float64(300) || rec.body["max_completion_tokens"] != nil {
		t.Errorf("token bound: %s", rec.raw)
	}
	if _, ok := rec.body["tools"]; ok {
		t.Errorf("tools sent without tools: %s", rec.raw)
	}
	sameJSON(t, "messages", rec.body["messages"], `[{"role": "user", "content": "hi"}]`)
}

func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		want         model.StopReason
	}{
		{"length", contentAnswer("half a sent", "length"), model.StopMaxTokens},
		{"content_filter", contentAnswer("", "content_filter"), model.StopEnd},
		// Some compatible servers say "stop" for an answer with tool calls.
		{"tool calls with stop", strings.Replace(toolCallsAnswer, `"finish_reason": "tool_calls"`, `"finish_reason": "stop"`, 1), model.StopToolCalls},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, 200, "application/json", tc.answer)
			m := newModel(t, openai.Config{BaseURL: srv.URL, Model: "m"})
			res, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.User, Content: "x"}}})
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != tc.want {
				t.Errorf("stop reason %q, want %q", res.StopReason, tc.want)
			}
		})
	}
}

// Arguments that are not JSON survive a round trip: the conversation can
// be stored, and they go back to the server exactly as the model wrote
// them.
func TestInvalidArgumentsRoundTrip(t *testing.T) {
	bad := `{"command": "ls` // cut off
	answer := strings.Replace(toolCallsAnswer, `"{\"command\":\"go test ./...\"}"`, `"{\"command\": \"ls"`, 1)
	srv := newServer(t, 200, "application/json", answer)
	m := newModel(t, openai.Config{BaseURL: srv.URL, Model: "m"})
	req := model.Request{Messages: []model.Message{{Role: model.User, Content: "x"}}}
	res, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	args := res.Message.ToolCalls[0].Arguments
	var s string
	if err := json.Unmarshal(args, &s); err != nil || s != bad {
		t.Fatalf("arguments %s, want the text as a JSON string", args)
	}
	stored, err := json.Marshal(res.Message)
	if err != nil {
		t.Fatalf("the message does not serialise: %v", err)
	}
	var back model.Message
	if err := json.Unmarshal(stored, &back); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, back)
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := srv.last.Load().body["messages"].([]any)
	sent := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"]
	if sent != bad {
		t.Errorf("arguments sent back as %q, want %q", sent, bad)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		retryable   bool
		message     string
	}{
		{"rate limit", 429, "application/json",
			`{"error": {"message": "Rate limit reached for gpt-4.1", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}`,
			true, "Rate limit reached for gpt-4.1 (rate_limit_exceeded)"},
		{"quota", 429, "application/json",
			`{"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}`,
			false, "You exceeded your current quota"},
		{"bad request", 400, "application/json",
			`{"error": {"message": "Invalid 'messages[2].tool_call_id'", "type": "invalid_request_error", "param": "messages", "code": null}}`,
			false, "Invalid 'messages[2].tool_call_id'"},
		{"unauthorized", 401, "application/json",
			`{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`,
			false, "Incorrect API key provided"},
		{"server error", 500, "application/json",
			`{"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}`,
			true, "The server had an error"},
		{"proxy page", 502, "text/html", `<html><body>Bad Gateway</body></html>`, true, "Bad Gateway"},
		{"answer not JSON", 200, "text/plain", `hello`, false, ""},
		{"no choices", 200, "application/json", `{"id": "x", "object": "chat.completion", "choices": []}`, false, "no choices"},
		{"overloaded", 503, "application/json", `{"error": "model is loading"}`, true, "model is loading"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.status, tc.contentType, tc.body)
			m := newModel(t, openai.Config{BaseURL: srv.URL, Model: "m"})
			_, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.User, Content: "x"}}})
			var me *model.Error
			if !errors.As(err, &me) {
				t.Fatalf("err = %T %v, want *model.Error", err, err)
			}
			if me.Provider != "openai" || me.Status != tc.status || me.Retryable != tc.retryable {
				t.Errorf("got %+v, want status %d retryable %v", me, tc.status, tc.retryable)
			}
			if !strings.Contains(me.Message, tc.message) {
				t.Errorf("message %q does not say %q", me.Message, tc.message)
			}
			// One request: the SDK's own retries are off.
			if n := srv.requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestTransportErrorAndCancel(t *testing.T) {
	srv := newServer(t, 200, "application/json", contentAnswer("x", "stop"))
	url := srv.URL
	srv.Close()
	m := newModel(t, openai.Config{BaseURL: url, Model: "m"})
	req := model.Request{Messages: []model.Message{{Role: model.User, Content: "x"}}}
	_, err := m.Complete(context.Background(), req)
	var me *model.Error
	if !errors.As(err, &me) || me.Status != 0 || !me.Retryable {
		t.Fatalf("connection refused: %T %v", err, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Complete(ctx, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	srv := newServer(t, 200, "application/json", contentAnswer("x", "stop"))
	if _, err := openai.New(openai.Config{BaseURL: srv.URL}); err == nil {
		t.Error("New without a model name succeeded")
	}
	m := newModel(t, openai.Config{BaseURL: srv.URL, Model: "m"})
	for name, req := range map[string]model.Request{
		"unknown role":      {Messages: []model.Message{{Role: "robot", Content: "x"}}},
		"result without id": {Messages: []model.Message{{Role: model.ToolResult, Content: "x"}}},
		"schema not object": {Messages: []model.Message{{Role: model.User}}, Tools: []model.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
	} {
		if _, err := m.Complete(context.Background(), req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := srv.requests.Load(); n != 0 {
		t.Errorf("%d requests sent for bad input", n)
	}
}
