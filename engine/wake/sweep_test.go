package wake_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/wake"
)

// The sweeper expires, through the router, the runs still waiting past
// their deadline on a pending action, and only those: a run whose action
// a human decided is the wake worker's, a run without a deadline or
// before it waits on, and a kind this process does not run is left to
// the process that runs it.
func TestTheSweeperExpiresOnlyPendingWaitsPastTheirDeadline(t *testing.T) {
	s := sqliteStore(t)
	routed(t, s)
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Second)
	set := func(id string, deadline time.Time, status brabo.ActionStatus) {
		t.Helper()
		err := s.Update(ctx, func(tx brabo.Tx) error {
			r, err := tx.Run(ctx, "run-"+id)
			if err != nil {
				return err
			}
			r.UpdatedAt, r.Deadline = t0, deadline
			if err := tx.SaveRun(ctx, r); err != nil {
				return err
			}
			return tx.InsertAction(ctx, &brabo.ProposedAction{ID: "act_" + id, ProjectID: r.ProjectID, Type: brabo.Terminal,
				Payload: brabo.Payload{Command: "touch  made.txt"}, ActorID: id, ActorKind: "agent", PrincipalID: "m1",
				Status: status, CreatedAt: t0})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	set("p1-dev-api", t0.Add(time.Hour), brabo.StatusPending)         // expires
	set("p2-dev-api", t0.Add(time.Hour), brabo.StatusExecuted)        // decided: left to the wake
	set("p1-qa-automation", t0.Add(3*time.Hour), brabo.StatusPending) // not yet
	set("p2-dev-lead", t0.Add(time.Hour), brabo.StatusPending)        // no receiver here
	dev := &receiver{name: "dev", store: s}
	gate := &receiver{name: "gate", store: s}
	router := &wake.Router{Store: s, Dev: dev, Gate: func(string) wake.Receiver { return gate }}
	now := t0.Add(2 * time.Hour)
	sw := &wake.Sweeper{Store: s, Expire: router, Now: func() time.Time { return now }, Log: quiet}
	n, err := sw.Once(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Once = %d, %v; want 1", n, err)
	}
	if got := dev.calls(); !same(got, []string{"expire act_p1-dev-api"}) {
		t.Fatalf("the dev receiver got %v", got)
	}
	if got := gate.calls(); len(got) != 0 {
		t.Fatalf("the gate receiver got %v before its deadline", got)
	}
	if n, err := sw.Once(ctx); err != nil || n != 0 {
		t.Fatalf("a second sweep: %d, %v", n, err)
	}
	now = t0.Add(4 * time.Hour)
	if n, err := sw.Once(ctx); err != nil || n != 1 || !same(gate.calls(), []string{"expire act_p1-qa-automation"}) {
		t.Fatalf("the sweep after the second deadline: %d, %v, %v", n, err, gate.calls())
	}
}

// The reason says which action nobody decided, what it would do, and the
// cap.
func TestNobodyDecidedNamesTheAction(t *testing.T) {
	t0 := time.Now()
	r := &brabo.Run{AwaitingActionID: "act_1", UpdatedAt: t0, Deadline: t0.Add(90 * time.Minute)}
	a := &brabo.ProposedAction{ID: "act_1", Type: brabo.Terminal, Payload: brabo.Payload{Command: "pnpm   publish\n--tag next"}}
	if got := wake.NobodyDecided(r, a); got != "nobody decided on action act_1 (terminal: pnpm publish --tag next) within the wait cap of 1h30m0s" {
		t.Fatalf("%q", got)
	}
	long := &brabo.ProposedAction{Type: brabo.WriteFile, Payload: brabo.Payload{Path: strings.Repeat("é", 200)}}
	if got := wake.NobodyDecided(r, long); !strings.Contains(got, "(write_file: "+strings.Repeat("é", 119)+"…)") {
		t.Fatalf("%q", got)
	}
	if got := wake.NobodyDecided(&brabo.Run{AwaitingActionID: "act_2"}, nil); got != "nobody decided on action act_2 (no longer recorded) within the wait cap" {
		t.Fatalf("%q", got)
	}
}
