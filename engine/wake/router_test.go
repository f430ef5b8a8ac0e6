package wake_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/wake"
)

// receiver records what reaches it; live keys are taken in Deliver (a
// live actor), the others go through Resume, which moves the run on.
type receiver struct {
	name  string
	store brabo.Store
	live  map[string]bool
	mu    sync.Mutex
	got   []string
}

func (r *receiver) Deliver(key string, msg brabo.OutboxMessage) bool {
	if !r.live[key] {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, "deliver "+msg.ActionID)
	return true
}

func (r *receiver) Resume(ctx context.Context, run *brabo.Run, msg brabo.OutboxMessage) error {
	r.mu.Lock()
	r.got = append(r.got, "resume "+msg.ActionID)
	r.mu.Unlock()
	run.State, run.AwaitingActionID = brabo.RunDone, ""
	return r.store.Update(ctx, func(tx brabo.Tx) error { return tx.SaveRun(ctx, run) })
}

func (r *receiver) Expire(ctx context.Context, run *brabo.Run, why string) error {
	r.mu.Lock()
	r.got = append(r.got, "expire "+run.AwaitingActionID)
	r.mu.Unlock()
	_, err := leave(ctx, r.store, run)
	return err
}

// leave moves a waiting run to blocked, if it still waits.
func leave(ctx context.Context, s brabo.Store, run *brabo.Run) (bool, error) {
	var ok bool
	err := s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		ok, err = tx.LeaveWait(ctx, run.ID, run.AwaitingActionID, brabo.RunBlocked, time.Now())
		return err
	})
	return ok, err
}

func (r *receiver) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// routed makes two projects, each with a dev-<module> agent, a qa
// sub-agent and a dev lead, and one run per agent waiting for an action
// named after it ("act_<agent id>").
func routed(t *testing.T, s brabo.Store) {
	t.Helper()
	ctx := context.Background()
	err := s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, &brabo.Member{ID: "m1", Name: "ana", TokenHash: "h"}); err != nil {
			return err
		}
		for _, p := range []string{"p1", "p2"} {
			if err := tx.CreateProject(ctx, &brabo.Project{ID: p, Slug: "shop-" + p, Name: p, Mode: brabo.ModeLocal,
				Root: "/srv/" + p, WorkspaceDir: "shop-" + p, OwnerID: "m1"}); err != nil {
				return err
			}
			for _, name := range []string{"dev-api", "qa-automation", brabo.DevLeadName} {
				id := p + "-" + name
				if err := tx.CreateAgent(ctx, &brabo.Agent{ID: id, ProjectID: p, Name: name, PrincipalID: "m1", TokenHash: "h-" + id}); err != nil {
					return err
				}
				if err := tx.SaveRun(ctx, &brabo.Run{ID: "run-" + id, ProjectID: p, ActorKey: "agent:" + id,
					State: brabo.RunAwaitingApproval, AwaitingActionID: "act_" + id, Ctx: json.RawMessage(`{}`)}); err != nil {
					return err
				}
			}
		}
		// A run whose agent the store does not have.
		return tx.SaveRun(ctx, &brabo.Run{ID: "run-gone", ProjectID: "p1", ActorKey: "agent:gone",
			State: brabo.RunAwaitingApproval, AwaitingActionID: "act_gone", Ctx: json.RawMessage(`{}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func settleIn(t *testing.T, s brabo.Store, project, actorKey, actionID string) {
	t.Helper()
	ctx := context.Background()
	payload, _ := json.Marshal(brabo.Settled{ActionID: actionID, Status: brabo.StatusExecuted, Result: &brabo.Result{Output: "ok\n"}})
	if err := s.Update(ctx, func(tx brabo.Tx) error {
		return tx.Enqueue(ctx, &brabo.OutboxMessage{ProjectID: project, Topic: brabo.TopicActionSettled, ActorKey: actorKey, ActionID: actionID, Payload: payload})
	}); err != nil {
		t.Fatal(err)
	}
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Each kind of agent's message reaches its own receiver, per project: the
// dev agents' manager, the project's QA lead (for its qa-* sub-agents),
// the project's dev lead; a live receiver takes it in Deliver.
func TestTheRouterSendsEachKindToItsReceiver(t *testing.T) {
	s := sqliteStore(t)
	routed(t, s)
	dev := &receiver{name: "dev", store: s}
	gates := map[string]*receiver{"p1": {name: "gate p1", store: s}, "p2": {name: "gate p2", store: s,
		live: map[string]bool{"agent:p2-qa-automation": true}}}
	leads := map[string]*receiver{"p1": {name: "lead p1", store: s}, "p2": {name: "lead p2", store: s}}
	router := &wake.Router{Store: s, Dev: dev,
		Gate: func(p string) wake.Receiver {
			if g, ok := gates[p]; ok {
				return g
			}
			return nil
		},
		Lead: func(p string) wake.Receiver {
			if l, ok := leads[p]; ok {
				return l
			}
			return nil
		}}
	w := &wake.Worker{Store: s, Owner: "proc_a", Local: router, Resume: router, Log: quiet}
	for _, p := range []string{"p1", "p2"} {
		for _, name := range []string{"dev-api", "qa-automation", brabo.DevLeadName} {
			settleIn(t, s, p, "agent:"+p+"-"+name, "act_"+p+"-"+name)
		}
	}
	settleIn(t, s, "p1", "member:m1", "act_human") // nobody waits: delivered
	if n, err := w.Once(context.Background()); err != nil || n != 7 {
		t.Fatalf("Once = %d, %v", n, err)
	}
	want := map[*receiver][]string{
		dev:         {"resume act_p1-dev-api", "resume act_p2-dev-api"},
		gates["p1"]: {"resume act_p1-qa-automation"},
		gates["p2"]: {"deliver act_p2-qa-automation"},
		leads["p1"]: {"resume act_p1-dev-lead"},
		leads["p2"]: {"resume act_p2-dev-lead"},
	}
	for r, calls := range want {
		if got := r.calls(); !same(got, calls) {
			t.Errorf("%s got %v, want %v", r.name, got, calls)
		}
	}
	if n, _ := w.Once(context.Background()); n != 0 {
		t.Fatalf("%d messages still undelivered", n)
	}
}

// A run whose actor has no receiver in this process (an agent the store
// does not know, or a kind this process does not run) is not marked
// delivered: the message comes back after its lease, and an instance that
// has the receiver resumes it.
func TestAnUnroutedMessageIsKeptForAnotherInstance(t *testing.T) {
	s := sqliteStore(t)
	routed(t, s)
	now := time.Now()
	clock := func() time.Time { return now }
	// This process runs dev agents only.
	dev := &receiver{name: "dev", store: s}
	a := &wake.Router{Store: s, Dev: dev}
	wa := &wake.Worker{Store: s, Owner: "proc_a", Local: a, Resume: a, Lease: time.Minute, Now: clock, Log: quiet}
	settleIn(t, s, "p1", "agent:p1-dev-lead", "act_p1-dev-lead")
	settleIn(t, s, "p1", "agent:gone", "act_gone")
	n, err := wa.Once(context.Background())
	if n != 2 || !errors.Is(err, wake.ErrNoRoute) {
		t.Fatalf("Once = %d, %v; want 2 claimed and ErrNoRoute", n, err)
	}
	if n, _ := wa.Once(context.Background()); n != 0 {
		t.Fatal("the messages came back before their lease ran out")
	}
	// Another instance runs the dev lead.
	lead := &receiver{name: "lead", store: s}
	b := &wake.Router{Store: s, Lead: func(p string) wake.Receiver {
		if p == "p1" {
			return lead
		}
		return nil
	}}
	wb := &wake.Worker{Store: s, Owner: "proc_b", Local: b, Resume: b, Lease: time.Minute, Now: clock, Log: quiet}
	now = now.Add(2 * time.Minute)
	if n, err := wb.Once(context.Background()); n != 2 || !errors.Is(err, wake.ErrNoRoute) {
		t.Fatalf("instance B: Once = %d, %v; want 2 claimed, the unknown agent still unrouted", n, err)
	}
	if got := lead.calls(); !same(got, []string{"resume act_p1-dev-lead"}) {
		t.Fatalf("the dev lead got %v", got)
	}
	if got := dev.calls(); len(got) != 0 {
		t.Fatalf("the dev agents got %v", got)
	}
}
