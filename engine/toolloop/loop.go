// Package toolloop is the agents' tool loop (DESIGN §7.1): it calls the
// model, runs the tools it asks for, appends their results and repeats
// until the model stops, a limit is hit, or a pipeline tool's action waits
// for a human.
//
// A pending action suspends the loop (ADR 0052): Run or Resume returns
// AwaitingApproval at once, with the whole conversation in a Ctx. The model
// is never told "pending" and the loop never polls. When the action
// settles, Resume puts its real result (or the denial reason) where the
// tool result goes and goes on.
package toolloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// Proposer is the pipeline as the loop sees it; *pipeline.Service
// satisfies it.
type Proposer interface {
	Propose(ctx context.Context, req pipeline.ProposeRequest) (*brabo.ProposedAction, error)
}

var _ Proposer = (*pipeline.Service)(nil)

// Instructor is a Proposer that keeps agents' stored instructions
// (pipeline.Service): what an approved instruction_patch wrote. The loop
// adds them to its System prompt at every model call, so that the agent's
// next turn uses the text approved last.
type Instructor interface {
	AgentInstructions(ctx context.Context, agentID string) (string, error)
}

// UsageRecorder is a Proposer that records brabo's own agents' model
// usage against their project's budget (pipeline.Service).
type UsageRecorder interface {
	RecordModelUsage(ctx context.Context, u brabo.ModelUsage) error
}

// Wrapper is a Proposer that passes proposals on to another one (an
// agent's own gate in front of the pipeline); the loop looks through it
// for an Instructor and a UsageRecorder.
type Wrapper interface {
	Inner() Proposer
}

var (
	_ Instructor    = (*pipeline.Service)(nil)
	_ UsageRecorder = (*pipeline.Service)(nil)
)

// findProposer returns the first Proposer of the chain from p that is a T.
func findProposer[T any](p Proposer) (T, bool) {
	for i := 0; p != nil && i < 8; i++ {
		if t, ok := p.(T); ok {
			return t, true
		}
		w, ok := p.(Wrapper)
		if !ok {
			break
		}
		p = w.Inner()
	}
	var zero T
	return zero, false
}

// InstructionsHeader introduces an agent's stored instructions in its
// System prompt.
const InstructionsHeader = "Instructions for you from the project (changed only through an approved instruction_patch):"

// system is the System prompt of the next model call: the loop's own,
// then the agent's stored instructions.
func (l *Loop) system(ctx context.Context) (string, error) {
	in, ok := findProposer[Instructor](l.Proposer)
	if !ok || l.Actor.Agent == nil {
		return l.System, nil
	}
	text, err := in.AgentInstructions(ctx, l.Actor.Agent.ID)
	if err != nil || strings.TrimSpace(text) == "" {
		return l.System, err
	}
	if l.System == "" {
		return InstructionsHeader + "\n" + text, nil
	}
	return l.System + "\n\n" + InstructionsHeader + "\n" + text, nil
}

// recordUsage records a model call's usage against the project's budget. A
// failure to record is not the agent's: it is left to the recorder's log.
func (l *Loop) recordUsage(ctx context.Context, u model.Usage) {
	r, ok := findProposer[UsageRecorder](l.Proposer)
	if !ok || l.Actor.Agent == nil {
		return
	}
	_ = r.RecordModelUsage(ctx, brabo.ModelUsage{ProjectID: l.ProjectID, AgentID: l.Actor.Agent.ID,
		InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens)})
}

// Defaults for the zero values of Loop's tuning fields.
const (
	DefaultMaxIterations   = 20
	DefaultModelRetries    = 3
	DefaultRetryBackoff    = 500 * time.Millisecond
	DefaultFailureBreaker  = 3
	maxRetryBackoffPerCall = 10 * time.Second
)

// Loop is one agent's tool loop configuration. It holds no conversation
// state: that is Ctx.
type Loop struct {
	Model     model.Model
	Proposer  Proposer
	ProjectID string
	Actor     pipeline.Actor
	System    string
	Tools     []Tool
	// MaxIterations bounds the model calls of one conversation
	// (DefaultMaxIterations when zero).
	MaxIterations int

	// ModelRetries is how many times a retryable *model.Error is tried
	// again before the loop halts (DefaultModelRetries when zero; negative
	// for none).
	ModelRetries int
	// RetryBackoff is the first wait before a retry; it doubles each time
	// (DefaultRetryBackoff when zero).
	RetryBackoff time.Duration
	// FailureBreaker is how many failing tool results in a row halt the
	// loop with origin code (DefaultFailureBreaker when zero).
	FailureBreaker int
}

// Origin names why a conversation stopped (DESIGN §1): never inferred by
// elimination. It is the root package's, so tasks and runs carry it as is.
type Origin = brabo.Origin

// Origins.
const (
	OriginPolicy = brabo.OriginPolicy
	OriginInfra  = brabo.OriginInfra
	OriginCode   = brabo.OriginCode
	OriginModel  = brabo.OriginModel
	OriginUser   = brabo.OriginUser
)

// WhyMaxIterations is Halted.Why when the iteration cap is hit.
const WhyMaxIterations = "max_iterations"

// Outcome is how Run or Resume ended: Done, Halted or AwaitingApproval.
type Outcome interface{ outcome() }

// Done: the model answered without asking for a tool.
type Done struct {
	Final string
	Ctx   Ctx
}

// Halted: the loop stopped before the model was done.
type Halted struct {
	Why    string
	Origin Origin
	Ctx    Ctx
	// Refused is true when Resume refused the settled event (another
	// action, a duplicate delivery, an unreadable Ctx): nothing ran, and
	// Ctx is the one given to Resume, unchanged.
	Refused bool
}

// AwaitingApproval: a pipeline tool's action waits for a human. Store Ctx
// and call Resume with the action's settled event.
type AwaitingApproval struct {
	ActionID   string
	ToolCallID string
	ToolName   string
	Ctx        Ctx
}

func (Done) outcome()             {}
func (Halted) outcome()           {}
func (AwaitingApproval) outcome() {}

// Run starts a conversation with task as the user message.
func Run(ctx context.Context, loop *Loop, task string) Outcome {
	c := Ctx{Version: CtxVersion, Messages: []model.Message{{Role: model.User, Content: task}}}
	if h := loop.check(c); h != nil {
		return h
	}
	return loop.iterate(ctx, c)
}

// Resume continues a conversation suspended on settled.ActionID: the real
// result (executed: the output; failed: the error; denied: "denied by a
// human: <reason>") becomes the pending tool call's result, the calls queued
// after it run, and the loop goes on. An event for another action, a second
// delivery of the same one or a Ctx of another version is refused with
// Halted{Origin: infra, Refused: true}; an unsettled status, or a Ctx that
// names no pending call, is a defect and is refused with origin code.
func Resume(ctx context.Context, loop *Loop, c Ctx, settled brabo.Settled) Outcome {
	refuse := func(format string, a ...any) Outcome {
		return Halted{Why: "resume refused: " + fmt.Sprintf(format, a...), Origin: OriginInfra, Ctx: c, Refused: true}
	}
	refuseCode := func(format string, a ...any) Outcome {
		return Halted{Why: "resume refused: " + fmt.Sprintf(format, a...), Origin: OriginCode, Ctx: c, Refused: true}
	}
	if c.Version != CtxVersion {
		return refuse("the Ctx has version %d; this build reads version %d only", c.Version, CtxVersion)
	}
	if c.AwaitingActionID == "" {
		if slices.Contains(c.Resumed, settled.ActionID) {
			return refuse("action %s was already resumed (a duplicate delivery); the Ctx awaits nothing", settled.ActionID)
		}
		return refuse("settled event for action %s, but the Ctx awaits no action", settled.ActionID)
	}
	if settled.ActionID != c.AwaitingActionID {
		if slices.Contains(c.Resumed, settled.ActionID) {
			return refuse("action %s was already resumed (a duplicate delivery); the Ctx now awaits action %s",
				settled.ActionID, c.AwaitingActionID)
		}
		return refuse("settled event for action %s, but the Ctx awaits action %s", settled.ActionID, c.AwaitingActionID)
	}
	// A status that is not settled, or a Ctx without its pending call,
	// cannot come from the pipeline and the loop as built: a defect of
	// this build, named so (ADR 0057: never infra by elimination).
	if !settled.Status.Settled() {
		return refuseCode("action %s has status %q, which is not settled", settled.ActionID, settled.Status)
	}
	if c.PendingToolCallID == "" {
		return refuseCode("the Ctx awaits action %s but names no pending tool call", c.AwaitingActionID)
	}
	if h := loop.check(c); h != nil {
		return h
	}

	next := c.clone()
	res := settledResult(settled)
	next.Messages = append(next.Messages, model.Message{Role: model.ToolResult, ToolCallID: c.PendingToolCallID,
		ToolName: c.PendingToolName, Content: res.content, IsError: res.isError})
	next.PendingToolCallID, next.PendingToolName, next.AwaitingActionID = "", "", ""
	next.Resumed = append(next.Resumed, settled.ActionID)
	queued := next.Queued
	next.Queued = nil
	if out := loop.count(&next, res); out != nil {
		return out
	}
	if out := loop.runCalls(ctx, &next, queued); out != nil {
		return out
	}
	return loop.iterate(ctx, next)
}

// check refuses a Loop that cannot run: a code defect, named as such.
func (l *Loop) check(c Ctx) Outcome {
	halt := func(why string) Outcome { return Halted{Why: why, Origin: OriginCode, Ctx: c} }
	if l.Model == nil {
		return halt("the loop has no model")
	}
	seen := map[string]bool{}
	for _, t := range l.Tools {
		switch {
		case t.Spec.Name == "":
			return halt("a tool has no name")
		case seen[t.Spec.Name]:
			return halt(fmt.Sprintf("two tools are named %q", t.Spec.Name))
		case t.Kind == Direct && t.Direct == nil:
			return halt(fmt.Sprintf("the direct tool %q has no Direct function", t.Spec.Name))
		case t.Kind == Pipeline && t.Action == nil:
			return halt(fmt.Sprintf("the pipeline tool %q has no Action function", t.Spec.Name))
		case t.Kind == Pipeline && l.Proposer == nil:
			return halt(fmt.Sprintf("the pipeline tool %q needs a Proposer", t.Spec.Name))
		case t.Kind != Direct && t.Kind != Pipeline:
			return halt(fmt.Sprintf("the tool %q has kind %q", t.Spec.Name, t.Kind))
		}
		seen[t.Spec.Name] = true
	}
	return nil
}

func (l *Loop) maxIterations() int {
	if l.MaxIterations > 0 {
		return l.MaxIterations
	}
	return DefaultMaxIterations
}

func (l *Loop) breaker() int {
	if l.FailureBreaker > 0 {
		return l.FailureBreaker
	}
	return DefaultFailureBreaker
}

// iterate calls the model and runs its tools until an outcome.
func (l *Loop) iterate(ctx context.Context, c Ctx) Outcome {
	specs := make([]model.Tool, len(l.Tools))
	for i, t := range l.Tools {
		specs[i] = t.Spec
	}
	for {
		if c.Iterations >= l.maxIterations() {
			return Halted{Why: WhyMaxIterations, Origin: OriginPolicy, Ctx: c}
		}
		system, err := l.system(ctx)
		if err != nil {
			return Halted{Why: "the agent's instructions could not be read: " + err.Error(), Origin: OriginInfra, Ctx: c}
		}
		req := model.Request{System: system, Messages: c.clone().Messages, Tools: specs}
		c.Iterations++
		resp, err := l.complete(ctx, req)
		if err != nil {
			origin := OriginModel
			if ctx.Err() != nil {
				origin = OriginInfra // shutting down is not the model's fault
			}
			return Halted{Why: "model: " + err.Error(), Origin: origin, Ctx: c}
		}
		l.recordUsage(ctx, resp.Usage)
		msg := normalizeMessage(resp.Message, c.Iterations)
		c.Messages = append(c.Messages, msg)
		if len(msg.ToolCalls) == 0 {
			if resp.StopReason == model.StopMaxTokens {
				return Halted{Why: "model: the answer was cut at max_tokens", Origin: OriginModel, Ctx: c}
			}
			return Done{Final: msg.Content, Ctx: c}
		}
		if out := l.runCalls(ctx, &c, msg.ToolCalls); out != nil {
			return out
		}
	}
}

// complete calls the model, trying a retryable *model.Error again a
// bounded number of times with a doubling backoff.
func (l *Loop) complete(ctx context.Context, req model.Request) (*model.Response, error) {
	retries := l.ModelRetries
	if retries == 0 {
		retries = DefaultModelRetries
	}
	backoff := l.RetryBackoff
	if backoff <= 0 {
		backoff = DefaultRetryBackoff
	}
	for attempt := 0; ; attempt++ {
		resp, err := l.Model.Complete(ctx, req)
		if err == nil && resp == nil {
			err = errors.New("the model returned no response and no error")
		}
		if err == nil {
			return resp, nil
		}
		var me *model.Error
		if !errors.As(err, &me) || !me.Retryable || attempt >= retries || ctx.Err() != nil {
			if attempt > 0 {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (retry cancelled: %v)", err, ctx.Err())
		case <-t.C:
		}
		backoff = min(backoff*2, maxRetryBackoffPerCall)
	}
}

// result is one tool call's answer before it becomes a message.
type result struct {
	content string
	isError bool
	// failed counts toward the circuit breaker; a denial is an error the
	// model reads but not a failure.
	failed bool
}

// runCalls runs calls in order, appending their results to c. It returns
// an outcome when the loop must stop here: a pending action (the calls
// after it are queued in c), the circuit breaker, or the pipeline itself
// failing.
func (l *Loop) runCalls(ctx context.Context, c *Ctx, calls []model.ToolCall) Outcome {
	for i, call := range calls {
		res, pending, out := l.runOne(ctx, *c, call)
		if out != nil {
			return out
		}
		if pending != nil {
			c.PendingToolCallID, c.PendingToolName, c.AwaitingActionID = call.ID, call.Name, pending.ID
			c.Queued = cloneCalls(calls[i+1:])
			return AwaitingApproval{ActionID: pending.ID, ToolCallID: call.ID, ToolName: call.Name, Ctx: *c}
		}
		c.Messages = append(c.Messages, model.Message{Role: model.ToolResult, ToolCallID: call.ID,
			ToolName: call.Name, Content: res.content, IsError: res.isError})
		if out := l.count(c, res); out != nil {
			return out
		}
	}
	return nil
}

// count updates the failure streak and trips the breaker.
func (l *Loop) count(c *Ctx, res result) Outcome {
	switch {
	case res.failed:
		c.ConsecutiveFailures++
	case !res.isError:
		c.ConsecutiveFailures = 0
	}
	if c.ConsecutiveFailures >= l.breaker() {
		return Halted{Why: fmt.Sprintf("circuit breaker: %d failing tool results in a row (last: %s)",
			c.ConsecutiveFailures, clip(res.content, 300)), Origin: OriginCode, Ctx: *c}
	}
	return nil
}

// runOne runs one tool call. It returns the result, or the pending action
// that suspends the loop, or an outcome when the pipeline could not be
// reached at all.
func (l *Loop) runOne(ctx context.Context, c Ctx, call model.ToolCall) (result, *brabo.ProposedAction, Outcome) {
	idx := slices.IndexFunc(l.Tools, func(t Tool) bool { return t.Spec.Name == call.Name })
	if idx < 0 {
		names := make([]string, len(l.Tools))
		for i, t := range l.Tools {
			names[i] = t.Spec.Name
		}
		sort.Strings(names)
		return fail("error: unknown tool %q; the tools are: %s", call.Name, strings.Join(names, ", ")), nil, nil
	}
	t := l.Tools[idx]
	if t.Kind == Direct {
		out, err := runDirect(ctx, t, call.Arguments)
		if err != nil {
			return fail("error: %s: %v", call.Name, err), nil, nil
		}
		return result{content: out}, nil, nil
	}
	typ, payload, err := t.Action(call.Arguments)
	if err != nil {
		return fail("error: bad arguments for %s: %v", call.Name, err), nil, nil
	}
	if t.Local != nil {
		out, handled, err := runLocal(ctx, t, call.Arguments)
		if err != nil {
			return fail("error: %s: %v", call.Name, err), nil, nil
		}
		if handled {
			return result{content: out}, nil, nil
		}
	}
	a, err := l.Proposer.Propose(ctx, pipeline.ProposeRequest{ProjectID: l.ProjectID, Actor: l.Actor, Type: typ, Payload: payload})
	if err != nil {
		switch brabo.ErrorCode(err) {
		case brabo.CodeInvalidAction, brabo.CodeForbiddenRole, brabo.CodeMergeAlreadyProposed, brabo.CodePRAlreadyMerged:
			// The proposal itself was refused: the model can learn from it.
			return fail("error: %s was refused: %v", call.Name, err), nil, nil
		}
		return result{}, nil, Halted{Why: fmt.Sprintf("pipeline: proposing %s for tool call %s: %v", typ, call.ID, err),
			Origin: OriginInfra, Ctx: c}
	}
	switch a.Status {
	case brabo.StatusPending:
		return result{}, a, nil
	case brabo.StatusExecuted, brabo.StatusFailed, brabo.StatusDenied:
		if a.Status == brabo.StatusDenied {
			return result{content: "denied by policy: " + a.Reason, isError: true}, nil, nil
		}
		return settledResult(brabo.Settled{ActionID: a.ID, Status: a.Status, Result: a.Result, Reason: a.Reason}), nil, nil
	}
	// The pipeline answers a proposal pending, settled or with an error:
	// any other status is a defect of this build, not a failure of the
	// infrastructure (ADR 0057: the origin is named, never inferred).
	return result{}, nil, Halted{Why: fmt.Sprintf("pipeline: action %s came back %q from Propose, neither settled nor pending", a.ID, a.Status),
		Origin: OriginCode, Ctx: c}
}

func fail(format string, a ...any) result {
	return result{content: fmt.Sprintf(format, a...), isError: true, failed: true}
}

func runLocal(ctx context.Context, t Tool, args json.RawMessage) (out string, handled bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, handled, err = "", false, fmt.Errorf("the tool panicked: %v", r)
		}
	}()
	return t.Local(ctx, args)
}

func runDirect(ctx context.Context, t Tool, args json.RawMessage) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the tool panicked: %v", r)
		}
	}()
	return t.Direct(ctx, args)
}

// settledResult is what the model reads for a settled action: the real
// output of an executed one, the error of a failed one, the human's reason
// for a denied one.
func settledResult(s brabo.Settled) result {
	switch s.Status {
	case brabo.StatusExecuted:
		return result{content: formatResult(s.Result, "")}
	case brabo.StatusDenied:
		return result{content: "denied by a human: " + s.Reason, isError: true}
	default: // failed
		msg := "the action failed"
		if s.Result != nil && s.Result.Error != "" {
			msg = s.Result.Error
		} else if s.Reason != "" {
			msg = s.Reason
		}
		return result{content: formatResult(s.Result, "failed: "+msg), isError: true, failed: true}
	}
}

// formatResult writes an action's result for the model: the exit code,
// the facts of Detail, then the output as it came (its truncation marker
// included).
func formatResult(r *brabo.Result, head string) string {
	var b strings.Builder
	if head != "" {
		b.WriteString(head + "\n")
	}
	if r == nil {
		return strings.TrimSuffix(b.String(), "\n")
	}
	if r.Ran() {
		fmt.Fprintf(&b, "exit code: %d\n", r.ExitCode)
	} else {
		fmt.Fprintf(&b, "not run: %s\n", r.Code)
	}
	if r.TimedOut {
		b.WriteString("timed out\n")
	}
	if r.Truncated {
		b.WriteString("output truncated\n")
	}
	keys := make([]string, 0, len(r.Detail))
	for k := range r.Detail {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, r.Detail[k])
	}
	if r.Output != "" {
		b.WriteString("output:\n" + r.Output)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
