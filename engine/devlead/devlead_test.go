package devlead_test

// The lead's tests run on the real pipeline: SQLite on a file, the real
// executor (with the lead's runners), a local project owned by a member,
// the scripted model behind a counter, and the wake worker.

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devlead"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/model/scripted"
	"github.com/brabo-dev/brabo/pipeline"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type counter struct {
	inner model.Model
	mu    sync.Mutex
	n     int
}

func (c *counter) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.inner.Complete(ctx, req)
}

func (c *counter) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func newModel(t *testing.T, script string) *counter {
	t.Helper()
	m, err := scripted.ParseNamed(t.Name(), []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return &counter{inner: m}
}

type world struct {
	store brabo.Store
	svc   *pipeline.Service
	owner *brabo.Member
	prj   *brabo.Project
	agent *brabo.Agent
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	s := enginetest.Store(t)
	ex := executor.New(executor.Options{})
	starter := &devlead.Starter{Store: s}
	ex.Register(brabo.ProposeExecutionPlan, starter.RunPlan)
	ex.Register(brabo.Parallelize, starter.RunParallelize)
	ex.Register(brabo.RaiseMaxParallel, starter.RunRaiseMaxParallel)
	ex.Register(brabo.AssessImplementability, devlead.RunAssessment)
	now := time.Now().UTC()
	w := &world{store: s, svc: &pipeline.Service{Store: s, Executor: ex, WorkspacesRoot: t.TempDir(), Log: quiet}}
	w.owner, w.prj = enginetest.Project(t, s, t.TempDir())
	w.agent = &brabo.Agent{ID: brabo.NewID("agt"), ProjectID: w.prj.ID, Name: "dev-lead", PrincipalID: w.owner.ID,
		TokenHash: brabo.NewID("h"), CreatedAt: now}
	err := s.Update(ctx, func(tx brabo.Tx) error {
		return tx.CreateAgent(ctx, w.agent)
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) lead(m model.Model) *devlead.Lead {
	return &devlead.Lead{Store: w.store, Proposer: w.svc, Model: m, ProjectID: w.prj.ID, Agent: w.agent,
		System: "You are the dev lead.", MaxIterations: 6, Log: quiet}
}

func (w *world) worker(l *devlead.Lead) *wake.Worker {
	return &wake.Worker{Store: w.store, Owner: brabo.NewID("proc"), Local: l, Resume: l, Log: quiet}
}

// drain runs the worker until the outbox is empty, then waits for the
// turns it handed to the lead.
func drain(t *testing.T, wk *wake.Worker, l *devlead.Lead) int {
	t.Helper()
	total := 0
	for {
		n, err := wk.Once(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		total += n
	}
	l.Wait()
	return total
}

func (w *world) run(t *testing.T, id string) *brabo.Run { return enginetest.Run(t, w.store, id) }

func (w *world) waitingRun(t *testing.T) *brabo.Run {
	t.Helper()
	ctx := context.Background()
	var r *brabo.Run
	if err := w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		r, err = tx.WaitingRun(ctx, brabo.AgentKey(w.agent.ID))
		return err
	}); err != nil {
		t.Fatalf("the lead's waiting run: %v", err)
	}
	return r
}

func (w *world) action(t *testing.T, id string) *brabo.ProposedAction {
	t.Helper()
	ctx := context.Background()
	var a *brabo.ProposedAction
	if err := w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		a, err = tx.Action(ctx, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

func (w *world) events(t *testing.T, typ string) []brabo.Event {
	t.Helper()
	ctx := context.Background()
	var evs []brabo.Event
	if err := w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		evs, err = tx.Events(ctx, w.prj.ID, 0, 10000)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var out []brabo.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func (w *world) approve(t *testing.T, id string) {
	t.Helper()
	d, err := w.svc.Approve(context.Background(), id, w.owner, w.svc.RevisionNow(context.Background(), id))
	if err != nil || d.Action.Status != brabo.StatusExecuted {
		t.Fatalf("approve: %+v, %v", d, err)
	}
}

func (w *world) conversation(t *testing.T, l *devlead.Lead) []model.Message {
	t.Helper()
	msgs, err := l.Conversation(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

const planScript = `{"turns": [
  {"content": "Here is my plan.", "toolCalls": [{"id": "call_plan", "name": "propose_execution_plan",
    "arguments": {"plan": "two agents on api, one on web", "agents": {"api": 2, "web": 1}}}]},
  {"expectToolResult": "the execution plan was approved", "content": "The plan was approved: two agents on api, one on web."},
  {"content": "You're welcome."}
]}`

// post posts and checks that the turn suspended on a pending
// propose_execution_plan, with the run and the agent.status event.
func (w *world) postSuspends(t *testing.T, l *devlead.Lead) (string, *brabo.Run) {
	t.Helper()
	turn, err := l.Post(context.Background(), "Plan the checkout story.")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Awaiting == "" || turn.Answer != "" || turn.Halted != "" {
		t.Fatalf("the turn did not suspend: %+v", turn)
	}
	a := w.action(t, turn.Awaiting)
	if a.Type != brabo.ProposeExecutionPlan || a.Status != brabo.StatusPending || a.ActorID != w.agent.ID {
		t.Fatalf("the action: %+v", a)
	}
	r := w.waitingRun(t)
	if r.State != brabo.RunAwaitingApproval || r.AwaitingActionID != turn.Awaiting || r.TaskID != "" {
		t.Fatalf("the run: %+v", r)
	}
	evs := w.events(t, devlead.EventAgentStatus)
	if len(evs) != 1 {
		t.Fatalf("%d agent.status events", len(evs))
	}
	var p map[string]string
	json.Unmarshal(evs[0].Payload, &p)
	if p["status"] != "awaiting_approval" || p["actionId"] != turn.Awaiting || evs[0].ActionID != turn.Awaiting {
		t.Fatalf("the agent.status event: %+v %s", evs[0], evs[0].Payload)
	}
	if _, err := l.Post(context.Background(), "anything?"); !errors.Is(err, devlead.ErrAwaiting) {
		t.Fatalf("a Post while waiting: %v", err)
	}
	return turn.Awaiting, r
}

func TestApprovedPlanResumesTheTurn(t *testing.T) {
	w := newWorld(t)
	m := newModel(t, planScript)
	l := w.lead(m)
	var resumed []devlead.Turn
	l.OnTurn = func(tr devlead.Turn) { resumed = append(resumed, tr) }
	id, r := w.postSuspends(t, l)
	if m.calls() != 1 {
		t.Fatalf("the model was called %d times before the decision", m.calls())
	}
	w.approve(t, id)
	if n := drain(t, w.worker(l), l); n == 0 {
		t.Fatal("no settled message was delivered")
	}
	if len(resumed) != 1 || !strings.Contains(resumed[0].Answer, "approved") {
		t.Fatalf("the resumed turn: %+v", resumed)
	}
	msgs := w.conversation(t, l)
	last := msgs[len(msgs)-1]
	if last.Role != model.Assistant || !strings.Contains(last.Content, "The plan was approved") {
		t.Fatalf("the conversation ends with %+v", last)
	}
	res := msgs[len(msgs)-2]
	if res.Role != model.ToolResult || res.ToolCallID != "call_plan" || !strings.Contains(res.Content, "two agents on api") {
		t.Fatalf("the tool result: %+v", res)
	}
	if got := w.run(t, r.ID); got.State != brabo.RunDone || got.AwaitingActionID != "" {
		t.Fatalf("the run after the turn: %+v", got)
	}

	// The conversation goes on: the earlier turns reach the model.
	turn, err := l.Post(context.Background(), "Thanks.")
	if err != nil || turn.Answer != "You're welcome." {
		t.Fatalf("the next turn: %+v, %v", turn, err)
	}
	msgs = w.conversation(t, l)
	if len(msgs) != 6 || msgs[0].Content != "Plan the checkout story." || msgs[4].Content != "Thanks." {
		t.Fatalf("the conversation: %+v", msgs)
	}
	if m.calls() != 3 {
		t.Fatalf("the model was called %d times", m.calls())
	}
}

func TestDeniedPlanResumesWithTheReason(t *testing.T) {
	w := newWorld(t)
	m := newModel(t, `{"turns": [
  {"toolCalls": [{"id": "call_plan", "name": "propose_execution_plan",
    "arguments": {"plan": "five agents on api", "agents": {"api": 5}}}]},
  {"expectToolResult": "denied by a human: too many agents for a small story", "content": "The plan was denied (too many agents); I will propose a smaller one."}
]}`)
	l := w.lead(m)
	turn, err := l.Post(context.Background(), "Plan it.")
	if err != nil || turn.Awaiting == "" {
		t.Fatalf("%+v, %v", turn, err)
	}
	if _, err := w.svc.Deny(context.Background(), turn.Awaiting, w.owner, "too many agents for a small story"); err != nil {
		t.Fatal(err)
	}
	drain(t, w.worker(l), l)
	msgs := w.conversation(t, l)
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "The plan was denied") {
		t.Fatalf("the conversation ends with %+v", last)
	}
	if res := msgs[len(msgs)-2]; !res.IsError || !strings.Contains(res.Content, "too many agents") {
		t.Fatalf("the tool result: %+v", res)
	}
	if a := w.action(t, turn.Awaiting); a.Status != brabo.StatusDenied {
		t.Fatalf("the action: %+v", a)
	}
}

func TestAssessImplementabilitySuspendsTheSameWay(t *testing.T) {
	w := newWorld(t)
	m := newModel(t, `{"turns": [
  {"toolCalls": [{"id": "call_a", "name": "assess_implementability",
    "arguments": {"story": "checkout", "verdict": "implementable: the API exists"}}]},
  {"expectToolResult": "the implementability assessment was approved", "content": "Assessment approved."}
]}`)
	l := w.lead(m)
	turn, err := l.Post(context.Background(), "Can we build checkout?")
	if err != nil || turn.Awaiting == "" {
		t.Fatalf("%+v, %v", turn, err)
	}
	if a := w.action(t, turn.Awaiting); a.Type != brabo.AssessImplementability || a.Status != brabo.StatusPending {
		t.Fatalf("the action: %+v", a)
	}
	w.approve(t, turn.Awaiting)
	drain(t, w.worker(l), l)
	msgs := w.conversation(t, l)
	if last := msgs[len(msgs)-1]; last.Content != "Assessment approved." {
		t.Fatalf("the conversation ends with %+v", last)
	}
}

// A settled event delivered twice (or to Deliver and Resume both) resumes
// the turn once.
func TestDuplicateDeliveryResumesOnce(t *testing.T) {
	w := newWorld(t)
	m := newModel(t, planScript)
	l := w.lead(m)
	id, r := w.postSuspends(t, l)
	w.approve(t, id)
	ctx := context.Background()
	var msgs []brabo.OutboxMessage
	if err := w.store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		msgs, err = tx.ClaimOutbox(ctx, time.Now(), time.Minute, 10)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].ActionID != id {
		t.Fatalf("the outbox: %+v", msgs)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(2)
		go func() { defer wg.Done(); l.Deliver(msgs[0].ActorKey, msgs[0]) }()
		go func() {
			defer wg.Done()
			if err := l.Resume(ctx, r, msgs[0]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	l.Wait()
	if m.calls() != 2 {
		t.Fatalf("the model was called %d times; want 2 (one resumption)", m.calls())
	}
	if n := len(w.conversation(t, l)); n != 4 {
		t.Fatalf("the conversation has %d messages", n)
	}
}

// The declared gap (DESIGN §7.5): a new Lead after a restart does not
// restore the waiting turn; the settled event is delivered, the model is
// not called, and the decision stays recorded.
func TestAfterARestartTheDecisionIsNotNarrated(t *testing.T) {
	w := newWorld(t)
	m1 := newModel(t, planScript)
	id, r := w.postSuspends(t, w.lead(m1))
	// The process dies; the decision is made meanwhile.
	w.approve(t, id)

	m2 := newModel(t, `{"turns": [{"content": "Hello again."}]}`)
	l2 := w.lead(m2)
	if n := drain(t, w.worker(l2), l2); n != 1 {
		t.Fatalf("%d messages delivered; want 1", n)
	}
	if n := drain(t, w.worker(l2), l2); n != 0 {
		t.Fatalf("the settled event was not marked delivered (%d claimed again)", n)
	}
	if m1.calls() != 1 || m2.calls() != 0 {
		t.Fatalf("the model was called again: %d, %d", m1.calls(), m2.calls())
	}
	if a := w.action(t, id); a.Status != brabo.StatusExecuted {
		t.Fatalf("the action: %+v", a)
	}
	if got := w.run(t, r.ID); got.State != brabo.RunAwaitingApproval {
		t.Fatalf("the orphaned run: %+v", got)
	}
	msgs := w.conversation(t, l2)
	if last := msgs[len(msgs)-1]; last.Role != model.Assistant || len(last.ToolCalls) != 1 {
		t.Fatalf("the stored conversation ends with %+v", last)
	}

	// The next Post closes the orphaned turn and goes on without it.
	turn, err := l2.Post(context.Background(), "Hi.")
	if err != nil || turn.Answer != "Hello again." {
		t.Fatalf("%+v, %v", turn, err)
	}
	if got := w.run(t, r.ID); got.State != brabo.RunBlocked {
		t.Fatalf("the orphaned run after a Post: %+v", got)
	}
	if a := w.action(t, id); a.Status != brabo.StatusExecuted {
		t.Fatalf("the action: %+v", a)
	}
	if msgs := w.conversation(t, l2); len(msgs) != 2 || msgs[1].Content != "Hello again." {
		t.Fatalf("the conversation: %+v", msgs)
	}
}
