package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/model/scripted"
)

const demo = `{"turns": [
  {"content": "Let me look.",
   "toolCalls": [{"id": "call_1", "name": "terminal", "arguments": {"command": "ls"}}]},
  {"expectToolResult": "go.mod",
   "toolCalls": [{"name": "terminal", "arguments": {"command": "go test ./..."}},
                 {"name": "read_file"}]},
  {"expectToolResult": "ok", "content": "All tests pass."}
]}`

func mustParse(t *testing.T, s string) *scripted.Model {
	t.Helper()
	m, err := scripted.Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

// The conversation is played the way the tool loop plays it: each reply is
// appended, then a result for each of its tool calls.
func TestReplaysTurnsInOrder(t *testing.T) {
	m := mustParse(t, demo)
	if m.Len() != 3 || m.Position() != 0 {
		t.Fatalf("Len %d Position %d, want 3 and 0", m.Len(), m.Position())
	}
	ctx := context.Background()
	req := model.Request{Messages: []model.Message{{Role: model.User, Content: "fix the build"}}}

	r1, err := m.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r1.StopReason != model.StopToolCalls || r1.Message.Role != model.Assistant || r1.Message.Content != "Let me look." {
		t.Fatalf("turn 1: %+v", r1)
	}
	if len(r1.Message.ToolCalls) != 1 || r1.Message.ToolCalls[0].ID != "call_1" || r1.Message.ToolCalls[0].Name != "terminal" {
		t.Fatalf("turn 1 calls: %+v", r1.Message.ToolCalls)
	}
	var args struct{ Command string }
	if err := json.Unmarshal(r1.Message.ToolCalls[0].Arguments, &args); err != nil || args.Command != "ls" {
		t.Fatalf("turn 1 arguments %s: %v", r1.Message.ToolCalls[0].Arguments, err)
	}
	if m.Position() != 1 {
		t.Fatalf("Position after turn 1 = %d", m.Position())
	}

	req.Messages = append(req.Messages, r1.Message,
		model.Message{Role: model.ToolResult, ToolCallID: "call_1", ToolName: "terminal", Content: "README.md\ngo.mod\n"})
	r2, err := m.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	calls := r2.Message.ToolCalls
	if r2.StopReason != model.StopToolCalls || len(calls) != 2 {
		t.Fatalf("turn 2: %+v", r2)
	}
	// Ids the script leaves out are made up from turn and position;
	// absent arguments are an empty object.
	if calls[0].ID != "call_2_1" || calls[1].ID != "call_2_2" || string(calls[1].Arguments) != "{}" {
		t.Fatalf("turn 2 defaults: %+v", calls)
	}

	req.Messages = append(req.Messages, r2.Message,
		model.Message{Role: model.ToolResult, ToolCallID: "call_2_1", Content: "ok  	example	0.1s"},
		model.Message{Role: model.ToolResult, ToolCallID: "call_2_2", Content: "package main"})
	// The last tool result is read_file's, which does not say "ok".
	if _, err := m.Complete(ctx, req); !errors.Is(err, scripted.ErrUnexpected) {
		t.Fatalf("turn 3 with the wrong last result: err = %v, want ErrUnexpected", err)
	}
	req.Messages[len(req.Messages)-1].Content = "ok, read"
	r3, err := m.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r3.StopReason != model.StopEnd || r3.Message.Content != "All tests pass." || r3.Message.ToolCalls != nil {
		t.Fatalf("turn 3: %+v", r3)
	}
	if m.Position() != 3 {
		t.Fatalf("Position after turn 3 = %d", m.Position())
	}

	req.Messages = append(req.Messages, r3.Message, model.Message{Role: model.User, Content: "more?"})
	_, err = m.Complete(ctx, req)
	if !errors.Is(err, scripted.ErrExhausted) || !strings.Contains(err.Error(), "script") || !strings.Contains(err.Error(), "3 turns") {
		t.Fatalf("past the end: %v", err)
	}
}

// A fresh Model given a stored conversation answers with the turn after
// it: what a resumed run after a restart sees.
func TestResumesAtConversationLength(t *testing.T) {
	stored := []model.Message{
		{Role: model.User, Content: "go"},
		{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "call_1", Name: "terminal", Arguments: json.RawMessage(`{"command":"ls"}`)}}},
		{Role: model.ToolResult, ToolCallID: "call_1", Content: "go.mod"},
	}
	// Round trip through JSON, like a persisted Ctx.
	data, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	var resumed []model.Message
	if err := json.Unmarshal(data, &resumed); err != nil {
		t.Fatal(err)
	}
	m := mustParse(t, demo)
	r, err := m.Complete(context.Background(), model.Request{Messages: resumed})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Message.ToolCalls) != 2 || r.Message.ToolCalls[0].ID != "call_2_1" {
		t.Fatalf("resumed at the wrong turn: %+v", r.Message)
	}
	if m.Position() != 2 {
		t.Fatalf("Position = %d, want 2", m.Position())
	}
}

func TestExpectToolResultWithoutToolResult(t *testing.T) {
	m := mustParse(t, `{"turns":[{"expectToolResult":"x","content":"hi"}]}`)
	_, err := m.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.User, Content: "x"}}})
	if !errors.Is(err, scripted.ErrUnexpected) || !strings.Contains(err.Error(), "no tool result") || !strings.Contains(err.Error(), "turn 1") {
		t.Fatalf("err = %v", err)
	}
	if m.Position() != 0 {
		t.Fatalf("a failed Complete moved Position to %d", m.Position())
	}
}

// The reply is a copy: a caller that changes it does not change the
// script.
func TestRepliesAreCopies(t *testing.T) {
	m := mustParse(t, demo)
	req := model.Request{Messages: []model.Message{{Role: model.User}}}
	r, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	r.Message.ToolCalls[0].Arguments[2] = 'X'
	r.Message.ToolCalls[0].Name = "changed"
	r2, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Message.ToolCalls[0].Name != "terminal" || string(r2.Message.ToolCalls[0].Arguments) != `{"command": "ls"}` {
		t.Fatalf("the script changed: %+v %s", r2.Message.ToolCalls[0], r2.Message.ToolCalls[0].Arguments)
	}
}

func TestCanceledContext(t *testing.T) {
	m := mustParse(t, demo)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Complete(ctx, model.Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestConcurrentConversations(t *testing.T) {
	m := mustParse(t, demo)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 32 {
		wg.Go(func() {
			msgs := []model.Message{{Role: model.User}}
			for range 2 {
				r, err := m.Complete(context.Background(), model.Request{Messages: msgs})
				if err != nil {
					errs <- err
					return
				}
				msgs = append(msgs, r.Message)
				for _, c := range r.Message.ToolCalls {
					msgs = append(msgs, model.Message{Role: model.ToolResult, ToolCallID: c.ID, Content: "go.mod"})
				}
				_ = m.Position()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m.Position() != 2 {
		t.Fatalf("Position = %d, want 2", m.Position())
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"syntax", "{\"turns\": [\n  {\"content\": \"a\"},\n  {\"content\": }\n]}", []string{"line 3"}},
		{"not an object", `[]`, []string{"JSON object"}},
		{"no turns", `{}`, []string{`no "turns"`}},
		{"unknown top field", "{\n\"turn\": []}", []string{"line 2", `unknown field "turn"`}},
		{"turns not an array", `{"turns": {}}`, []string{"must be an array"}},
		{"typo in a turn", "{\"turns\": [\n {\"content\": \"a\"},\n {\"tool_calls\": []}]}", []string{"turn 2", "line 3", "tool_calls"}},
		{"wrong type", "{\"turns\": [\n {\"content\": 7}]}", []string{"turn 1", "line 2"}},
		{"call without name", `{"turns": [{}, {}, {"toolCalls": [{"id": "a"}]}]}`, []string{"turn 3", "no name"}},
		{"duplicate ids", `{"turns": [{"toolCalls": [{"id": "a", "name": "x"}, {"id": "a", "name": "y"}]}]}`, []string{"turn 1", `"a" appears twice`}},
		{"string arguments", `{"turns": [{"toolCalls": [{"name": "x", "arguments": "{}"}]}]}`, []string{"turn 1", "JSON object"}},
		{"trailing data", `{"turns": []} {}`, []string{"line 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scripted.Parse([]byte(tc.script))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "scripted: script: ") {
				t.Errorf("error %q does not name the script", err)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "demo.json")
	if err := os.WriteFile(path, []byte(demo), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := scripted.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != path || m.Len() != 3 {
		t.Fatalf("Name %q Len %d", m.Name(), m.Len())
	}
	// Errors past the end name the file.
	msgs := []model.Message{{Role: model.Assistant}, {Role: model.Assistant}, {Role: model.Assistant}}
	if _, err := m.Complete(context.Background(), model.Request{Messages: msgs}); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want it to name %s", err, path)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\"turns\": [\n{\"toolCalls\": [{}]}]}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := scripted.Load(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "turn 1 (line 2)") {
		t.Fatalf("err = %v", err)
	}
	if _, err := scripted.Load(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestNewChecksAndCopies(t *testing.T) {
	s := scripted.Script{Turns: []scripted.Turn{{ToolCalls: []model.ToolCall{{Name: "terminal"}}}}}
	m, err := scripted.New("inline", s)
	if err != nil {
		t.Fatal(err)
	}
	s.Turns[0].ToolCalls[0].Name = "changed"
	r, err := m.Complete(context.Background(), model.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Message.ToolCalls[0]; c.Name != "terminal" || c.ID != "call_1_1" || string(c.Arguments) != "{}" {
		t.Fatalf("call = %+v", c)
	}
	if _, err := scripted.New("inline", scripted.Script{Turns: []scripted.Turn{{ToolCalls: []model.ToolCall{{}}}}}); err == nil || !strings.Contains(err.Error(), "inline: turn 1") {
		t.Fatalf("err = %v", err)
	}
}
