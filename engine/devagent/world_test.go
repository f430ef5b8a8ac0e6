package devagent_test

// The world the dev agent's tests run in: the real pipeline on SQLite on a
// file, the real executor, a local project folder with a permissions.json
// (ls, echo and cat allowed; touch asks), the scripted model behind a
// recorder, a fake clock for the wait cap, and the wake worker.

import (
	"context"
	"encoding/json"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeClock is a Clock whose time moves only when the test says so.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Now().UTC()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.ch <- c.now
		} else {
			keep = append(keep, t)
		}
	}
	c.timers = keep
}

// recorder keeps what the model was sent.
type recorder = enginetest.Recorder

func newRecorder(t *testing.T, script string) *recorder {
	t.Helper()
	return enginetest.Scripted(t, t.Name(), script)
}

// toolResult finds the result of a tool call in a request.
func toolResult(req model.Request, callID string) (model.Message, bool) {
	i := slices.IndexFunc(req.Messages, func(m model.Message) bool { return m.Role == model.ToolResult && m.ToolCallID == callID })
	if i < 0 {
		return model.Message{}, false
	}
	return req.Messages[i], true
}

type world struct {
	store brabo.Store
	svc   *pipeline.Service
	root  string
	owner *brabo.Member
	prj   *brabo.Project
	agent *brabo.Agent
	task  *brabo.Task
	clock *fakeClock
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOn(t, enginetest.Store(t))
}

// newWorldOn is newWorld on the store s.
func newWorldOn(t *testing.T, s brabo.Store) *world {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	perms := `{"allow":["Terminal(ls)","Terminal(echo)","Terminal(cat)"]}`
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(perms), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The dev agent works in a git worktree of the project: the project is
	// a repository with a commit on main.
	gitIn(t, root, "init", "--quiet", "--initial-branch=main", ".")
	gitIn(t, root, "config", "user.name", "Test")
	gitIn(t, root, "config", "user.email", "test@example.com")
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "--quiet", "-m", "initial")
	now := time.Now().UTC()
	w := &world{store: s, root: root, clock: newClock(),
		svc: &pipeline.Service{Store: s, Executor: executor.New(executor.Options{}), WorkspacesRoot: t.TempDir(), Log: quiet}}
	w.owner, w.prj = enginetest.Project(t, s, root)
	w.agent = w.newAgent(t, "coder", false)
	w.task = &brabo.Task{ID: brabo.NewID("tsk"), ProjectID: w.prj.ID, Title: "Create made.txt",
		Description: "An empty file at the top of the project.", Status: brabo.TaskTodo, CreatedAt: now}
	err := s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateAgent(ctx, w.agent); err != nil {
			return err
		}
		return tx.CreateTask(ctx, w.task)
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// newAgent makes an agent of the project, stored when store is true.
func (w *world) newAgent(t *testing.T, name string, store bool) *brabo.Agent {
	t.Helper()
	a := &brabo.Agent{ID: brabo.NewID("agt"), ProjectID: w.prj.ID, Name: name, PrincipalID: w.owner.ID,
		TokenHash: brabo.NewID("h"), CreatedAt: time.Now().UTC()}
	if store {
		ctx := context.Background()
		if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateAgent(ctx, a) }); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func (w *world) manager(m model.Model, waitCap time.Duration) *devagent.Manager {
	return &devagent.Manager{Store: w.store, Proposer: w.svc, Scoper: w.svc, Model: m, System: "You are a dev agent.",
		MaxIterations: 8, WaitCap: waitCap, Clock: w.clock, IdlePoll: 20 * time.Millisecond, Log: quiet}
}

// sweep runs the store's sweep of wait caps once, on the world's clock,
// with mgr expiring the dev agents' runs; it returns how many it expired.
func (w *world) sweep(t *testing.T, mgr *devagent.Manager) int {
	t.Helper()
	n, err := (&wake.Sweeper{Store: w.store, Expire: mgr, Now: w.clock.Now, Log: quiet}).Once(context.Background())
	if err != nil {
		t.Fatalf("the sweep: %v", err)
	}
	return n
}

// worker is a wake worker on the world's store that delivers to mgr.
func (w *world) worker(mgr *devagent.Manager) *wake.Worker {
	return &wake.Worker{Store: w.store, Owner: brabo.NewID("proc"), Local: mgr, Resume: mgr,
		Poll: 10 * time.Millisecond, Log: quiet}
}

// run starts fn until the returned stop (enginetest.Go).
func run(t *testing.T, fn func(ctx context.Context)) (stop func()) { return enginetest.Go(t, fn) }

// startAgent starts mgr's actor for the world's agent and a wake worker;
// stop ends both and waits for them.
func (w *world) startAgent(t *testing.T, mgr *devagent.Manager) (stop func()) {
	t.Helper()
	stopWake := run(t, func(ctx context.Context) { w.worker(mgr).Run(ctx) })
	ctx, cancel := context.WithCancel(context.Background())
	if err := mgr.Start(ctx, w.agent); err != nil {
		t.Fatal(err)
	}
	stop = func() { cancel(); mgr.Wait(); stopWake() }
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	enginetest.WaitFor(t, what, cond)
}

func (w *world) getTask(t *testing.T) *brabo.Task { return enginetest.Task(t, w.store, w.task.ID) }

// agentRun is the latest run of the world's agent, nil for none.
func (w *world) agentRun(t *testing.T) *brabo.Run {
	t.Helper()
	ctx := context.Background()
	var latest *brabo.Run
	err := w.store.View(ctx, func(tx brabo.Tx) error {
		for _, st := range []brabo.RunState{brabo.RunWorking, brabo.RunAwaitingApproval, brabo.RunAwaitingPR, brabo.RunDone, brabo.RunBlocked} {
			runs, err := tx.RunsInState(ctx, st)
			if err != nil {
				return err
			}
			for _, r := range runs {
				if r.ActorKey == brabo.AgentKey(w.agent.ID) && (latest == nil || r.UpdatedAt.After(latest.UpdatedAt)) {
					latest = r
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return latest
}

// awaiting waits until the agent's run awaits an action and returns it.
func (w *world) awaiting(t *testing.T) *brabo.Run {
	t.Helper()
	var r *brabo.Run
	waitFor(t, "the run to await approval", func() bool {
		r = w.agentRun(t)
		if r != nil && r.State == brabo.RunBlocked {
			t.Fatalf("the run blocked instead of waiting: %+v", w.getTask(t))
		}
		return r != nil && r.State == brabo.RunAwaitingApproval
	})
	return r
}

func (w *world) taskIn(t *testing.T, status brabo.TaskStatus) *brabo.Task {
	t.Helper()
	var task *brabo.Task
	waitFor(t, "the task to be "+string(status), func() bool {
		task = w.getTask(t)
		return task.Status == status
	})
	return task
}

func (w *world) action(t *testing.T, id string) *brabo.ProposedAction {
	return enginetest.Action(t, w.store, id)
}

func (w *world) events(t *testing.T, typ string) []brabo.Event {
	return enginetest.Events(t, w.store, w.prj.ID, typ)
}

func storedCtx(t *testing.T, r *brabo.Run) toolloop.Ctx {
	t.Helper()
	var c toolloop.Ctx
	if err := json.Unmarshal(r.Ctx, &c); err != nil {
		t.Fatalf("the stored Ctx: %v", err)
	}
	return c
}

func (w *world) approve(t *testing.T, actionID string) {
	t.Helper()
	d, err := w.svc.Approve(context.Background(), actionID, w.owner, w.svc.RevisionNow(context.Background(), actionID))
	if err != nil || d.Action.Status != brabo.StatusExecuted {
		t.Fatalf("approve: %+v, %v", d, err)
	}
}

// exists reports whether the file is in the world's agent's worktree.
func (w *world) exists(name string) bool {
	_, err := os.Stat(filepath.Join(w.worktree(w.agent), name))
	return err == nil
}

// worktree is the agent's worktree, absolute.
func (w *world) worktree(a *brabo.Agent) string {
	return filepath.Join(w.root, filepath.FromSlash(devagent.WorktreeRel(a.ID)))
}

// gitIn runs git in dir (enginetest.Git).
func gitIn(t testing.TB, dir string, args ...string) string { return enginetest.Git(t, dir, args...) }

func (w *world) saveRun(t *testing.T, r *brabo.Run) {
	t.Helper()
	ctx := context.Background()
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, r) }); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, ok bool, format string, a ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, a...)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
