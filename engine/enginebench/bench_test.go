// Package enginebench measures the agents: how fast a decision wakes a
// waiting tool loop, and what a suspended agent costs in memory
// (docs/PERFORMANCE.md).
package enginebench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
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
	"github.com/brabo-dev/brabo/store/sqlite"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// stepper proposes `touch f<n>` (pending: nothing allows touch) on every
// turn until it has done n of them, then finishes; it records when each
// call arrives.
type stepper struct {
	n     int
	mu    sync.Mutex
	calls []time.Time
	next  chan struct{}
}

func (m *stepper) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	m.mu.Lock()
	m.calls = append(m.calls, time.Now())
	i := len(m.calls)
	m.mu.Unlock()
	select {
	case m.next <- struct{}{}:
	default:
	}
	if i > m.n {
		return &model.Response{Message: model.Message{Role: model.Assistant, Content: "done"}, StopReason: model.StopEnd}, nil
	}
	args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("touch f%d", i)})
	return &model.Response{StopReason: model.StopToolCalls, Message: model.Message{Role: model.Assistant,
		ToolCalls: []model.ToolCall{{ID: "c" + strconv.Itoa(i), Name: "terminal", Arguments: args}}}}, nil
}

func (m *stepper) callAt(i int) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < len(m.calls) {
		return m.calls[i], true
	}
	return time.Time{}, false
}

type world struct {
	store   brabo.Store
	svc     *pipeline.Service
	owner   *brabo.Member
	project *brabo.Project
}

func newWorld(b *testing.B) *world {
	ctx := context.Background()
	dir := b.TempDir()
	root := filepath.Join(dir, "shop")
	os.MkdirAll(root, 0o755)
	// The dev agent works in a git worktree: the project is a repository
	// with a commit.
	for _, args := range [][]string{{"init", "-q", "-b", "main"},
		{"-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "--allow-empty", "-m", "initial"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	s, err := sqlite.Open(ctx, filepath.Join(dir, "brabo.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	w := &world{store: s, owner: &brabo.Member{ID: "mem_owner", Name: "owner", TokenHash: "h"},
		project: &brabo.Project{ID: "prj_bench", Slug: "shop", Name: "shop", Mode: brabo.ModeLocal, Root: root, WorkspaceDir: "shop-bench", OwnerID: "mem_owner"}}
	w.svc = &pipeline.Service{Store: s, Executor: executor.New(executor.Options{}), WorkspacesRoot: dir, Log: quiet}
	if err := s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, w.owner); err != nil {
			return err
		}
		if err := tx.CreateProject(ctx, w.project); err != nil {
			return err
		}
		return tx.SetRole(ctx, brabo.Membership{ProjectID: w.project.ID, MemberID: w.owner.ID, Role: brabo.Owner})
	}); err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *world) agentWithTask(ctx context.Context, tx brabo.Tx, i int) (*brabo.Agent, error) {
	a := &brabo.Agent{ID: fmt.Sprintf("agt_%05d", i), ProjectID: w.project.ID, Name: fmt.Sprintf("dev-m%05d", i),
		PrincipalID: w.owner.ID, TokenHash: fmt.Sprintf("tok_%05d", i)}
	if err := tx.CreateAgent(ctx, a); err != nil {
		return nil, err
	}
	return a, tx.CreateTask(ctx, &brabo.Task{ID: fmt.Sprintf("task_%05d", i), ProjectID: w.project.ID, Title: "bench",
		Status: brabo.TaskTodo, CreatedAt: time.Now()})
}

// BenchmarkWakeLatency measures, over 1,000 approvals, the time from the
// approve call returning to the dev agent's tool loop calling its model
// again (DESIGN §7.3: the store signal, the wake worker, the mailbox,
// toolloop.Resume). One process, SQLite. Run with -benchtime=1x.
func BenchmarkWakeLatency(b *testing.B) {
	const approvals = 1000
	w := newWorld(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var agent *brabo.Agent
	if err := w.store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		agent, err = w.agentWithTask(ctx, tx, 1)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	m := &stepper{n: approvals, next: make(chan struct{}, 1)}
	mgr := &devagent.Manager{Store: w.store, Proposer: w.svc, Scoper: w.svc, Model: m, Log: quiet, MaxIterations: approvals + 10}
	worker := &wake.Worker{Store: w.store, Owner: "bench", Local: mgr, Resume: mgr, Log: quiet}
	go worker.Run(ctx)
	if err := mgr.Start(ctx, agent); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, approvals)
	b.ResetTimer()
	for i := 1; i <= approvals; i++ {
		// Wait until the i-th pending action exists and the agent waits.
		var pending *brabo.ProposedAction
		deadline := time.Now().Add(10 * time.Second)
		for pending == nil {
			if time.Now().After(deadline) {
				b.Fatalf("approval %d: the agent never suspended", i)
			}
			w.store.View(ctx, func(tx brabo.Tx) error {
				list, err := tx.Actions(ctx, brabo.ActionFilter{Status: brabo.StatusPending, Limit: 1})
				if len(list) == 1 {
					if _, err := tx.AwaitingRun(ctx, brabo.AgentKey(agent.ID), list[0].ID); err == nil {
						pending = list[0]
					}
				}
				return err
			})
			if pending == nil {
				time.Sleep(200 * time.Microsecond)
			}
		}
		if _, err := w.svc.Approve(ctx, pending.ID, w.owner); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		for {
			if at, ok := m.callAt(i); ok {
				lat = append(lat, at.Sub(t0))
				break
			}
			select {
			case <-m.next:
			case <-time.After(10 * time.Second):
				b.Fatalf("approval %d: the loop never resumed", i)
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	b.ReportMetric(float64(p(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkSuspendedAgentsMemory restores 10,000 dev agents whose runs
// wait for approval, each holding a realistic suspended conversation, and
// reports the process's resident memory and Go heap with all of them
// live. Run with -benchtime=1x.
func BenchmarkSuspendedAgentsMemory(b *testing.B) {
	agents := 10000
	if n, err := strconv.Atoi(os.Getenv("BRABO_BENCH_AGENTS")); err == nil && n > 0 {
		agents = n
	}
	w := newWorld(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A suspended conversation: the task, a listing, a file read, the
	// pending call.
	convo := []model.Message{
		{Role: model.User, Content: "Add a CHANGELOG and keep the tests green."},
		{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "terminal", Arguments: json.RawMessage(`{"command":"ls"}`)}}},
		{Role: model.ToolResult, ToolCallID: "c1", ToolName: "terminal", Content: "exit code: 0\noutput:\nMakefile\nREADME.md\nsrc\n"},
		{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "c2", Name: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`)}}},
		{Role: model.ToolResult, ToolCallID: "c2", ToolName: "read_file", Content: strings.Repeat("A line of the project's README.\n", 40)},
		{Role: model.Assistant, ToolCalls: []model.ToolCall{{ID: "c3", Name: "terminal", Arguments: json.RawMessage(`{"command":"touch CHANGELOG.md"}`)}}},
	}
	for start := 0; start < agents; start += 500 {
		end := min(start+500, agents)
		if err := w.store.Update(ctx, func(tx brabo.Tx) error {
			for i := start; i < end; i++ {
				a, err := w.agentWithTask(ctx, tx, i)
				if err != nil {
					return err
				}
				if _, err := tx.ClaimTask(ctx, fmt.Sprintf("task_%05d", i), a.ID, time.Now()); err != nil {
					return err
				}
				// The folder of the agent's worktree, so that restoring it
				// finds it there and leaves it (a missing one would be made
				// again with git: not what this measures).
				if err := os.MkdirAll(filepath.Join(w.project.Root, filepath.FromSlash(devagent.WorktreeRel(a.ID))), 0o755); err != nil {
					return err
				}
				actionID := fmt.Sprintf("act_%05d", i)
				ctxJSON := suspendedCtx(convo, actionID)
				if err := tx.SaveRun(ctx, &brabo.Run{ID: fmt.Sprintf("run_%05d", i), ProjectID: w.project.ID,
					ActorKey: brabo.AgentKey(a.ID), TaskID: fmt.Sprintf("task_%05d", i), State: brabo.RunAwaitingApproval,
					AwaitingActionID: actionID, Ctx: ctxJSON, UpdatedAt: time.Now()}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	debug.FreeOSMemory()
	rssBefore := rss(b)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	mgr := &devagent.Manager{Store: w.store, Proposer: w.svc, Scoper: w.svc, Model: &stepper{next: make(chan struct{}, 1)},
		Log: quiet, IdlePoll: time.Hour, WaitCap: 24 * time.Hour}
	b.ResetTimer()
	if err := mgr.Restore(ctx); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for live := 0; live < agents; {
		live = 0
		for i := 0; i < agents; i++ {
			if mgr.Live(fmt.Sprintf("agt_%05d", i)) {
				live++
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d agents restored", live, agents)
		}
		if live < agents {
			time.Sleep(100 * time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond) // let every actor settle into its wait
	b.StopTimer()
	// What a long-running server holds: collected twice (stacks grown
	// during the restore shrink on a later cycle) and the freed pages
	// given back, as the runtime's scavenger does over time.
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rssAfter := rss(b)
	if path := os.Getenv("BRABO_BENCH_HEAPPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	b.ReportMetric(float64(rssAfter)/(1<<20), "rss-MB")
	b.ReportMetric(float64(rssAfter-rssBefore)/(1<<20), "rss-added-MB")
	b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
	cancel()
	mgr.Wait()
}

// suspendedCtx is a toolloop Ctx suspended on the last tool call of convo.
func suspendedCtx(convo []model.Message, actionID string) json.RawMessage {
	c := toolloop.Ctx{Version: toolloop.CtxVersion, Messages: convo, Iterations: 3,
		PendingToolCallID: "c3", PendingToolName: "terminal", AwaitingActionID: actionID}
	raw, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return raw
}

// rss is the process's resident set size, from /proc/self/status.
func rss(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status here")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
