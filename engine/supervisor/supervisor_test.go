package supervisor_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devlead"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"github.com/brabo-dev/brabo/engine/supervisor"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// waiter asks for something nobody allows on its first call: a dev agent
// proposes a terminal command, the dev lead its plan.
type waiter struct{}

func (waiter) Complete(_ context.Context, req model.Request) (*model.Response, error) {
	call := model.ToolCall{ID: "c1", Name: "terminal", Arguments: json.RawMessage(`{"command":"touch nobody-decides.txt"}`)}
	if strings.Contains(req.System, "dev lead") {
		call = model.ToolCall{ID: "c1", Name: "propose_execution_plan", Arguments: json.RawMessage(`{"plan":"p","agents":{"api":1}}`)}
	}
	return &model.Response{StopReason: model.StopToolCalls, Message: model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{call}}}, nil
}

// One supervisor enforces the wait cap on a dev agent and a dev-lead turn
// alike, through its sweep on the store: the project's own cap counts, and
// each blocks with origin policy naming the action nobody decided.
func TestTheSupervisorsSweepCapsEveryKindOfWait(t *testing.T) {
	ctx := context.Background()
	s := enginetest.Store(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "initial"}} {
		enginetest.Git(t, root, args...)
	}
	owner, p := enginetest.Project(t, s, root)
	ex := executor.New(executor.Options{})
	for typ, r := range supervisor.Runners(s) {
		ex.Register(typ, r)
	}
	svc := &pipeline.Service{Store: s, Executor: ex, WorkspacesRoot: t.TempDir(), Log: quiet}
	now := time.Now().UTC()
	dev := &brabo.Agent{ID: brabo.NewID("agt"), ProjectID: p.ID, Name: "dev-api", PrincipalID: owner.ID, TokenHash: "h1", CreatedAt: now}
	lead := &brabo.Agent{ID: brabo.NewID("agt"), ProjectID: p.ID, Name: brabo.DevLeadName, PrincipalID: owner.ID, TokenHash: "h2", CreatedAt: now}
	task := &brabo.Task{ID: brabo.NewID("tsk"), ProjectID: p.ID, Title: "t", Status: brabo.TaskTodo, CreatedAt: now}
	if err := s.Update(ctx, func(tx brabo.Tx) error {
		for _, a := range []*brabo.Agent{dev, lead} {
			if err := tx.CreateAgent(ctx, a); err != nil {
				return err
			}
		}
		if err := tx.SetProjectAgents(ctx, p.ID, 3, 3600); err != nil { // the project's own cap: an hour
			return err
		}
		return tx.CreateTask(ctx, task)
	}); err != nil {
		t.Fatal(err)
	}
	c := enginetest.NewClock()
	sup := &supervisor.Supervisor{Store: s, Pipeline: svc, Model: waiter{}, SoleOwner: true, WaitCap: 24 * time.Hour,
		Sweep: time.Hour, Now: c.Now, Log: quiet}
	sctx, cancel := context.WithCancel(ctx)
	if err := sup.Start(sctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); sup.Wait() })
	turn, err := sup.Conversations().Post(ctx, p.ID, "Plan it.")
	if err != nil || turn.Status != brabo.TurnAwaitingApproval {
		t.Fatalf("the lead's turn: %+v, %v", turn, err)
	}
	enginetest.WaitFor(t, "the dev agent to wait", func() bool { return sup.Manager().Waits(dev.ID) })

	c.Advance(59 * time.Minute)
	if n, err := sup.Sweeper().Once(ctx); err != nil || n != 0 {
		t.Fatalf("the sweep before the project's cap: %d, %v", n, err)
	}
	c.Advance(2 * time.Minute)
	if n, err := sup.Sweeper().Once(ctx); err != nil || n != 2 {
		t.Fatalf("the sweep past the project's cap: %d, %v", n, err)
	}
	got := enginetest.Task(t, s, task.ID)
	if got.Status != brabo.TaskBlocked || got.BlockedOrigin != brabo.OriginPolicy ||
		!strings.Contains(got.BlockedReason, "(terminal: touch nobody-decides.txt) within the wait cap of 1h0m0s") {
		t.Fatalf("the dev agent's task: %+v", got)
	}
	var blocked bool
	for _, e := range enginetest.Events(t, s, p.ID, devlead.EventAgentStatus) {
		if strings.Contains(string(e.Payload), `"status":"blocked"`) && strings.Contains(string(e.Payload), turn.ActionID) &&
			strings.Contains(string(e.Payload), `"origin":"policy"`) {
			blocked = true
		}
	}
	if !blocked {
		t.Fatalf("no agent.status blocked for the lead's turn: %v", enginetest.Events(t, s, p.ID, devlead.EventAgentStatus))
	}
	enginetest.WaitFor(t, "the dev agent's actor to leave its wait", func() bool { return !sup.Manager().Waits(dev.ID) })
}
