package devagent_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/model"
)

// downable is a store that can become unreachable, as it does for a
// process that crashed or is cut off from the database.
type downable struct {
	brabo.Store
	down atomic.Bool
}

var errDown = errors.New("the database is unreachable")

func (d *downable) Update(ctx context.Context, fn func(brabo.Tx) error) error {
	if d.down.Load() {
		return errDown
	}
	return d.Store.Update(ctx, fn)
}

func (d *downable) View(ctx context.Context, fn func(brabo.Tx) error) error {
	if d.down.Load() {
		return errDown
	}
	return d.Store.View(ctx, fn)
}

// instance is one process of several on the world's store: a manager
// that runs the agents it holds the leases of, and its wake worker.
type instance struct {
	name  string
	store *downable
	rec   *recorder
	mgr   *devagent.Manager
	stop  func() // cancels both and waits for them
}

func (w *world) instance(t *testing.T, name string, lease time.Duration) *instance {
	t.Helper()
	return w.instanceWith(t, name, lease, true)
}

// instanceWith is instance, without a wake worker when wakes is false.
func (w *world) instanceWith(t *testing.T, name string, lease time.Duration, wakes bool) *instance {
	t.Helper()
	return w.instanceModel(t, name, lease, wakes, nil)
}

// instanceModel is instanceWith with the model m (the recorder on
// adrScript when nil; rec is nil otherwise).
func (w *world) instanceModel(t *testing.T, name string, lease time.Duration, wakes bool, m model.Model) *instance {
	t.Helper()
	in := &instance{name: name, store: &downable{Store: w.store}}
	if m == nil {
		in.rec = newRecorder(t, adrScript)
		m = in.rec
	}
	in.mgr = w.manager(m, 2*time.Hour)
	in.mgr.Store, in.mgr.Owner, in.mgr.Lease, in.mgr.Scan = in.store, name, lease, 20*time.Millisecond
	worker := &wake.Worker{Store: in.store, Owner: name, Local: in.mgr, Resume: in.mgr, Poll: 10 * time.Millisecond, Log: quiet}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		if err := in.mgr.Run(ctx); err != nil {
			t.Errorf("%s: Run: %v", name, err)
		}
	}()
	stopWake := func() {}
	if wakes {
		stopWake = run(t, func(ctx context.Context) { worker.Run(ctx) })
	}
	stopped := false
	in.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-ran
			stopWake()
		}
	}
	t.Cleanup(in.stop)
	return in
}

func (w *world) lease(t *testing.T, agentID string) *brabo.AgentLease {
	t.Helper()
	ctx := context.Background()
	var l *brabo.AgentLease
	err := w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		l, err = tx.AgentLease(ctx, agentID)
		return err
	})
	if errors.Is(err, brabo.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// holder is the instance whose actor runs the agent, nil for none; it
// fails the test when both run it.
func holder(t *testing.T, agentID string, ins ...*instance) *instance {
	t.Helper()
	var h *instance
	for _, in := range ins {
		if in.mgr.Live(agentID) {
			if h != nil {
				t.Fatalf("agent %s has an actor in %s and in %s", agentID, h.name, in.name)
			}
			h = in
		}
	}
	return h
}

// Two processes on one store run each dev agent's actor once between
// them; when the one that holds the agents crashes (stopped with the
// database out of reach, so it releases nothing), the other takes them
// over once their leases run out, restores the waiting run, and a later
// approval resumes it there.
func TestLeasesOneActorPerAgentAndATakeOverAfterACrash(t *testing.T) {
	for _, st := range enginetest.Stores {
		t.Run(st.Name, func(t *testing.T) {
			w := newWorldOn(t, st.Open(t))
			// Long enough that a renewal delayed by a loaded machine (CI
			// shares two cores with the race pass) does not expire it.
			const lease = 2 * time.Second
			a, b := w.instance(t, "proc_a", lease), w.instance(t, "proc_b", lease)
			waitFor(t, "the agent to have an actor", func() bool { return holder(t, w.agent.ID, a, b) != nil })
			r, _ := suspended(t, w, holder(t, w.agent.ID, a, b).rec)
			// A second agent, created later (after the task is taken, so
			// that it does not take it), is picked up too.
			other := w.newAgent(t, "reviewer", true)
			agents := []string{w.agent.ID, other.ID}
			waitFor(t, "every agent to have an actor", func() bool {
				return holder(t, w.agent.ID, a, b) != nil && holder(t, other.ID, a, b) != nil
			})
			// Over several lease periods, each agent keeps exactly one
			// actor, in the process its lease names.
			for range 30 {
				for _, id := range agents {
					h := holder(t, id, a, b)
					must(t, h != nil, "agent %s lost its actor with both processes up", id)
					l := w.lease(t, id)
					must(t, l != nil && l.Owner == h.name, "agent %s runs in %s, its lease is %+v", id, h.name, l)
				}
				time.Sleep(lease / 10)
			}
			crashed := holder(t, w.agent.ID, a, b)
			survivor := map[*instance]*instance{a: b, b: a}[crashed]
			must(t, survivor.rec.Calls() == 0, "the process that does not hold the agent called its model")

			crashed.store.down.Store(true)
			crashed.stop()
			must(t, !crashed.mgr.Live(w.agent.ID), "the crashed process still runs the agent")
			if l := w.lease(t, w.agent.ID); l == nil || l.Owner != crashed.name {
				t.Fatalf("a crash released the lease: %+v", l)
			}
			waitFor(t, "the survivor to take the agents over", func() bool {
				return survivor.mgr.Live(w.agent.ID) && survivor.mgr.Live(other.ID)
			})
			l := w.lease(t, w.agent.ID)
			must(t, l.Owner == survivor.name, "the agent runs in %s, its lease is %+v", survivor.name, l)

			w.approve(t, r.AwaitingActionID)
			w.taskIn(t, brabo.TaskDone)
			must(t, w.exists("made.txt"), "the approved command did not run")
			must(t, crashed.rec.Calls() == 2 && survivor.rec.Calls() == 2,
				"model calls: %d in the crashed process (want 2, before the crash), %d in the survivor (want 2, after the approval)",
				crashed.rec.Calls(), survivor.rec.Calls())
			must(t, len(w.events(t, devagent.EventAwaitingApproval)) == 1, "the run suspended more than once")
			must(t, len(w.events(t, "backlog.task_blocked")) == 0, "a task was blocked")
		})
	}
}

// A process that cannot renew its leases (cut off from the database)
// stops its actors before the leases run out, and runs them again once it
// can claim them again.
func TestLeasesALeaseNotRenewedStopsTheActor(t *testing.T) {
	w := newWorld(t)
	a := w.instance(t, "proc_a", 600*time.Millisecond)
	waitFor(t, "the actor to start", func() bool { return a.mgr.Live(w.agent.ID) })
	w.awaiting(t)
	a.store.down.Store(true)
	l := w.lease(t, w.agent.ID) // the last renewal, read past the cut
	waitFor(t, "the actor to stop", func() bool { return !a.mgr.Live(w.agent.ID) })
	// It stops one tick (20 ms) before the lease runs out; a loaded
	// machine may run the tick late, hence the slack.
	must(t, time.Now().Before(l.Until.Add(200*time.Millisecond)), "the actor stopped at %s, long after its lease ran out at %s",
		time.Now().Format(time.RFC3339Nano), l.Until.Format(time.RFC3339Nano))
	a.store.down.Store(false)
	waitFor(t, "the actor to run again", func() bool { return a.mgr.Live(w.agent.ID) })
	r := w.awaiting(t)
	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	must(t, a.rec.Calls() == 4, "the model was called %d times; want 4", a.rec.Calls())
}

// A graceful stop releases the leases: the other process takes the agent
// at its next scan, long before the lease would have run out.
func TestLeasesAGracefulStopHandsTheAgentsOver(t *testing.T) {
	w := newWorld(t)
	a := w.instance(t, "proc_a", time.Minute)
	waitFor(t, "the actor to start in A", func() bool { return a.mgr.Live(w.agent.ID) })
	b := w.instance(t, "proc_b", time.Minute)
	time.Sleep(100 * time.Millisecond)
	must(t, !b.mgr.Live(w.agent.ID), "B runs an agent A holds")
	a.stop()
	start := time.Now()
	l := w.lease(t, w.agent.ID)
	must(t, l == nil || l.Owner == "proc_b", "A's graceful stop left its lease: %+v", l)
	waitFor(t, "B to take the agent", func() bool { return b.mgr.Live(w.agent.ID) })
	must(t, time.Since(start) < 10*time.Second, "B took %s", time.Since(start))
}

// The actors check their run against the store at every tick: a decision
// whose message reached no actor resumes the waiting actor within a tick,
// and a run that another process took out of its wait is given up, so the
// actor goes on with its next task instead of waiting until the wait cap.
func TestLeasesTheActorResyncsWithTheStore(t *testing.T) {
	t.Run("a decision nobody delivered", func(t *testing.T) {
		w := newWorld(t)
		a := w.instanceWith(t, "proc_a", time.Minute, false) // no wake worker: no message is delivered
		r, _ := suspended(t, w, a.rec)
		w.approve(t, r.AwaitingActionID)
		w.taskIn(t, brabo.TaskDone)
		must(t, a.rec.Calls() == 4, "the model was called %d times; want 4", a.rec.Calls())
	})
	t.Run("a run taken up elsewhere", func(t *testing.T) {
		w := newWorld(t)
		a := w.instanceWith(t, "proc_a", time.Minute, false)
		r, _ := suspended(t, w, a.rec)
		ctx := context.Background()
		next := &brabo.Task{ID: "tsk_next", ProjectID: w.prj.ID, Title: "Next", Status: brabo.TaskTodo, CreatedAt: time.Now().UTC()}
		// Another process blocks the waiting run's task (as its wait cap
		// would) and a new task comes.
		err := w.store.Update(ctx, func(tx brabo.Tx) error {
			if ok, err := tx.LeaveWait(ctx, r.ID, r.AwaitingActionID, brabo.RunBlocked, time.Now()); err != nil || !ok {
				return errors.Join(err, errors.New("the run did not leave its wait"))
			}
			task, err := tx.Task(ctx, w.task.ID)
			if err != nil {
				return err
			}
			task.Status, task.BlockedReason, task.BlockedOrigin = brabo.TaskBlocked, "blocked elsewhere", brabo.OriginPolicy
			if err := tx.UpdateTask(ctx, task); err != nil {
				return err
			}
			return tx.CreateTask(ctx, next)
		})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the actor to take the next task", func() bool {
			var got *brabo.Task
			w.store.View(ctx, func(tx brabo.Tx) error {
				var err error
				got, err = tx.Task(ctx, next.ID)
				return err
			})
			return got != nil && got.Status != brabo.TaskTodo
		})
		must(t, w.getTask(t).BlockedReason == "blocked elsewhere", "the first task changed: %+v", w.getTask(t))
	})
}

// claimsRecorded is a store that records, for each Update, how many agents
// each ClaimAgents call in it claimed.
type claimsRecorded struct {
	brabo.Store
	mu      sync.Mutex
	updates [][]int         // per Update that claimed: the size of each claim
	claimed map[string]bool // every agent id a claim named
}

type claimTx struct {
	brabo.Tx
	sizes *[]int
	ids   *[]string
}

func (t claimTx) ClaimAgents(ctx context.Context, ids []string, owner string, now time.Time, lease time.Duration) (map[string]bool, error) {
	*t.sizes = append(*t.sizes, len(ids))
	*t.ids = append(*t.ids, ids...)
	return t.Tx.ClaimAgents(ctx, ids, owner, now, lease)
}

func (c *claimsRecorded) Update(ctx context.Context, fn func(brabo.Tx) error) error {
	var sizes []int
	var ids []string
	err := c.Store.Update(ctx, func(tx brabo.Tx) error { return fn(claimTx{Tx: tx, sizes: &sizes, ids: &ids}) })
	if len(sizes) > 0 {
		c.mu.Lock()
		c.updates = append(c.updates, sizes)
		if c.claimed == nil {
			c.claimed = map[string]bool{}
		}
		for _, id := range ids {
			c.claimed[id] = true
		}
		c.mu.Unlock()
	}
	return err
}

// A renewal claims its agents in transactions of renewChunk agents each,
// so that the store's writer serves proposals between them, and still
// holds every agent's lease.
func TestLeasesARenewalClaimsInChunks(t *testing.T) {
	defer devagent.SetRenewChunk(2)()
	w := newWorld(t)
	rec := &claimsRecorded{Store: w.store}
	w.store = rec
	agents := []string{w.agent.ID}
	for _, name := range []string{"api", "web", "db", "docs"} {
		agents = append(agents, w.newAgent(t, name, true).ID)
	}
	w.instance(t, "proc_a", time.Minute)
	waitFor(t, "every agent's lease to be proc_a's, and its claim recorded", func() bool {
		for _, id := range agents {
			if l := w.lease(t, id); l == nil || l.Owner != "proc_a" {
				return false
			}
		}
		// A claim's transaction commits before the recorder notes it:
		// read the record only once it names every agent.
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, id := range agents {
			if !rec.claimed[id] {
				return false
			}
		}
		return true
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	claimed := 0
	for _, sizes := range rec.updates {
		must(t, len(sizes) == 1, "one transaction made %d claims (%v); want one", len(sizes), sizes)
		must(t, sizes[0] <= 2, "one transaction claimed %d agents; want at most 2", sizes[0])
		claimed += sizes[0]
	}
	must(t, claimed >= len(agents) && len(rec.updates) >= 3,
		"%d transactions claimed %d agents in all; want the 5 agents in at least 3", len(rec.updates), claimed)
}

// A process does not claim the agents whose lease another process holds
// and has not let run out: those claims could not win, and with several
// processes they would be most of every renewal's writes. It takes such
// an agent over once the lease runs out.
func TestLeasesARenewalLeavesOutAnotherProcesssLiveLeases(t *testing.T) {
	w := newWorld(t)
	const lease = 600 * time.Millisecond
	a := w.instance(t, "proc_a", lease)
	waitFor(t, "A to hold the agent", func() bool { return a.mgr.Live(w.agent.ID) })
	base := w.store
	rec := &claimsRecorded{Store: base}
	w.store = rec
	b := w.instance(t, "proc_b", lease)
	w.store = base
	time.Sleep(3 * lease) // B's ticks (20 ms) over several of A's renewals
	rec.mu.Lock()
	named := rec.claimed[w.agent.ID]
	rec.mu.Unlock()
	must(t, !named, "B claimed an agent whose lease A held and renewed")
	must(t, !b.mgr.Live(w.agent.ID), "B runs the agent A holds")
	// A is cut off: its lease runs out, and B takes the agent.
	a.store.down.Store(true)
	a.stop()
	waitFor(t, "B to take the agent over", func() bool { return b.mgr.Live(w.agent.ID) })
	l := w.lease(t, w.agent.ID)
	must(t, l != nil && l.Owner == "proc_b", "the agent runs in B, its lease is %+v", l)
}
