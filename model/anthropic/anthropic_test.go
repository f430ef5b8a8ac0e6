package anthropic_test

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
	"time"

	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/model/anthropic"
)

// server is a Messages API endpoint that records each request and answers
// with a canned (status, body).
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
		w.Header().Set("request-id", "req_011CTest")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func newModel(t *testing.T, cfg anthropic.Config) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A real-shaped answer: text, then two tool_use blocks.
const toolUseAnswer = `{
  "id": "msg_01Aq9w938a90dw8q",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5-20250929",
  "content": [
    {"type": "text", "text": "I'll run the tests."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "terminal",
     "input": {"command": "go test ./..."}},
    {"type": "tool_use", "id": "toolu_01B", "name": "read_file", "input": {"path": "go.mod"}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 2095, "output_tokens": 503,
            "cache_creation_input_tokens": 100, "cache_read_input_tokens": 5,
            "service_tier": "standard"}
}`

func textAnswer(stop string, texts ...string) string {
	var blocks []string
	for _, t := range texts {
		b, _ := json.Marshal(t)
		blocks = append(blocks, `{"type": "text", "text": `+string(b)+`}`)
	}
	return `{"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
  "content": [` + strings.Join(blocks, ",") + `],
  "stop_reason": "` + stop + `", "stop_sequence": null,
  "usage": {"input_tokens": 12, "output_tokens": 6}}`
}

func conversation() model.Request {
	return model.Request{
		System: "You are a careful engineer.",
		Messages: []model.Message{
			{Role: model.User, Content: "Fix the build."},
			{Role: model.Assistant, Content: "Looking.", ToolCalls: []model.ToolCall{
				{ID: "toolu_1", Name: "terminal", Arguments: json.RawMessage(`{"command":"ls"}`)},
				{ID: "toolu_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
			}},
			{Role: model.ToolResult, ToolCallID: "toolu_1", ToolName: "terminal", Content: "go.mod\nmain.go"},
			{Role: model.ToolResult, ToolCallID: "toolu_2", ToolName: "read_file", Content: "denied: not now", IsError: true},
			{Role: model.User, Content: "Also check vet."},
			{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "toolu_3", Name: "terminal", Arguments: json.RawMessage(`{"command":"go vet ./..."}`)}}},
			{Role: model.ToolResult, ToolCallID: "toolu_3", Content: ""},
		},
		Tools: []model.Tool{{
			Name:        "terminal",
			Description: "Run a shell command.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","maxLength":10000}},"required":["command"],"additionalProperties":false}`),
		}, {
			Name:       "read_file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		}},
	}
}

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

func TestRequestWireFormatAndToolUseAnswer(t *testing.T) {
	srv := newServer(t, 200, "application/json", toolUseAnswer)
	m := newModel(t, anthropic.Config{BaseURL: srv.URL, APIKey: "sk-ant-test", Model: "claude-sonnet-4-5"})

	res, err := m.Complete(context.Background(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.last.Load()
	if rec.method != "POST" || rec.path != "/v1/messages" {
		t.Errorf("request %s %s", rec.method, rec.path)
	}
	// The SDK sends its API version, and for that version the key as a
	// bearer token.
	if v := rec.header.Get("anthropic-version"); v != "2026-10-21" {
		t.Errorf("anthropic-version = %q, want the SDK's 2026-10-21", v)
	}
	if got, key := rec.header.Get("Authorization"), rec.header.Get("X-Api-Key"); got != "Bearer sk-ant-test" || key != "" {
		t.Errorf("credentials: Authorization %q, X-Api-Key %q; want only the bearer token", got, key)
	}
	if rec.body["model"] != "claude-sonnet-4-5" {
		t.Errorf("model = %v", rec.body["model"])
	}
	if rec.body["max_tokens"] != float64(anthropic.DefaultMaxTokens) {
		t.Errorf("max_tokens = %v, want the default %d", rec.body["max_tokens"], anthropic.DefaultMaxTokens)
	}
	if _, ok := rec.body["stream"]; ok {
		t.Errorf("stream sent: %v", rec.body["stream"])
	}
	sameJSON(t, "system", rec.body["system"], `[{"type": "text", "text": "You are a careful engineer."}]`)
	// The two results and the user's text are one user message, results
	// first; an empty result has no content.
	sameJSON(t, "messages", rec.body["messages"], `[
	  {"role": "user", "content": [{"type": "text", "text": "Fix the build."}]},
	  {"role": "assistant", "content": [
	    {"type": "text", "text": "Looking."},
	    {"type": "tool_use", "id": "toolu_1", "name": "terminal", "input": {"command": "ls"}},
	    {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "go.mod"}}]},
	  {"role": "user", "content": [
	    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "go.mod\nmain.go"}]},
	    {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [{"type": "text", "text": "denied: not now"}]},
	    {"type": "text", "text": "Also check vet."}]},
	  {"role": "assistant", "content": [
	    {"type": "tool_use", "id": "toolu_3", "name": "terminal", "input": {"command": "go vet ./..."}}]},
	  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3"}]}
	]`)
	sameJSON(t, "tools", rec.body["tools"], `[
	  {"name": "terminal", "description": "Run a shell command.",
	   "input_schema": {"type": "object", "properties": {"command": {"type": "string", "maxLength": 10000}},
	                    "required": ["command"], "additionalProperties": false}},
	  {"name": "read_file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
	]`)

	want := &model.Response{
		Message: model.Message{Role: model.Assistant, Content: "I'll run the tests.", ToolCalls: []model.ToolCall{
			{ID: "toolu_01A09q90qw90lq917835lq9", Name: "terminal", Arguments: json.RawMessage(`{"command": "go test ./..."}`)},
			{ID: "toolu_01B", Name: "read_file", Arguments: json.RawMessage(`{"path": "go.mod"}`)},
		}},
		StopReason: model.StopToolCalls,
		Usage:      model.Usage{InputTokens: 2095 + 100 + 5, OutputTokens: 503},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("response:\n got %s\nwant %s", asJSON(t, res), asJSON(t, want))
	}
}

func TestTextAnswerAndConfig(t *testing.T) {
	// The SDK's environment defaults are off: they would send the request
	// elsewhere, with someone else's key.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")

	srv := newServer(t, 200, "application/json", textAnswer("end_turn", "All tests pass.", "Done."))
	m := newModel(t, anthropic.Config{BaseURL: srv.URL, Model: "claude-haiku-4-5", MaxTokens: 1000})
	res, err := m.Complete(context.Background(), model.Request{
		Messages:  []model.Message{{Role: model.User, Content: "hi"}},
		MaxTokens: 200,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{
		Message:    model.Message{Role: model.Assistant, Content: "All tests pass.\nDone."},
		StopReason: model.StopEnd,
		Usage:      model.Usage{InputTokens: 12, OutputTokens: 6},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("response %s", asJSON(t, res))
	}
	rec := srv.last.Load()
	if h := rec.header.Get("Authorization") + rec.header.Get("X-Api-Key"); h != "" {
		t.Errorf("credentials sent without a key: %q", h)
	}
	// The request's bound wins over the configured one.
	if rec.body["max_tokens"] != float64(200) {
		t.Errorf("max_tokens = %v", rec.body["max_tokens"])
	}
	for _, k := range []string{"system", "tools"} {
		if _, ok := rec.body[k]; ok {
			t.Errorf("%s sent though empty: %s", k, rec.raw)
		}
	}
	sameJSON(t, "messages", rec.body["messages"], `[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]`)

	// Config.MaxTokens when the request says nothing.
	if _, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.User, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if got := srv.last.Load().body["max_tokens"]; got != float64(1000) {
		t.Errorf("max_tokens = %v, want the configured 1000", got)
	}
}

func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		stop string
		want model.StopReason
	}{
		{"end_turn", model.StopEnd},
		{"stop_sequence", model.StopEnd},
		{"max_tokens", model.StopMaxTokens},
		{"model_context_window_exceeded", model.StopMaxTokens},
		{"refusal", model.StopEnd},
	} {
		t.Run(tc.stop, func(t *testing.T) {
			srv := newServer(t, 200, "application/json", textAnswer(tc.stop, "x"))
			m := newModel(t, anthropic.Config{BaseURL: srv.URL, Model: "m"})
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
			`{"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}`,
			true, "per-minute rate limit (rate_limit_error)"},
		{"overloaded", 529, "application/json",
			`{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`,
			true, "Overloaded (overloaded_error)"},
		{"api error", 500, "application/json",
			`{"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}`,
			true, "Internal server error"},
		{"bad request", 400, "application/json",
			`{"type": "error", "error": {"type": "invalid_request_error", "message": "messages.2: tool_use ids were found without tool_result blocks immediately after"}}`,
			false, "immediately after (invalid_request_error)"},
		{"authentication", 401, "application/json",
			`{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}`,
			false, "invalid x-api-key"},
		{"proxy page", 502, "text/html", `<html><body>Bad Gateway</body></html>`, true, "Bad Gateway"},
		{"answer not JSON", 200, "text/plain", `hello`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.status, tc.contentType, tc.body)
			m := newModel(t, anthropic.Config{BaseURL: srv.URL, Model: "m"})
			_, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.User, Content: "x"}}})
			var me *model.Error
			if !errors.As(err, &me) {
				t.Fatalf("err = %T %v, want *model.Error", err, err)
			}
			if me.Provider != "anthropic" || me.Status != tc.status || me.Retryable != tc.retryable {
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

func TestTransportErrorTimeoutAndCancel(t *testing.T) {
	srv := newServer(t, 200, "application/json", textAnswer("end_turn", "x"))
	url := srv.URL
	srv.Close()
	m := newModel(t, anthropic.Config{BaseURL: url, Model: "m"})
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

	// A server that does not answer within RequestTimeout is a retryable
	// failure, not a hang.
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	m = newModel(t, anthropic.Config{BaseURL: slow.URL, Model: "m", RequestTimeout: 100 * time.Millisecond})
	start := time.Now()
	_, err = m.Complete(context.Background(), req)
	if !errors.As(err, &me) || !me.Retryable || time.Since(start) > 5*time.Second {
		t.Fatalf("slow server: %T %v after %v", err, err, time.Since(start))
	}
}

// A large max_tokens does not make the SDK refuse the request without
// streaming: the configured timeout bounds it instead.
func TestLargeMaxTokens(t *testing.T) {
	srv := newServer(t, 200, "application/json", textAnswer("end_turn", "x"))
	m := newModel(t, anthropic.Config{BaseURL: srv.URL, Model: "claude-opus-4-1", MaxTokens: 64000})
	if _, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.User, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if got := srv.last.Load().body["max_tokens"]; got != float64(64000) {
		t.Errorf("max_tokens = %v", got)
	}
}

func TestBadInput(t *testing.T) {
	srv := newServer(t, 200, "application/json", textAnswer("end_turn", "x"))
	if _, err := anthropic.New(anthropic.Config{BaseURL: srv.URL}); err == nil {
		t.Error("New without a model name succeeded")
	}
	m := newModel(t, anthropic.Config{BaseURL: srv.URL, Model: "m"})
	for name, req := range map[string]model.Request{
		"unknown role":      {Messages: []model.Message{{Role: "robot", Content: "x"}}},
		"result without id": {Messages: []model.Message{{Role: model.ToolResult, Content: "x"}}},
		"schema not object": {Messages: []model.Message{{Role: model.User, Content: "x"}}, Tools: []model.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
		"schema not type object": {Messages: []model.Message{{Role: model.User, Content: "x"}},
			Tools: []model.Tool{{Name: "t", Parameters: json.RawMessage(`{"type":"string"}`)}}},
	} {
		if _, err := m.Complete(context.Background(), req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := srv.requests.Load(); n != 0 {
		t.Errorf("%d requests sent for bad input", n)
	}
}
