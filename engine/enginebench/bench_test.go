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
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
	"github.com/brabo-dev/brabo/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// stepper proposes `touch f<n>` (pending: nothing allows touch) on every
// turn of a conversation until the conversation has done n of them, then
// finishes; it records when each call arrives, in the order of all the
// conversations' calls.
type stepper struct {
	n     int
	mu    sync.Mutex
	calls []time.Time
	next  chan struct{}
}

func (m *stepper) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	m.mu.Lock()
	m.calls = append(m.calls, time.Now())
	m.mu.Unlock()
	select {
	case m.next <- struct{}{}:
	default:
	}
	i := 1
	for _, msg := range req.Messages {
		if msg.Role == model.Assistant {
			i++
		}
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
	dir := b.TempDir()
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "brabo.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return newWorldOn(b, s, dir)
}

// newWorldOn makes the project (a git repository with a commit, in dir)
// and its owner on the store s.
func newWorldOn(b *testing.B, s brabo.Store, dir string) *world {
	ctx := context.Background()
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

// Each wake benchmark runs 53 agents, one after the other, through 19
// approvals each: 1,007 decisions, on conversations of the length the
// tool loop allows by default (20 model calls), as a real agent's.
const (
	benchAgents    = 53
	benchApprovals = 19
)

// BenchmarkWakeLatency measures, over 1,007 approvals each, the time from
// the approve call returning to the dev agent's tool loop calling its
// model again (DESIGN §7.3), for the two ways a decision reaches an agent,
// in the same run: "live", where the waiting agent's actor is live (one
// of the MaxLive most recent waits) and gets the decision in its mailbox,
// and "parked", where the agent waits with no live actor (MaxLive
// negative: a row, not a goroutine) and the wake worker rehydrates it from
// the store. One process, SQLite. It reports both p99s and their ratio.
// Run with -benchtime=1x.
func BenchmarkWakeLatency(b *testing.B) {
	live, parked := newRig(b, newWorld(b), nil, 0), newRig(b, newWorld(b), nil, -1)
	defer live.stop()
	defer parked.stop()
	var latLive, latParked []time.Duration
	// One agent of each in turn, so that the machine's slow spells fall
	// on both alike.
	for k := 1; k <= benchAgents; k++ {
		latLive = append(latLive, live.agent(b, k)...)
		latParked = append(latParked, parked.agent(b, k)...)
	}
	slices.Sort(latLive)
	slices.Sort(latParked)
	report(b, "live", latLive)
	report(b, "parked", latParked)
	b.ReportMetric(float64(quantile(latParked, 0.99))/float64(quantile(latLive, 0.99)), "parked/live-p99")
}

// BenchmarkWakeLatencyTwoInstancesPostgres measures the same for agents
// with no live actor on PostgreSQL across two instances, as two brabo
// serve on one database: each instance has its own store (its own pool),
// pipeline, wake worker and dev agents' manager in lease mode; the agents
// run in the instance that holds their leases, and every decision is
// taken through the other instance's pipeline, so it reaches the agent by
// NOTIFY. Run with -benchtime=1x and BRABO_TEST_POSTGRES set.
func BenchmarkWakeLatencyTwoInstancesPostgres(b *testing.B) {
	url := storetest.PostgresURL(b)
	open := func() brabo.Store {
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	sa, sb := open(), open()
	w := newWorldOn(b, sa, b.TempDir())
	other := &pipeline.Service{Store: sb, Executor: executor.New(executor.Options{}), WorkspacesRoot: b.TempDir(), Log: quiet}
	r := newRig(b, w, &instanceB{store: sb, svc: other}, -1)
	defer r.stop()
	var lat []time.Duration
	for k := 1; k <= benchAgents; k++ {
		lat = append(lat, r.agent(b, k)...)
	}
	slices.Sort(lat)
	report(b, "parked", lat)
}

// instanceB is the second instance of the two-instance benchmark: the one
// the decisions are taken through, which runs a manager and a wake worker
// of its own.
type instanceB struct {
	store brabo.Store
	svc   *pipeline.Service
}

func report(b *testing.B, name string, lat []time.Duration) {
	b.ReportMetric(float64(quantile(lat, 0.50).Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(quantile(lat, 0.99).Microseconds())/1000, name+"-p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, name+"-max-ms")
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1))]
}

// rig is one instance set up for a wake benchmark: a manager with its
// MaxLive, its wake worker and, with two instances, the second one that
// the decisions are taken through.
type rig struct {
	w       *world
	mgr     *devagent.Manager
	m       *stepper
	decide  *pipeline.Service
	maxLive int
	two     bool
	call    int // the model calls so far, of every agent
	ctx     context.Context
	stop    func()
}

// newRig starts the rig's manager and workers; stop ends them.
func newRig(b *testing.B, w *world, two *instanceB, maxLive int) *rig {
	ctx, cancel := context.WithCancel(context.Background())
	m := &stepper{n: benchApprovals, next: make(chan struct{}, 1)}
	r := &rig{w: w, m: m, maxLive: maxLive, two: two != nil, decide: w.svc, ctx: ctx}
	r.mgr = &devagent.Manager{Store: w.store, Proposer: w.svc, Scoper: w.svc, Model: m, Log: quiet, MaxLive: maxLive,
		Scan: 50 * time.Millisecond}
	worker := &wake.Worker{Store: w.store, Owner: "bench-a", Local: r.mgr, Resume: r.mgr, Log: quiet}
	runs := []func(context.Context){func(ctx context.Context) { worker.Run(ctx) }}
	if two != nil {
		r.mgr.Owner = "bench-a"
		// B manages none of the bench's agents, so that A holds them all
		// (which one wins a new agent's lease is otherwise a race).
		mgrB := &devagent.Manager{Store: two.store, Proposer: two.svc, Scoper: two.svc, Model: m, Log: quiet,
			MaxLive: maxLive, Owner: "bench-b", Scan: 50 * time.Millisecond, Manages: func(*brabo.Agent) bool { return false }}
		workerB := &wake.Worker{Store: two.store, Owner: "bench-b", Local: mgrB, Resume: mgrB, Log: quiet}
		runs = append(runs, func(ctx context.Context) { r.mgr.Run(ctx) }, func(ctx context.Context) { mgrB.Run(ctx) },
			func(ctx context.Context) { workerB.Run(ctx) })
		r.decide = two.svc
	}
	var done []chan struct{}
	for _, run := range runs {
		c := make(chan struct{})
		done = append(done, c)
		go func() { defer close(c); run(ctx) }()
	}
	r.stop = func() {
		cancel()
		r.mgr.Wait()
		for _, c := range done {
			<-c
		}
	}
	return r
}

// agent runs the k-th agent through benchApprovals approvals and returns
// the latencies.
func (r *rig) agent(b *testing.B, k int) []time.Duration {
	ctx := context.Background()
	w := r.w
	var agent *brabo.Agent
	if err := w.store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		agent, err = w.agentWithTask(ctx, tx, k)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	if !r.two {
		if err := r.mgr.Start(r.ctx, agent); err != nil {
			b.Fatal(err)
		}
	} else {
		// Instance A takes the new agent's lease: it runs there, and the
		// decisions are taken in B.
		waitTrue(b, "instance A to hold the agent", func() bool { return r.mgr.Live(agent.ID) })
	}
	var lat []time.Duration
	r.call++ // the agent's first call
	for i := 1; i <= benchApprovals; i++ {
		// Wait until an agent waits on the i-th pending action of the
		// task (an idle agent started before may have taken it).
		var pending *brabo.ProposedAction
		waitTrue(b, fmt.Sprintf("agent %d to suspend on its action %d", k, i), func() bool {
			w.store.View(ctx, func(tx brabo.Tx) error {
				list, err := tx.Actions(ctx, brabo.ActionFilter{Status: brabo.StatusPending, Limit: 1})
				if len(list) == 1 {
					if _, err := tx.AwaitingRun(ctx, brabo.AgentKey(list[0].ActorID), list[0].ID); err == nil {
						pending = list[0]
					}
				}
				return err
			})
			return pending != nil
		})
		if r.maxLive < 0 {
			// The agent waits as a row: no goroutine holds it.
			waitTrue(b, "the waiting actor to park", func() bool { return !r.mgr.Running(pending.ActorID) })
		}
		if _, err := r.decide.Approve(ctx, pending.ID, w.owner, r.decide.RevisionNow(ctx, pending.ID)); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		for {
			if at, ok := r.m.callAt(r.call); ok {
				lat = append(lat, at.Sub(t0))
				break
			}
			select {
			case <-r.m.next:
			case <-time.After(20 * time.Second):
				b.Fatalf("agent %d, approval %d: the loop never resumed", k, i)
			}
		}
		r.call++
	}
	waitTrue(b, "the agent's task to be done", func() bool {
		var t *brabo.Task
		w.store.View(ctx, func(tx brabo.Tx) error {
			var err error
			t, err = tx.Task(ctx, fmt.Sprintf("task_%05d", k))
			return err
		})
		return t != nil && t.Status == brabo.TaskDone
	})
	return lat
}

// waitTrue waits, polling, until cond holds, for at most 20 seconds.
func waitTrue(b *testing.B, what string, cond func() bool) {
	for t0 := time.Now(); !cond(); time.Sleep(200 * time.Microsecond) {
		if time.Since(t0) > 20*time.Second {
			b.Fatalf("timed out waiting for %s", what)
		}
	}
}

// BenchmarkSuspendedAgentsMemory restores 100,000 dev agents whose runs
// wait for approval, each holding a realistic suspended conversation in
// the store, and reports the process's resident memory and Go heap with
// all of them restored (Live: a decision on any of them resumes it; see
// BenchmarkWakeLatency's "parked"). BRABO_BENCH_AGENTS sets another
// number. Run with -benchtime=1x.
func BenchmarkSuspendedAgentsMemory(b *testing.B) {
	agents := 100000
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
	running := 0
	for i := 0; i < agents; i++ {
		if mgr.Running(fmt.Sprintf("agt_%05d", i)) {
			running++
		}
	}
	b.ReportMetric(float64(running), "live-actors")
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
		b.Fatalf("reading the resident set size: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
