// Package scripted is a model.Model that replays a script of assistant
// turns instead of calling a language model. Tests use it to drive agents
// through a known conversation, and `brabo demo` uses it so the demo needs
// no API key (DESIGN §7.6).
//
// # Script format
//
// A script is a JSON object with one field, "turns", an array of assistant
// turns in order:
//
//	{"turns": [
//	  {"content": "Let me look around.",
//	   "toolCalls": [{"id": "call_1", "name": "terminal", "arguments": {"command": "ls"}}]},
//	  {"expectToolResult": "go.mod",
//	   "toolCalls": [{"id": "call_2", "name": "terminal", "arguments": {"command": "go test ./..."}}]},
//	  {"expectToolResult": "ok", "content": "All tests pass."}
//	]}
//
// Fields of a turn:
//
//   - "content": the text of the assistant message (may be empty).
//   - "toolCalls": the calls the assistant asks for, each with "name"
//     (required), "id" (optional: when absent it is "call_<turn>_<n>",
//     both counted from 1, so ids stay unique and stable across replays)
//     and "arguments" (optional JSON object; {} when absent).
//   - "expectToolResult": optional. Before answering with this turn,
//     Complete checks that the last tool result of the conversation
//     contains this substring, and fails otherwise. Tests use it to check
//     that the real output of a tool (not, say, the word "pending") reached
//     the model.
//
// Unknown fields are an error, so a typo such as "tool_calls" does not
// silently produce a turn without calls. Parse and Load name the line of
// a syntax error and the turn (counted from 1) of a bad turn.
//
// # Which turn is next
//
// Complete does not keep a cursor: it answers with turn n+1, where n is
// the number of assistant messages already in the request. So a
// conversation that was suspended, stored and resumed in another process
// (DESIGN §7.2) picks up at the right turn with a fresh Model, and one
// Model may serve several independent conversations, each replaying the
// script from its start. The reply is an assistant message whose stop
// reason is model.StopToolCalls when the turn has tool calls and
// model.StopEnd otherwise. Asking past the last turn is an error naming
// the script and its number of turns.
//
// A Model is safe for concurrent use.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/brabo-dev/brabo/model"
)

// Errors Complete wraps, for errors.Is.
var (
	// ErrExhausted: the conversation already has an assistant message for
	// every turn of the script.
	ErrExhausted = errors.New("script exhausted")
	// ErrUnexpected: the conversation is not what the script expects (an
	// expectToolResult did not match).
	ErrUnexpected = errors.New("conversation does not match the script")
)

// Script is the parsed form of a script file.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Turn is one assistant turn of a script.
type Turn struct {
	Content   string           `json:"content,omitempty"`
	ToolCalls []model.ToolCall `json:"toolCalls,omitempty"`
	// ExpectToolResult, when not empty, must be a substring of the last
	// tool result in the conversation when this turn is asked for.
	ExpectToolResult string `json:"expectToolResult,omitempty"`
}

// Model replays a script. Build one with New, Parse or Load.
type Model struct {
	name  string
	turns []Turn

	mu       sync.Mutex
	position int
}

var _ model.Model = (*Model)(nil)

// New returns a Model replaying s; name appears in its errors (a file
// name, or a test's name). The turns are checked as Parse checks them and
// copied, so s may be changed afterwards.
func New(name string, s Script) (*Model, error) {
	turns := make([]Turn, len(s.Turns))
	for i, t := range s.Turns {
		t, err := normalise(i, t)
		if err != nil {
			return nil, fmt.Errorf("scripted: %s: turn %d: %w", name, i+1, err)
		}
		turns[i] = t
	}
	return &Model{name: name, turns: turns}, nil
}

// Load reads and parses the script file at path; errors and the Model's
// Name carry the path.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	return parse(path, data)
}

// Parse parses a script held in memory; its name is "script".
func Parse(data []byte) (*Model, error) {
	return parse("script", data)
}

// ParseNamed is Parse with the name errors and Name use.
func ParseNamed(name string, data []byte) (*Model, error) {
	return parse(name, data)
}

func parse(name string, data []byte) (*Model, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("scripted: %s: "+format, append([]any{name}, args...)...)
	}
	// First pass: the syntax of the whole document, so a syntax error is
	// reported with its line whatever it is in.
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			return nil, fail("line %d, column %d: %v", line, col, err)
		}
		return nil, fail("%v", err)
	}

	// Second pass: walk the top-level object by tokens so each turn is
	// decoded on its own, strictly, knowing where it starts.
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, fail(`line 1: a script is a JSON object {"turns": [...]}`)
	}
	var turns []Turn
	sawTurns := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail("%v", err)
		}
		key, _ := tok.(string)
		if key != "turns" {
			line, _ := lineCol(data, dec.InputOffset())
			return nil, fail("line %d: unknown field %q (a script has only \"turns\")", line, key)
		}
		if sawTurns {
			line, _ := lineCol(data, dec.InputOffset())
			return nil, fail(`line %d: "turns" appears twice`, line)
		}
		sawTurns = true
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			line, _ := lineCol(data, dec.InputOffset())
			return nil, fail(`line %d: "turns" must be an array`, line)
		}
		for dec.More() {
			n := len(turns) + 1
			line, _ := lineCol(data, skipSpace(data, dec.InputOffset()))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, fail("turn %d (line %d): %v", n, line, err)
			}
			var t Turn
			td := json.NewDecoder(bytes.NewReader(raw))
			td.DisallowUnknownFields()
			if err := td.Decode(&t); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					l, _ := lineCol(data, skipSpace(data, dec.InputOffset()-int64(len(raw)))+te.Offset)
					line = l
				}
				return nil, fail("turn %d (line %d): %v", n, line, err)
			}
			t, err := normalise(n-1, t)
			if err != nil {
				return nil, fail("turn %d (line %d): %v", n, line, err)
			}
			turns = append(turns, t)
		}
		if _, err := dec.Token(); err != nil { // ]
			return nil, fail("%v", err)
		}
	}
	if !sawTurns {
		return nil, fail(`no "turns"`)
	}
	if _, err := dec.Token(); err != nil { // }
		return nil, fail("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail("data after the script object")
	}
	return &Model{name: name, turns: turns}, nil
}

// normalise checks turn i (counted from 0) and fills in defaults: call ids
// and empty arguments. It copies what it keeps.
func normalise(i int, t Turn) (Turn, error) {
	calls := make([]model.ToolCall, len(t.ToolCalls))
	seen := map[string]bool{}
	for j, c := range t.ToolCalls {
		if c.Name == "" {
			return t, fmt.Errorf("tool call %d has no name", j+1)
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", i+1, j+1)
		}
		if seen[c.ID] {
			return t, fmt.Errorf("tool call id %q appears twice", c.ID)
		}
		seen[c.ID] = true
		args := bytes.TrimSpace(c.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		if args[0] != '{' {
			return t, fmt.Errorf("tool call %d (%s): arguments must be a JSON object, not %s", j+1, c.Name, args)
		}
		c.Arguments = bytes.Clone(args)
		calls[j] = c
	}
	if len(calls) == 0 {
		calls = nil
	}
	t.ToolCalls = calls
	return t, nil
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// skipSpace returns the offset of the first byte at or after off that is
// neither white space nor a comma: where the next value starts.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

// Name is the name the Model's errors carry: the file of Load, "script"
// for Parse.
func (m *Model) Name() string { return m.name }

// Len is the number of turns in the script.
func (m *Model) Len() int { return len(m.turns) }

// Position reports how many turns of the script have been consumed: one
// more than the furthest turn Complete has answered with (0 before any).
// As turns are picked by the conversation's length, a Model serving a
// resumed conversation starts at the turn it resumes at.
func (m *Model) Position() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.position
}

// Complete answers with the turn after the assistant messages already in
// req (see the package documentation).
func (m *Model) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := 0
	for _, msg := range req.Messages {
		if msg.Role == model.Assistant {
			n++
		}
	}
	if n >= len(m.turns) {
		return nil, fmt.Errorf("scripted: %s: %w: the script has %d turns and the conversation already has %d assistant messages",
			m.name, ErrExhausted, len(m.turns), n)
	}
	t := m.turns[n]
	if t.ExpectToolResult != "" {
		last, ok := lastToolResult(req.Messages)
		switch {
		case !ok:
			return nil, fmt.Errorf("scripted: %s: turn %d: %w: it expects a tool result containing %q, and the conversation has no tool result",
				m.name, n+1, ErrUnexpected, t.ExpectToolResult)
		case !strings.Contains(last.Content, t.ExpectToolResult):
			return nil, fmt.Errorf("scripted: %s: turn %d: %w: it expects the last tool result (%s, call %s) to contain %q; it is %q",
				m.name, n+1, ErrUnexpected, last.ToolName, last.ToolCallID, t.ExpectToolResult, abbreviate(last.Content, 300))
		}
	}

	msg := model.Message{Role: model.Assistant, Content: t.Content}
	for _, c := range t.ToolCalls {
		c.Arguments = bytes.Clone(c.Arguments)
		msg.ToolCalls = append(msg.ToolCalls, c)
	}
	stop := model.StopEnd
	if len(msg.ToolCalls) > 0 {
		stop = model.StopToolCalls
	}

	m.mu.Lock()
	m.position = max(m.position, n+1)
	m.mu.Unlock()
	return &model.Response{Message: msg, StopReason: stop}, nil
}

func lastToolResult(msgs []model.Message) (model.Message, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.ToolResult {
			return msgs[i], true
		}
	}
	return model.Message{}, false
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
