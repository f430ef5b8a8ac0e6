package wake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
	"github.com/brabo-dev/brabo/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func sqliteStore(t *testing.T) brabo.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// seed makes a project and a run of agent:agt_1 waiting for act_1.
func seed(t *testing.T, s brabo.Store) *brabo.Run {
	ctx := context.Background()
	run := &brabo.Run{ID: "run_1", ProjectID: "p1", ActorKey: "agent:agt_1", State: brabo.RunAwaitingApproval,
		AwaitingActionID: "act_1", Ctx: json.RawMessage(`{"version":1}`)}
	err := s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, &brabo.Member{ID: "m1", Name: "ana", TokenHash: "h"}); err != nil {
			return err
		}
		if err := tx.CreateProject(ctx, &brabo.Project{ID: "p1", Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: "/srv/shop", WorkspaceDir: "shop-1", OwnerID: "m1"}); err != nil {
			return err
		}
		return tx.SaveRun(ctx, run)
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func settle(t *testing.T, s brabo.Store, actorKey, actionID string) {
	ctx := context.Background()
	payload, _ := json.Marshal(brabo.Settled{ActionID: actionID, Status: brabo.StatusExecuted, Result: &brabo.Result{Output: "ok\n"}})
	if err := s.Update(ctx, func(tx brabo.Tx) error {
		return tx.Enqueue(ctx, &brabo.OutboxMessage{ProjectID: "p1", Topic: brabo.TopicActionSettled, ActorKey: actorKey, ActionID: actionID, Payload: payload})
	}); err != nil {
		t.Fatal(err)
	}
}

// resumer records resumptions and moves the run on, as an agent would.
type resumer struct {
	store   brabo.Store
	mu      sync.Mutex
	calls   []string
	fail    atomic.Int32 // fail this many times first
	resumed chan string  // if set, told of each resumption (never blocking)
}

func (r *resumer) Resume(ctx context.Context, run *brabo.Run, msg brabo.OutboxMessage) error {
	if r.fail.Load() > 0 {
		r.fail.Add(-1)
		return errors.New("the model is down")
	}
	r.mu.Lock()
	r.calls = append(r.calls, run.ID+"←"+msg.ActionID)
	r.mu.Unlock()
	if r.resumed != nil {
		select {
		case r.resumed <- run.ID:
		default:
		}
	}
	run.State, run.AwaitingActionID = brabo.RunDone, ""
	return r.store.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, run) })
}

func (r *resumer) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

func TestASettledActionResumesItsRunOnce(t *testing.T) {
	s := sqliteStore(t)
	seed(t, s)
	res := &resumer{store: s}
	w := &wake.Worker{Store: s, Owner: "proc_a", Resume: res, Log: quiet}
	settle(t, s, "agent:agt_1", "act_1")
	settle(t, s, "agent:agt_1", "act_1") // at least once: a duplicate
	settle(t, s, "member:m1", "act_2")   // a human's proposal: nobody waits
	n, err := w.Once(context.Background())
	if err != nil || n != 3 {
		t.Fatalf("Once = %d, %v", n, err)
	}
	if res.count() != 1 || res.calls[0] != "run_1←act_1" {
		t.Fatalf("resumptions %v, want run_1 once", res.calls)
	}
	if n, _ := w.Once(context.Background()); n != 0 {
		t.Fatalf("%d messages still undelivered", n)
	}
}

func TestALiveActorGetsItInItsMailbox(t *testing.T) {
	s := sqliteStore(t)
	seed(t, s)
	res := &resumer{store: s}
	local := &mailboxes{boxes: map[string]chan brabo.OutboxMessage{"agent:agt_1": make(chan brabo.OutboxMessage, 1)}}
	w := &wake.Worker{Store: s, Owner: "proc_a", Resume: res, Local: local, Log: quiet}
	settle(t, s, "agent:agt_1", "act_1")
	if _, err := w.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-local.boxes["agent:agt_1"]:
		if m.ActionID != "act_1" {
			t.Fatalf("mailbox got %s", m.ActionID)
		}
	default:
		t.Fatal("the live actor's mailbox got nothing")
	}
	if res.count() != 0 {
		t.Fatal("a live actor's run was also resumed from the store")
	}
}

type mailboxes struct {
	boxes map[string]chan brabo.OutboxMessage
}

func (m *mailboxes) Deliver(key string, msg brabo.OutboxMessage) bool {
	box, ok := m.boxes[key]
	if ok {
		box <- msg
	}
	return ok
}

func TestAFailedResumeIsTriedAgainAfterTheLease(t *testing.T) {
	s := sqliteStore(t)
	seed(t, s)
	res := &resumer{store: s}
	res.fail.Store(1)
	now := time.Now()
	w := &wake.Worker{Store: s, Owner: "proc_a", Resume: res, Lease: time.Minute, Now: func() time.Time { return now }, Log: quiet}
	settle(t, s, "agent:agt_1", "act_1")
	if _, err := w.Once(context.Background()); err == nil {
		t.Fatal("a failed resume reported no error")
	}
	if n, _ := w.Once(context.Background()); n != 0 {
		t.Fatal("the message came back before its lease ran out")
	}
	now = now.Add(2 * time.Minute)
	if _, err := w.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res.count() != 1 {
		t.Fatalf("resumed %d times after the lease, want 1", res.count())
	}
}

func TestRacingWorkersResumeOnce(t *testing.T) {
	s := sqliteStore(t)
	seed(t, s)
	res := &resumer{store: s}
	settle(t, s, "agent:agt_1", "act_1")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w := &wake.Worker{Store: s, Owner: fmt.Sprint("proc_", i), Resume: res, Log: quiet}
			w.Once(context.Background())
		}(i)
	}
	wg.Wait()
	if res.count() != 1 {
		t.Fatalf("resumed %d times by racing workers, want 1", res.count())
	}
}

func TestRunWakesOnTheSignal(t *testing.T) {
	s := sqliteStore(t)
	seed(t, s)
	res := &resumer{store: s, resumed: make(chan string, 1)}
	// A poll of an hour: only the store's signal can wake it in time. The
	// message is settled only once the worker's start-up scan has found
	// nothing, so that the scan cannot be what delivers it.
	ws := &scanWatch{Store: s, scanned: make(chan struct{})}
	w := &wake.Worker{Store: ws, Owner: "proc_a", Resume: res, Poll: time.Hour, Log: quiet}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	ws.waitScanned(t)
	settle(t, s, "agent:agt_1", "act_1")
	res.waitResumed(t, "the worker did not wake on the store's signal")
}

// Two instances on one PostgreSQL database: the decision is recorded
// through A, and B's worker resumes the run. B's listener is seen to
// deliver a NOTIFY, and B's worker to finish its start-up scan, before the
// message is settled: only A's NOTIFY can wake B then.
func TestAnotherInstanceResumesTheRun(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresURL(t)
	a, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	listening(t, dsn, b)
	seed(t, a)
	res := &resumer{store: b, resumed: make(chan string, 1)}
	ws := &scanWatch{Store: b, scanned: make(chan struct{})}
	w := &wake.Worker{Store: ws, Owner: "instance_b", Resume: res, Poll: time.Hour, Log: quiet}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	defer func() { cancel(); <-done }()
	ws.waitScanned(t)
	settle(t, a, "agent:agt_1", "act_1")
	res.waitResumed(t, "instance B never resumed the run settled through instance A (NOTIFY)")
}

// scanWatch is a store that tells when its worker's start-up scan is
// over: the worker's first Update is the claim of that scan.
type scanWatch struct {
	brabo.Store
	once    sync.Once
	scanned chan struct{}
}

func (s *scanWatch) Update(ctx context.Context, fn func(tx brabo.Tx) error) error {
	err := s.Store.Update(ctx, fn)
	s.once.Do(func() { close(s.scanned) })
	return err
}

func (s *scanWatch) waitScanned(t *testing.T) {
	t.Helper()
	select {
	case <-s.scanned:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker never scanned the outbox")
	}
}

// waitResumed waits for the resumer's first resumption; the bound only
// ends a test that would otherwise hang.
func (r *resumer) waitResumed(t *testing.T, failure string) {
	t.Helper()
	select {
	case <-r.resumed:
	case <-time.After(5 * time.Second):
		t.Fatal(failure)
	}
	if n := r.count(); n != 1 {
		t.Fatalf("resumed %d times, want once", n)
	}
}

// listening returns once s's NOTIFY listener is connected: a notification
// sent on brabo's channel (postgres.go's "brabo_events") reaches a
// subscriber of s.
func listening(t *testing.T, dsn string, s brabo.Store) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	sig, stop := s.Subscribe("listener-probe")
	defer stop()
	deadline := time.After(10 * time.Second)
	for {
		if _, err := conn.Exec(ctx, `SELECT pg_notify('brabo_events', 'listener-probe')`); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sig:
			return
		case <-deadline:
			t.Fatal("the store's listener never delivered a NOTIFY on brabo_events")
		case <-time.After(50 * time.Millisecond): // not connected yet: notify again
		}
	}
}

// A message for an agent another process holds (its lease has not run
// out) is left to that process's worker, whose actor waits for it; once
// the holder stops renewing (it died) and the lease runs out, any worker
// takes it and resumes the run from the store, once.
func TestAHeldAgentsMessageGoesToItsHolder(t *testing.T) {
	s := sqliteStore(t)
	seed(t, s)
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	if err := s.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.ClaimAgent(ctx, "agt_1", "proc_b", now, time.Minute)
		if err == nil && !ok {
			err = errors.New("the free agent was not claimed")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, s, "agent:agt_1", "act_1")
	resA, resB := &resumer{store: s}, &resumer{store: s}
	a := &wake.Worker{Store: s, Owner: "proc_a", Resume: resA, Lease: time.Second, Now: clock, Log: quiet}
	b := &wake.Worker{Store: s, Owner: "proc_b", Resume: resB, Lease: time.Second, Now: clock, Log: quiet}
	if n, err := a.Once(ctx); n != 0 || err != nil {
		t.Fatalf("A claimed %d messages (%v) of an agent B holds", n, err)
	}
	// B's worker claims it; say B dies before delivering it.
	dying := &resumer{store: s}
	dying.fail.Store(1)
	if n, _ := (&wake.Worker{Store: s, Owner: "proc_b", Resume: dying, Lease: time.Second, Now: clock, Log: quiet}).Once(ctx); n != 1 {
		t.Fatalf("B claimed %d messages of its agent, want 1", n)
	}
	now = now.Add(30 * time.Second) // the message's lease ran out, B's agent lease not
	if n, _ := a.Once(ctx); n != 0 {
		t.Fatal("A took the message of an agent B still holds")
	}
	now = now.Add(time.Minute) // B's agent lease ran out: B is gone
	if n, err := a.Once(ctx); n != 1 || err != nil {
		t.Fatalf("after B's lease ran out A claimed %d messages (%v), want 1", n, err)
	}
	if n, _ := b.Once(ctx); n != 0 {
		t.Fatal("the message was claimed again after its delivery")
	}
	if resA.count() != 1 || resB.count() != 0 {
		t.Fatalf("resumed %d times by A and %d by B, want once by A", resA.count(), resB.count())
	}
}
