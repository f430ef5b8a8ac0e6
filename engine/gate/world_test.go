package gate_test

// The world the gate's tests run in: the real pipeline on SQLite on a file,
// the real executor, a local project folder that is a git repository whose
// permissions.json allows ls, echo, cat, grep and pwd (touch asks), with
// the task's branch brabo/<task id> holding the dev's work (feature.txt),
// the two QA sub-agents as agents of the project, a scripted model per
// sub-agent behind a recorder, and the wake worker.

import (
	"context"
	"encoding/json"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/gate"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/sqlite"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// recorder keeps what the model was sent.
type recorder = enginetest.Recorder

func newRecorder(t *testing.T, name, script string) *recorder {
	t.Helper()
	return enginetest.Scripted(t, t.Name()+"/"+name, script)
}

// toolResult finds the result of a tool call in a request.
func toolResult(req model.Request, callID string) (model.Message, bool) {
	for _, m := range req.Messages {
		if m.Role == model.ToolResult && m.ToolCallID == callID {
			return m, true
		}
	}
	return model.Message{}, false
}

type world struct {
	path  string
	store *sqlite.Store
	svc   *pipeline.Service
	ws    string
	root  string
	owner *brabo.Member
	prj   *brabo.Project
	auto  *brabo.Agent // qa-automation
	perf  *brabo.Agent // qa-performance-security
	task  *brabo.Task
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{path: filepath.Join(t.TempDir(), "brabo.db"), root: t.TempDir(), ws: t.TempDir()}
	w.open(t)
	perms := `{"allow":["Terminal(ls)","Terminal(echo)","Terminal(cat)","Terminal(grep)","Terminal(pwd)"]}`
	if err := os.WriteFile(filepath.Join(w.root, "permissions.json"), []byte(perms), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.root, "README.md"), []byte("# shop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	w.owner, w.prj = enginetest.Project(t, w.store, w.root)
	agent := func(name string) *brabo.Agent {
		return &brabo.Agent{ID: brabo.NewID("agt"), ProjectID: w.prj.ID, Name: name, PrincipalID: w.owner.ID,
			TokenHash: brabo.NewID("h"), CreatedAt: now}
	}
	w.auto, w.perf = agent(gate.QAAutomation), agent(gate.QAPerformanceSecurity)
	w.task = &brabo.Task{ID: brabo.NewID("tsk"), ProjectID: w.prj.ID, Title: "Checkout page",
		Description: "The dev finished the checkout page.", Status: brabo.TaskInProgress, CreatedAt: now}
	err := w.store.Update(ctx, func(tx brabo.Tx) error {
		for _, a := range []*brabo.Agent{w.auto, w.perf} {
			if err := tx.CreateAgent(ctx, a); err != nil {
				return err
			}
		}
		return tx.CreateTask(ctx, w.task)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The project is a git repository; the task's dev committed its work
	// on the task's branch, and (its PR opened) no longer holds a worktree.
	gitIn(t, w.root, "init", "--quiet", "--initial-branch=main", ".")
	gitIn(t, w.root, "add", "-A")
	gitIn(t, w.root, "commit", "--quiet", "-m", "initial")
	w.commitOnBranch(t, "feature.txt", "the checkout page\n")
	return w
}

// commitOnBranch commits a file on the task's branch, as its dev would,
// without touching the main checkout.
func (w *world) commitOnBranch(t *testing.T, name, content string) {
	t.Helper()
	branch := devagent.TaskBranch(w.task.ID)
	tmp := filepath.Join(t.TempDir(), "dev")
	if gitInOK(w.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) {
		gitIn(t, w.root, "worktree", "add", "--quiet", tmp, branch)
	} else {
		gitIn(t, w.root, "worktree", "add", "--quiet", "-b", branch, tmp, "main")
	}
	if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, tmp, "add", name)
	gitIn(t, tmp, "commit", "--quiet", "-m", "dev: "+name)
	gitIn(t, w.root, "worktree", "remove", "--force", tmp)
}

// gateDir is the gate's own worktree of the task.
func (w *world) gateDir() string {
	return filepath.Join(w.root, filepath.FromSlash(gate.WorktreeRel(w.task.ID)))
}

// gitIn runs git in dir (enginetest.Git).
func gitIn(t testing.TB, dir string, args ...string) string { return enginetest.Git(t, dir, args...) }

func gitInOK(dir string, args ...string) bool {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	return cmd.Run() == nil
}

// open opens (or reopens, after a "restart") the store on the world's file
// and a pipeline on it.
func (w *world) open(t *testing.T) {
	t.Helper()
	s, err := sqlite.Open(context.Background(), w.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w.store = s
	w.svc = &pipeline.Service{Store: s, Executor: executor.New(executor.Options{}), WorkspacesRoot: w.ws, Log: quiet}
}

func (w *world) lead(auto, perf model.Model) *gate.Lead {
	return &gate.Lead{Store: w.store, Proposer: w.svc, Scoper: w.svc, ProjectID: w.prj.ID, MaxIterations: 6, Log: quiet,
		Models: map[string]model.Model{gate.QAAutomation: auto, gate.QAPerformanceSecurity: perf}}
}

// run starts fn until the returned stop (enginetest.Go).
func run(t *testing.T, fn func(ctx context.Context)) (stop func()) { return enginetest.Go(t, fn) }

// startWake runs a wake worker that delivers to the lead (Local too when
// local is true) and, when local, the lead's mailbox; stop ends both.
func (w *world) startWake(t *testing.T, l *gate.Lead, local bool) (stop func()) {
	t.Helper()
	wk := &wake.Worker{Store: w.store, Owner: brabo.NewID("proc"), Resume: l, Poll: 10 * time.Millisecond, Log: quiet}
	stopLead := func() {}
	if local {
		wk.Local = l
		ctx, cancel := context.WithCancel(context.Background())
		l.Start(ctx)
		stopLead = func() { cancel(); l.Wait() }
	}
	stopWake := run(t, func(ctx context.Context) { wk.Run(ctx) })
	stop = func() { stopWake(); stopLead() }
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	enginetest.WaitFor(t, what, cond)
}

func (w *world) getTask(t *testing.T) *brabo.Task { return enginetest.Task(t, w.store, w.task.ID) }

func (w *world) getRun(t *testing.T, id string) *brabo.Run { return enginetest.Run(t, w.store, id) }

// awaitingRun is what the wake worker finds for a key and an action.
func (w *world) awaitingRun(t *testing.T, key, actionID string) (*brabo.Run, error) {
	t.Helper()
	ctx := context.Background()
	var r *brabo.Run
	err := w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		r, err = tx.AwaitingRun(ctx, key, actionID)
		return err
	})
	return r, err
}

func (w *world) action(t *testing.T, id string) *brabo.ProposedAction {
	return enginetest.Action(t, w.store, id)
}

func (w *world) events(t *testing.T, typ string) []brabo.Event {
	return enginetest.Events(t, w.store, w.prj.ID, typ)
}

func payload(t *testing.T, e brabo.Event) map[string]any {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// completedVerdicts waits for gate.completed and returns its verdicts.
func (w *world) completedVerdicts(t *testing.T) ([]gate.Verdict, brabo.Event) {
	t.Helper()
	waitFor(t, "gate.completed", func() bool {
		if len(w.events(t, gate.EventDelegationFailed)) > 0 {
			t.Fatalf("a delegation failed: %s", w.events(t, gate.EventDelegationFailed)[0].Payload)
		}
		return len(w.events(t, gate.EventGateCompleted)) > 0
	})
	evs := w.events(t, gate.EventGateCompleted)
	if len(evs) != 1 {
		t.Fatalf("%d gate.completed events; want 1", len(evs))
	}
	var p struct {
		Verdicts []gate.Verdict `json:"verdicts"`
	}
	if err := json.Unmarshal(evs[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p.Verdicts, evs[0]
}

// exists reports whether name exists in the project folder (the main
// checkout); existsInGate, in the gate's worktree of the task.
func (w *world) exists(name string) bool {
	_, err := os.Stat(filepath.Join(w.root, name))
	return err == nil
}

func (w *world) existsInGate(name string) bool {
	_, err := os.Stat(filepath.Join(w.gateDir(), name))
	return err == nil
}

func must(t *testing.T, ok bool, format string, a ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, a...)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// offers says whether a model request's tools include the one named.
func offers(tools []model.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// gateRemoved checks that the gate's worktree of the task is gone and the
// task's branch stays.
func (w *world) gateRemoved(t *testing.T) {
	t.Helper()
	// git removes the folder before its own record of the worktree: wait
	// for both.
	waitFor(t, "the gate's worktree to go, from the disk and from git's list", func() bool {
		_, err := os.Stat(w.gateDir())
		return os.IsNotExist(err) && !strings.Contains(gitIn(t, w.root, "worktree", "list"), "gate-")
	})
	gitIn(t, w.root, "rev-parse", "--verify", "refs/heads/"+devagent.TaskBranch(w.task.ID))
}
