package toolloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// step is one answer of the fake model to one request.
type step func(req model.Request) (*model.Response, error)

// fakeModel answers requests with its steps in order and records every
// request as it was sent (a JSON copy, so later edits cannot hide).
type fakeModel struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	reqs  []model.Request
}

func (m *fakeModel) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	raw, err := json.Marshal(req)
	if err != nil {
		m.t.Errorf("the request does not marshal: %v", err)
	}
	var cp model.Request
	json.Unmarshal(raw, &cp)
	m.reqs = append(m.reqs, cp)
	if len(m.steps) == 0 {
		m.t.Errorf("the model was called %d times, more than scripted", len(m.reqs))
		return nil, &model.Error{Provider: "fake", Message: "script exhausted"}
	}
	s := m.steps[0]
	m.steps = m.steps[1:]
	return s(req)
}

func (m *fakeModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reqs)
}

func (m *fakeModel) last() model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reqs[len(m.reqs)-1]
}

// call is a model turn asking for tool calls, given as name, arguments
// pairs; ids are c1, c2… in order of the whole script.
var callSeq int

func calls(pairs ...string) step {
	var tcs []model.ToolCall
	for i := 0; i < len(pairs); i += 2 {
		callSeq++
		tcs = append(tcs, model.ToolCall{ID: fmt.Sprintf("c%d", callSeq), Name: pairs[i], Arguments: json.RawMessage(pairs[i+1])})
	}
	return func(model.Request) (*model.Response, error) {
		return &model.Response{Message: model.Message{Role: model.Assistant, ToolCalls: tcs}, StopReason: model.StopToolCalls}, nil
	}
}

func final(text string) step {
	return func(model.Request) (*model.Response, error) {
		return &model.Response{Message: model.Message{Role: model.Assistant, Content: text}, StopReason: model.StopEnd}, nil
	}
}

func failing(err error) step {
	return func(model.Request) (*model.Response, error) { return nil, err }
}

func terminal(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

// fakeProposer decides by the command's first word: "ok" executes with
// the rest as output, "ask" is pending, "no" is denied, "bad" fails, "odd"
// comes back approved (a status Propose never answers).
type fakeProposer struct {
	mu       sync.Mutex
	n        int
	proposed []string // commands, in order
}

func (p *fakeProposer) Propose(ctx context.Context, req pipeline.ProposeRequest) (*brabo.ProposedAction, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	cmd := req.Payload.Command
	if req.Type != brabo.Terminal {
		cmd = string(req.Type)
	}
	p.proposed = append(p.proposed, cmd)
	a := &brabo.ProposedAction{ID: fmt.Sprintf("act_%d", p.n), Type: req.Type, Payload: req.Payload}
	verb, rest, _ := strings.Cut(cmd, " ")
	switch verb {
	case "ok":
		a.Status, a.Result = brabo.StatusExecuted, &brabo.Result{Output: rest + "\n"}
	case "ask":
		a.Status, a.Reason = brabo.StatusPending, "no rule matched"
	case "no":
		a.Status, a.Reason = brabo.StatusDenied, "permissions.json deny: Terminal(no)"
	case "bad":
		a.Status, a.Result = brabo.StatusFailed, &brabo.Result{ExitCode: -1, Error: "boom: " + rest}
	case "odd":
		// A status the pipeline never answers a proposal with.
		a.Status = brabo.StatusApproved
	case "infra":
		return nil, fmt.Errorf("database is down")
	case "invalid":
		return nil, brabo.Errorf(brabo.CodeInvalidAction, "a terminal action needs a command")
	default:
		a.Status, a.Result = brabo.StatusExecuted, &brabo.Result{ExitCode: 0, Output: cmd}
	}
	return a, nil
}

func (p *fakeProposer) commands() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.proposed...)
}

// readTool is a direct tool that echoes its "path" argument.
func readTool() toolloop.Tool {
	return toolloop.Tool{
		Spec: model.Tool{Name: "read_file", Description: "read", Parameters: json.RawMessage(`{"type":"object"}`)},
		Kind: toolloop.Direct,
		Direct: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a struct{ Path string }
			if err := json.Unmarshal(args, &a); err != nil {
				return "", err
			}
			if a.Path == "missing" {
				return "", fmt.Errorf("no such file: %s", a.Path)
			}
			return "contents of " + a.Path, nil
		},
	}
}

func newLoop(t *testing.T, steps ...step) (*toolloop.Loop, *fakeModel, *fakeProposer) {
	m := &fakeModel{t: t, steps: steps}
	p := &fakeProposer{}
	l := &toolloop.Loop{Model: m, Proposer: p, ProjectID: "prj_1", System: "you are a dev agent",
		Tools: append(toolloop.StandardTools(), readTool()), MaxIterations: 8, RetryBackoff: 1}
	return l, m, p
}

// toolResults returns the tool-result messages of a request.
func toolResults(req model.Request) []model.Message {
	var out []model.Message
	for _, m := range req.Messages {
		if m.Role == model.ToolResult {
			out = append(out, m)
		}
	}
	return out
}

// noPending fails when any message the model was sent says "pending".
func noPending(t *testing.T, msgs []model.Message) {
	t.Helper()
	for _, m := range msgs {
		if m.Role == model.ToolResult && strings.Contains(strings.ToLower(m.Content), "pending") {
			t.Errorf("a tool result tells the model %q", m.Content)
		}
	}
}
