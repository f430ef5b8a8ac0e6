package toolloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
)

func mustAwait(t *testing.T, out toolloop.Outcome) toolloop.AwaitingApproval {
	t.Helper()
	aw, ok := out.(toolloop.AwaitingApproval)
	if !ok {
		t.Fatalf("outcome = %#v, want AwaitingApproval", out)
	}
	return aw
}

func mustDone(t *testing.T, out toolloop.Outcome) toolloop.Done {
	t.Helper()
	d, ok := out.(toolloop.Done)
	if !ok {
		t.Fatalf("outcome = %#v, want Done", out)
	}
	return d
}

func mustHalt(t *testing.T, out toolloop.Outcome, origin toolloop.Origin) toolloop.Halted {
	t.Helper()
	h, ok := out.(toolloop.Halted)
	if !ok {
		t.Fatalf("outcome = %#v, want Halted", out)
	}
	if h.Origin != origin {
		t.Fatalf("halted with origin %q (%s), want %q", h.Origin, h.Why, origin)
	}
	return h
}

func TestDirectAndAutoResultsReachTheModel(t *testing.T) {
	l, m, _ := newLoop(t,
		calls("read_file", `{"path":"go.mod"}`, "terminal", terminal("ok hello world")),
		final("all done"))
	d := mustDone(t, toolloop.Run(context.Background(), l, "read go.mod"))
	if d.Final != "all done" || d.Ctx.Iterations != 2 {
		t.Fatalf("done = %q after %d iterations", d.Final, d.Ctx.Iterations)
	}
	first := m.reqs[0]
	if first.System != "you are a dev agent" || len(first.Tools) != 4 || first.Messages[0].Content != "read go.mod" {
		t.Fatalf("first request = %+v", first)
	}
	res := toolResults(m.last())
	if len(res) != 2 || res[0].Content != "contents of go.mod" || res[0].ToolCallID != "c1" {
		t.Fatalf("tool results = %+v", res)
	}
	if !strings.Contains(res[1].Content, "exit code: 0") || !strings.Contains(res[1].Content, "hello world") || res[1].IsError {
		t.Fatalf("terminal result = %+v", res[1])
	}
}

func TestUnknownToolAndBadArguments(t *testing.T) {
	l, m, p := newLoop(t,
		calls("rm_rf", `{}`,
			"terminal", `{"command": 5}`,
			"terminal", `{bad json`,
			"write_file", `{"path":"a.txt"}`,
			"terminal", `{"command":"ok fine","extra":1}`),
		final("gave up"))
	l.FailureBreaker = 10
	d := mustDone(t, toolloop.Run(context.Background(), l, "t"))
	res := toolResults(m.last())
	if len(res) != 5 {
		t.Fatalf("%d tool results, want 5: %+v", len(res), res)
	}
	for i, r := range res {
		if !r.IsError || !strings.HasPrefix(r.Content, "error:") {
			t.Errorf("result %d = %+v, want an error", i, r)
		}
	}
	if !strings.Contains(res[0].Content, `unknown tool "rm_rf"`) || !strings.Contains(res[0].Content, "terminal") {
		t.Errorf("unknown tool result = %q", res[0].Content)
	}
	if !strings.Contains(res[2].Content, "JSON object") || !strings.Contains(res[3].Content, "content is required") ||
		!strings.Contains(res[4].Content, "extra") {
		t.Errorf("bad argument results = %q", []string{res[2].Content, res[3].Content, res[4].Content})
	}
	if got := p.commands(); len(got) != 0 {
		t.Errorf("proposed %q from bad calls", got)
	}
	// The Ctx still marshals, invalid arguments and all.
	if _, err := json.Marshal(d.Ctx); err != nil {
		t.Fatalf("Ctx with bad arguments does not marshal: %v", err)
	}
	if d.Ctx.ConsecutiveFailures != 5 {
		t.Errorf("consecutive failures = %d, want 5", d.Ctx.ConsecutiveFailures)
	}
}

func TestPendingSuspendsAtOnce(t *testing.T) {
	l, m, p := newLoop(t,
		calls("terminal", terminal("ok listing")),
		calls("terminal", terminal("ask touch x"), "terminal", terminal("ok after")),
		final("done"))
	aw := mustAwait(t, toolloop.Run(context.Background(), l, "t"))
	if m.calls() != 2 || aw.Ctx.Iterations != 2 {
		t.Fatalf("suspended after %d model calls, %d iterations; want 2", m.calls(), aw.Ctx.Iterations)
	}
	if aw.ActionID != "act_2" || aw.ToolName != "terminal" || aw.ToolCallID == "" || aw.Ctx.AwaitingActionID != "act_2" ||
		aw.Ctx.PendingToolCallID != aw.ToolCallID {
		t.Fatalf("awaiting = %+v", aw)
	}
	if got := p.commands(); !reflect.DeepEqual(got, []string{"ok listing", "ask touch x"}) {
		t.Fatalf("proposed %q before the suspension: the call after the pending one ran early", got)
	}
	if len(aw.Ctx.Queued) != 1 || aw.Ctx.Queued[0].Name != "terminal" {
		t.Fatalf("queued = %+v", aw.Ctx.Queued)
	}
	noPending(t, aw.Ctx.Messages)
	last := aw.Ctx.Messages[len(aw.Ctx.Messages)-1]
	if last.Role != model.Assistant {
		t.Fatalf("the last message of a suspended Ctx is %+v; the pending result has no placeholder", last)
	}

	d := mustDone(t, toolloop.Resume(context.Background(), l, aw.Ctx, brabo.Settled{
		ActionID: "act_2", Status: brabo.StatusExecuted, Result: &brabo.Result{Output: "touched\n"}}))
	if d.Ctx.Iterations != 3 || m.calls() != 3 {
		t.Fatalf("iterations = %d, calls = %d, want 3", d.Ctx.Iterations, m.calls())
	}
	if got := p.commands(); !reflect.DeepEqual(got, []string{"ok listing", "ask touch x", "ok after"}) {
		t.Fatalf("proposed %q", got)
	}
	res := toolResults(m.last())
	if len(res) != 3 || res[1].ToolCallID != aw.ToolCallID || !strings.Contains(res[1].Content, "touched") ||
		!strings.Contains(res[2].Content, "after") {
		t.Fatalf("tool results after resume = %+v", res)
	}
	noPending(t, m.last().Messages)
	if d.Ctx.AwaitingActionID != "" || d.Ctx.PendingToolCallID != "" || d.Ctx.Queued != nil {
		t.Fatalf("resumed Ctx still awaits: %+v", d.Ctx)
	}
}

func TestQueuedCallCanSuspendAgain(t *testing.T) {
	l, m, p := newLoop(t,
		calls("terminal", terminal("ask one"), "terminal", terminal("ask two"), "read_file", `{"path":"x"}`),
		final("done"))
	aw := mustAwait(t, toolloop.Run(context.Background(), l, "t"))
	aw2 := mustAwait(t, toolloop.Resume(context.Background(), l, aw.Ctx,
		brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted, Result: &brabo.Result{}}))
	if aw2.ActionID == aw.ActionID || m.calls() != 1 || aw2.Ctx.Iterations != 1 {
		t.Fatalf("second suspension %+v after %d calls", aw2, m.calls())
	}
	if len(aw2.Ctx.Queued) != 1 || aw2.Ctx.Queued[0].Name != "read_file" {
		t.Fatalf("queued = %+v", aw2.Ctx.Queued)
	}
	// The first action's event delivered again is named a duplicate.
	h := mustHalt(t, toolloop.Resume(context.Background(), l, aw2.Ctx,
		brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted}), toolloop.OriginInfra)
	if !h.Refused || !strings.Contains(h.Why, "already resumed") {
		t.Fatalf("duplicate = %+v", h)
	}
	mustDone(t, toolloop.Resume(context.Background(), l, aw2.Ctx,
		brabo.Settled{ActionID: aw2.ActionID, Status: brabo.StatusDenied, Reason: "not now"}))
	res := toolResults(m.last())
	if len(res) != 3 || res[1].Content != "denied by a human: not now" || !res[1].IsError || res[2].Content != "contents of x" {
		t.Fatalf("results = %+v", res)
	}
	if len(p.commands()) != 2 {
		t.Fatalf("proposed %q", p.commands())
	}
}

func TestCtxRoundTripsThroughJSON(t *testing.T) {
	l, m, _ := newLoop(t,
		calls("read_file", "{ \"path\" :\n \"a\" }", "terminal", `{bad`, "terminal", "",
			"terminal", terminal("ask x"), "git_commit", `{"message":"m"}`),
		final("done"))
	aw := mustAwait(t, toolloop.Run(context.Background(), l, "task with ünïcode & <html>"))
	raw, err := json.Marshal(aw.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	var back toolloop.Ctx
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, aw.Ctx) {
		t.Fatalf("Ctx changed through JSON:\n%+v\n%+v", aw.Ctx, back)
	}
	raw2, _ := json.Marshal(back)
	if string(raw2) != string(raw) {
		t.Fatalf("second marshal differs:\n%s\n%s", raw, raw2)
	}
	if back.Version != toolloop.CtxVersion || back.AwaitingActionID != aw.ActionID {
		t.Fatalf("decoded Ctx = %+v", back)
	}
	d := mustDone(t, toolloop.Resume(context.Background(), l, back,
		brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted, Result: &brabo.Result{Output: "x ran"}}))
	res := toolResults(m.last())
	if len(res) != 5 || !strings.Contains(res[3].Content, "x ran") || res[4].ToolName != "git_commit" {
		t.Fatalf("results after resuming the decoded Ctx = %+v", res)
	}
	if d.Final != "done" {
		t.Fatalf("final = %q", d.Final)
	}
}

func TestResumeRefusals(t *testing.T) {
	l, m, _ := newLoop(t, calls("terminal", terminal("ask x")), final("done"))
	aw := mustAwait(t, toolloop.Run(context.Background(), l, "t"))

	h := mustHalt(t, toolloop.Resume(context.Background(), l, aw.Ctx,
		brabo.Settled{ActionID: "act_other", Status: brabo.StatusExecuted}), toolloop.OriginInfra)
	if !h.Refused || !strings.Contains(h.Why, "act_other") || !strings.Contains(h.Why, aw.ActionID) {
		t.Fatalf("wrong id = %+v", h)
	}
	if !reflect.DeepEqual(h.Ctx, aw.Ctx) {
		t.Fatal("a refused resume changed the Ctx")
	}

	h = mustHalt(t, toolloop.Resume(context.Background(), l, aw.Ctx,
		brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusApproved}), toolloop.OriginCode)
	if !h.Refused || !strings.Contains(h.Why, "not settled") {
		t.Fatalf("unsettled = %+v", h)
	}

	old := aw.Ctx
	old.Version = toolloop.CtxVersion + 1
	h = mustHalt(t, toolloop.Resume(context.Background(), l, old,
		brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted}), toolloop.OriginInfra)
	if !h.Refused || !strings.Contains(h.Why, "version 2") {
		t.Fatalf("version = %+v", h)
	}
	if m.calls() != 1 {
		t.Fatalf("refusals called the model: %d calls", m.calls())
	}

	settled := brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted, Result: &brabo.Result{Output: "ok"}}
	d := mustDone(t, toolloop.Resume(context.Background(), l, aw.Ctx, settled))
	// At-least-once delivery: the same event again on the resumed Ctx.
	h = mustHalt(t, toolloop.Resume(context.Background(), l, d.Ctx, settled), toolloop.OriginInfra)
	if !h.Refused || !strings.Contains(h.Why, "already resumed") || !strings.Contains(h.Why, aw.ActionID) {
		t.Fatalf("double resume = %+v", h)
	}
	if m.calls() != 2 {
		t.Fatalf("the double resume called the model: %d calls", m.calls())
	}
	// The zero Ctx is refused, not run.
	h = mustHalt(t, toolloop.Resume(context.Background(), l, toolloop.Ctx{}, settled), toolloop.OriginInfra)
	if !h.Refused {
		t.Fatalf("zero Ctx = %+v", h)
	}
}

func TestMaxIterations(t *testing.T) {
	var steps []step
	for range 10 {
		steps = append(steps, calls("read_file", `{"path":"a"}`))
	}
	l, m, _ := newLoop(t, steps...)
	l.MaxIterations = 3
	h := mustHalt(t, toolloop.Run(context.Background(), l, "t"), toolloop.OriginPolicy)
	if h.Why != toolloop.WhyMaxIterations || h.Ctx.Iterations != 3 || m.calls() != 3 {
		t.Fatalf("halted %q after %d iterations, %d calls", h.Why, h.Ctx.Iterations, m.calls())
	}
}

func TestSuspensionSpendsNoIteration(t *testing.T) {
	l, m, _ := newLoop(t,
		calls("terminal", terminal("ask 1")),
		calls("terminal", terminal("ask 2")),
		final("done"))
	l.MaxIterations = 3
	aw := mustAwait(t, toolloop.Run(context.Background(), l, "t"))
	aw = mustAwait(t, toolloop.Resume(context.Background(), l, aw.Ctx,
		brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted, Result: &brabo.Result{}}))
	if aw.Ctx.Iterations != 2 {
		t.Fatalf("iterations = %d after two model calls", aw.Ctx.Iterations)
	}
	d := mustDone(t, toolloop.Resume(context.Background(), l, aw.Ctx,
		brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted, Result: &brabo.Result{}}))
	if d.Ctx.Iterations != 3 || m.calls() != 3 {
		t.Fatalf("iterations = %d, calls = %d", d.Ctx.Iterations, m.calls())
	}
}

func TestModelErrors(t *testing.T) {
	retryable := &model.Error{Provider: "fake", Status: 429, Retryable: true, Message: "slow down"}
	t.Run("retryable then success", func(t *testing.T) {
		l, m, _ := newLoop(t, failing(retryable), failing(retryable), final("fine"))
		d := mustDone(t, toolloop.Run(context.Background(), l, "t"))
		if d.Final != "fine" || m.calls() != 3 || d.Ctx.Iterations != 1 {
			t.Fatalf("done %q after %d calls, %d iterations", d.Final, m.calls(), d.Ctx.Iterations)
		}
	})
	t.Run("retryable exhausted", func(t *testing.T) {
		l, m, _ := newLoop(t, failing(retryable), failing(retryable), failing(retryable))
		l.ModelRetries = 2
		h := mustHalt(t, toolloop.Run(context.Background(), l, "t"), toolloop.OriginModel)
		if m.calls() != 3 || !strings.Contains(h.Why, "slow down") || !strings.Contains(h.Why, "3 attempts") {
			t.Fatalf("halted %q after %d calls", h.Why, m.calls())
		}
	})
	t.Run("not retryable", func(t *testing.T) {
		l, m, _ := newLoop(t, failing(&model.Error{Provider: "fake", Status: 401, Message: "bad key"}), final("never"))
		h := mustHalt(t, toolloop.Run(context.Background(), l, "t"), toolloop.OriginModel)
		if m.calls() != 1 || !strings.Contains(h.Why, "bad key") {
			t.Fatalf("halted %q after %d calls", h.Why, m.calls())
		}
	})
	t.Run("plain error", func(t *testing.T) {
		l, m, _ := newLoop(t, failing(errors.New("decode failed")), final("never"))
		mustHalt(t, toolloop.Run(context.Background(), l, "t"), toolloop.OriginModel)
		if m.calls() != 1 {
			t.Fatalf("%d calls", m.calls())
		}
	})
	t.Run("cancelled while backing off", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		l, _, _ := newLoop(t, func(model.Request) (*model.Response, error) { cancel(); return nil, retryable }, final("never"))
		l.RetryBackoff = 1 << 40
		mustHalt(t, toolloop.Run(ctx, l, "t"), toolloop.OriginInfra)
	})
}

func TestCircuitBreaker(t *testing.T) {
	t.Run("failures in a row halt", func(t *testing.T) {
		l, m, _ := newLoop(t,
			calls("terminal", terminal("bad 1")),
			calls("read_file", `{"path":"missing"}`),
			calls("nope", `{}`),
			final("never"))
		h := mustHalt(t, toolloop.Run(context.Background(), l, "t"), toolloop.OriginCode)
		if !strings.Contains(h.Why, "circuit breaker") || h.Ctx.ConsecutiveFailures != 3 || m.calls() != 3 {
			t.Fatalf("halted %q with %d failures after %d calls", h.Why, h.Ctx.ConsecutiveFailures, m.calls())
		}
	})
	t.Run("a success resets and denials do not count", func(t *testing.T) {
		l, _, _ := newLoop(t,
			calls("terminal", terminal("bad 1"), "terminal", terminal("bad 2")),
			calls("terminal", terminal("no 1"), "terminal", terminal("no 2"), "terminal", terminal("no 3")),
			calls("terminal", terminal("ok"), "terminal", terminal("bad 3"), "terminal", terminal("bad 4")),
			final("done"))
		d := mustDone(t, toolloop.Run(context.Background(), l, "t"))
		if d.Ctx.ConsecutiveFailures != 2 {
			t.Fatalf("failures = %d, want 2", d.Ctx.ConsecutiveFailures)
		}
		for _, m := range d.Ctx.Messages {
			if strings.Contains(m.Content, "Terminal(no)") && (!m.IsError || !strings.HasPrefix(m.Content, "denied by policy: ")) {
				t.Errorf("denial result = %+v", m)
			}
		}
	})
	t.Run("a human denial on resume does not count", func(t *testing.T) {
		l, _, _ := newLoop(t,
			calls("terminal", terminal("bad 1"), "terminal", terminal("bad 2"), "terminal", terminal("ask 3")),
			final("done"))
		aw := mustAwait(t, toolloop.Run(context.Background(), l, "t"))
		d := mustDone(t, toolloop.Resume(context.Background(), l, aw.Ctx,
			brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusDenied, Reason: "no"}))
		if d.Ctx.ConsecutiveFailures != 2 {
			t.Fatalf("failures = %d", d.Ctx.ConsecutiveFailures)
		}
	})
	t.Run("a failure settled on resume counts", func(t *testing.T) {
		l, _, _ := newLoop(t,
			calls("terminal", terminal("bad 1"), "terminal", terminal("bad 2"), "terminal", terminal("ask 3")),
			final("never"))
		aw := mustAwait(t, toolloop.Run(context.Background(), l, "t"))
		h := mustHalt(t, toolloop.Resume(context.Background(), l, aw.Ctx,
			brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusFailed, Result: &brabo.Result{ExitCode: -1, Error: "disk full"}}),
			toolloop.OriginCode)
		if !strings.Contains(h.Why, "disk full") {
			t.Fatalf("halted %q", h.Why)
		}
	})
}

func TestPipelineErrors(t *testing.T) {
	l, m, _ := newLoop(t, calls("terminal", terminal("invalid"), "terminal", terminal("infra")), final("never"))
	h := mustHalt(t, toolloop.Run(context.Background(), l, "t"), toolloop.OriginInfra)
	if !strings.Contains(h.Why, "database is down") || m.calls() != 1 {
		t.Fatalf("halted %q", h.Why)
	}
	res := h.Ctx.Messages[len(h.Ctx.Messages)-1]
	if res.Role != model.ToolResult || !res.IsError || !strings.Contains(res.Content, "refused") {
		t.Fatalf("the refused proposal's result = %+v", res)
	}
}

// An unexpected status inside the loop is a defect of this build, named
// origin code: never infra by elimination (ADR 0057).
func TestAnUnexpectedStatusFromProposeHaltsWithOriginCode(t *testing.T) {
	l, m, _ := newLoop(t, calls("terminal", terminal("odd x")), final("never"))
	h := mustHalt(t, toolloop.Run(context.Background(), l, "t"), toolloop.OriginCode)
	if !strings.Contains(h.Why, `"approved"`) || !strings.Contains(h.Why, "neither settled nor pending") || m.calls() != 1 {
		t.Fatalf("halted %q after %d calls", h.Why, m.calls())
	}
}

func TestResultFormatting(t *testing.T) {
	l, m, _ := newLoop(t, calls("terminal", terminal("ask x")), final("done"))
	aw := mustAwait(t, toolloop.Run(context.Background(), l, "t"))
	mustDone(t, toolloop.Resume(context.Background(), l, aw.Ctx, brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted,
		Result: &brabo.Result{ExitCode: 2, Output: "aaaa\n[brabo: output truncated, 10 more bytes]\n", Truncated: true, TimedOut: true,
			Detail: map[string]string{"commit": "abc123"}}}))
	got := toolResults(m.last())[0]
	for _, want := range []string{"exit code: 2", "timed out", "commit: abc123", "[brabo: output truncated, 10 more bytes]"} {
		if !strings.Contains(got.Content, want) {
			t.Errorf("result %q lacks %q", got.Content, want)
		}
	}
	if got.IsError {
		t.Errorf("an executed command with exit code 2 is an error result")
	}
}

func TestMisconfiguredLoop(t *testing.T) {
	l, m, _ := newLoop(t, final("never"))
	l.Tools = append(l.Tools, toolloop.TerminalTool())
	h := mustHalt(t, toolloop.Run(context.Background(), l, "t"), toolloop.OriginCode)
	if !strings.Contains(h.Why, `"terminal"`) || m.calls() != 0 {
		t.Fatalf("halted %q after %d calls", h.Why, m.calls())
	}
}

func TestCallWithoutIDGetsOne(t *testing.T) {
	l, m, _ := newLoop(t, func(model.Request) (*model.Response, error) {
		return &model.Response{Message: model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{
			{Name: "terminal", Arguments: json.RawMessage(terminal("ask x"))}}}, StopReason: model.StopToolCalls}, nil
	}, final("done"))
	aw := mustAwait(t, toolloop.Run(context.Background(), l, "t"))
	if aw.ToolCallID != "call_1_1" || aw.Ctx.Messages[1].ToolCalls[0].ID != "call_1_1" {
		t.Fatalf("awaiting %+v", aw)
	}
	mustDone(t, toolloop.Resume(context.Background(), l, aw.Ctx, brabo.Settled{ActionID: aw.ActionID, Status: brabo.StatusExecuted}))
	if r := toolResults(m.last()); len(r) != 1 || r[0].ToolCallID != "call_1_1" {
		t.Fatalf("results %+v", r)
	}
}
