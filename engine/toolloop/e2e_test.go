package toolloop_test

// The ADR 0052 scenario on the real pipeline: SQLite on a file, the real
// executor, a local project folder with a permissions.json, and the
// scripted model.

import (
	"context"
	"encoding/json"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/model/scripted"
	"github.com/brabo-dev/brabo/pipeline"
)

// recorder keeps what the model was sent.
type recorder = enginetest.Recorder

// lastToolResult is the content of the last tool result of a request.
func lastToolResult(t *testing.T, req model.Request) model.Message {
	t.Helper()
	res := toolResults(req)
	if len(res) == 0 {
		t.Fatal("the request has no tool result")
	}
	return res[len(res)-1]
}

type world struct {
	store brabo.Store
	svc   *pipeline.Service
	root  string
	owner *brabo.Member
	prj   *brabo.Project
	agent *brabo.Agent
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	s := enginetest.Store(t)
	root := t.TempDir()
	perms := `{"allow":["Terminal(ls)","Terminal(echo)"],"deny":["Terminal(curl)"]}`
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(perms), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	w := &world{store: s, root: root,
		svc: &pipeline.Service{Store: s, Executor: executor.New(executor.Options{}), WorkspacesRoot: t.TempDir(),
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	w.owner, w.prj = enginetest.Project(t, s, root)
	w.agent = &brabo.Agent{ID: brabo.NewID("agt"), ProjectID: w.prj.ID, Name: "coder", PrincipalID: w.owner.ID,
		TokenHash: brabo.NewID("h"), CreatedAt: now}
	err := s.Update(ctx, func(tx brabo.Tx) error {
		return tx.CreateAgent(ctx, w.agent)
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// settledFromOutbox reads the task.action_settled message the pipeline
// queued for the agent about the action: what the wake worker delivers.
func (w *world) settledFromOutbox(t *testing.T, actionID string) brabo.Settled {
	t.Helper()
	ctx := context.Background()
	var msgs []brabo.OutboxMessage
	err := w.store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		msgs, err = tx.ClaimOutbox(ctx, time.Now().UTC(), time.Minute, 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Topic == brabo.TopicActionSettled && m.ActionID == actionID {
			if m.ActorKey != "agent:"+w.agent.ID {
				t.Errorf("the settled event is keyed %q, not by the proposing agent", m.ActorKey)
			}
			var s brabo.Settled
			if err := json.Unmarshal(m.Payload, &s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatalf("no task.action_settled for %s in the outbox (%d messages)", actionID, len(msgs))
	return brabo.Settled{}
}

func (w *world) loop(t *testing.T, script string) (*toolloop.Loop, *recorder) {
	t.Helper()
	m, err := scripted.ParseNamed(t.Name(), []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Inner: m}
	return &toolloop.Loop{Model: rec, Proposer: w.svc, ProjectID: w.prj.ID, Actor: pipeline.Actor{Agent: w.agent},
		System: "You are a dev agent.", Tools: toolloop.StandardTools(), MaxIterations: 8,
		// One failure would halt: denials must not count.
		FailureBreaker: 1}, rec
}

const adrScript = `{"turns": [
  {"content": "Looking around.", "toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "ls"}}]},
  {"expectToolResult": "README.md",
   "toolCalls": [{"id": "c2", "name": "terminal", "arguments": {"command": "touch made.txt && echo made-it"}},
                 {"id": "c3", "name": "terminal", "arguments": {"command": "echo queued-after"}}]},
  {"expectToolResult": "queued-after",
   "toolCalls": [{"id": "c4", "name": "terminal", "arguments": {"command": "curl http://example.com"}},
                 {"id": "c5", "name": "terminal", "arguments": {"command": "touch other.txt"}}]},
  {"expectToolResult": "denied by a human: use made.txt", "content": "Done: made.txt exists."}
]}`

func TestADR0052PendingSuspendsAndResumesOnTheRealPipeline(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	loop, rec := w.loop(t, adrScript)

	// ls is allowed: it runs at once and its real output reaches the model;
	// touch needs approval: the loop stops after two model calls.
	out := toolloop.Run(ctx, loop, "create made.txt")
	aw := mustAwait(t, out)
	if aw.Ctx.Iterations != 2 || rec.Calls() != 2 {
		t.Fatalf("suspended after %d iterations and %d model calls; want 2", aw.Ctx.Iterations, rec.Calls())
	}
	first := lastToolResult(t, rec.Last(t))
	if first.ToolCallID != "c1" || !strings.Contains(first.Content, "README.md") || !strings.Contains(first.Content, "exit code: 0") {
		t.Fatalf("the model read %+v for ls", first)
	}
	if aw.ToolCallID != "c2" || aw.ToolName != "terminal" {
		t.Fatalf("awaiting = %+v", aw)
	}
	noPending(t, aw.Ctx.Messages)
	var pending *brabo.ProposedAction
	w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		pending, err = tx.Action(ctx, aw.ActionID)
		return err
	})
	if pending == nil || pending.Status != brabo.StatusPending || pending.Payload.Command != "touch made.txt && echo made-it" {
		t.Fatalf("the awaited action is %+v", pending)
	}
	if _, err := os.Stat(filepath.Join(w.root, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("made.txt exists before the approval: %v", err)
	}

	// The Ctx is stored while the agent waits; resume from the stored copy
	// with a fresh loop, as after a restart.
	raw, err := json.Marshal(aw.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stored toolloop.Ctx
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	loop, rec = w.loop(t, adrScript)

	d, err := w.svc.Approve(ctx, aw.ActionID, w.owner, w.svc.RevisionNow(ctx, aw.ActionID))
	if err != nil || d.Action.Status != brabo.StatusExecuted {
		t.Fatalf("approve: %+v, %v", d, err)
	}
	settled := w.settledFromOutbox(t, aw.ActionID)
	if settled.Status != brabo.StatusExecuted || settled.Result == nil {
		t.Fatalf("settled = %+v", settled)
	}
	out = toolloop.Resume(ctx, loop, stored, settled)
	aw2 := mustAwait(t, out)
	if _, err := os.Stat(filepath.Join(w.root, "made.txt")); err != nil {
		t.Fatalf("made.txt after the approval: %v", err)
	}
	req := rec.Last(t) // the first model call after resuming
	res := toolResults(req)
	if len(res) != 3 || res[1].ToolCallID != "c2" || !strings.Contains(res[1].Content, "made-it") || res[1].IsError ||
		res[2].ToolCallID != "c3" || !strings.Contains(res[2].Content, "queued-after") {
		t.Fatalf("after the approval the model read %+v", res)
	}
	noPending(t, req.Messages)

	// curl is denied by the file at proposal; touch other.txt waits; a
	// human denies it. Neither denial trips the breaker (FailureBreaker 1).
	if aw2.ToolCallID != "c5" || aw2.Ctx.Iterations != 3 {
		t.Fatalf("second suspension = %+v at %d iterations", aw2, aw2.Ctx.Iterations)
	}
	denied := aw2.Ctx.Messages[len(aw2.Ctx.Messages)-1]
	if denied.ToolCallID != "c4" || !denied.IsError || !strings.Contains(denied.Content, "denied by policy: permissions.json deny: Terminal(curl)") {
		t.Fatalf("the policy denial reads %+v", denied)
	}
	if _, err := w.svc.Deny(ctx, aw2.ActionID, w.owner, "use made.txt"); err != nil {
		t.Fatal(err)
	}
	settled2 := w.settledFromOutbox(t, aw2.ActionID)
	done := mustDone(t, toolloop.Resume(ctx, loop, aw2.Ctx, settled2))
	if done.Final != "Done: made.txt exists." || done.Ctx.Iterations != 4 || done.Ctx.ConsecutiveFailures != 0 {
		t.Fatalf("done = %q after %d iterations, %d failures", done.Final, done.Ctx.Iterations, done.Ctx.ConsecutiveFailures)
	}
	last := lastToolResult(t, rec.Last(t))
	if last.ToolCallID != "c5" || last.Content != "denied by a human: use made.txt" || !last.IsError {
		t.Fatalf("the human denial reads %+v", last)
	}
	if _, err := os.Stat(filepath.Join(w.root, "other.txt")); !os.IsNotExist(err) {
		t.Fatalf("other.txt exists after a denial: %v", err)
	}
	for _, r := range rec.Requests() {
		noPending(t, r.Messages)
	}

	// The first event delivered again (at least once) is refused.
	h := mustHalt(t, toolloop.Resume(ctx, loop, done.Ctx, settled), toolloop.OriginInfra)
	if !h.Refused || !strings.Contains(h.Why, aw.ActionID) {
		t.Fatalf("duplicate delivery = %+v", h)
	}
}
