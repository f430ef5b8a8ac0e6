package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// claimAgent runs ClaimAgent in a transaction of its own.
func claimAgent(t *testing.T, s brabo.Store, agentID, owner string, now time.Time, lease time.Duration) bool {
	t.Helper()
	ctx := context.Background()
	var ok bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		ok, err = tx.ClaimAgent(ctx, agentID, owner, now, lease)
		return err
	}))
	return ok
}

// agentLease reads the agent's lease, nil for none.
func agentLease(t *testing.T, s brabo.Store, agentID string) *brabo.AgentLease {
	t.Helper()
	ctx := context.Background()
	var l *brabo.AgentLease
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		var err error
		l, err = tx.AgentLease(ctx, agentID)
		if errors.Is(err, brabo.ErrNotFound) {
			l, err = nil, nil
		}
		return err
	}))
	return l
}

func testAgentLeases(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	agent, a, b := id("agt"), id("proc"), id("proc")
	now := time.Now().UTC().Truncate(time.Microsecond)
	if l := agentLease(t, s, agent); l != nil {
		t.Fatalf("a lease nobody claimed: %+v", l)
	}
	// Free: claimed.
	if !claimAgent(t, s, agent, a, now, time.Minute) {
		t.Fatal("a free agent was not claimed")
	}
	if l := agentLease(t, s, agent); l == nil || l.Owner != a || !l.Until.Equal(now.Add(time.Minute)) {
		t.Fatalf("after the claim: %+v", l)
	}
	// Held by another and not run out: refused, and left as it was.
	if claimAgent(t, s, agent, b, now.Add(30*time.Second), time.Minute) {
		t.Fatal("an agent leased to another owner was claimed")
	}
	// Renewed by its owner: still its, for longer.
	if !claimAgent(t, s, agent, a, now.Add(40*time.Second), time.Minute) {
		t.Fatal("the owner could not renew its lease")
	}
	if l := agentLease(t, s, agent); l == nil || l.Owner != a || !l.Until.Equal(now.Add(100*time.Second)) {
		t.Fatalf("after the renewal: %+v", l)
	}
	if claimAgent(t, s, agent, b, now.Add(90*time.Second), time.Minute) {
		t.Fatal("a renewed lease was taken before it ran out")
	}
	// Run out: taken over.
	if !claimAgent(t, s, agent, b, now.Add(2*time.Minute), time.Minute) {
		t.Fatal("an agent whose lease ran out was not taken over")
	}
	if claimAgent(t, s, agent, a, now.Add(2*time.Minute), time.Minute) {
		t.Fatal("the old owner took back a lease taken over from it")
	}
	// Release: only by its owner.
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.ReleaseAgent(ctx, agent, a) }))
	if l := agentLease(t, s, agent); l == nil || l.Owner != b {
		t.Fatalf("another owner's release freed the lease: %+v", l)
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.ReleaseAgent(ctx, agent, b) }))
	if l := agentLease(t, s, agent); l != nil {
		t.Fatalf("a released lease is still held: %+v", l)
	}
	if !claimAgent(t, s, agent, a, now.Add(2*time.Minute), time.Minute) {
		t.Fatal("a released agent was not claimable at once")
	}
	// Racing owners: exactly one wins a free agent.
	raced := id("agt")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if claimAgent(t, s, raced, id("proc"), now, time.Minute) {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d owners claimed one agent, want 1", wins.Load())
	}
}

// testOutboxForLeaseHolder: a message for an agent another process holds
// is left to that process, until its lease runs out.
func testOutboxForLeaseHolder(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	held, free, a, b := id("agt"), id("agt"), id("proc"), id("proc")
	now := time.Now().UTC()
	if !claimAgent(t, s, held, b, now, time.Minute) {
		t.Fatal("claim")
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		for _, key := range []string{"agent:" + held, "agent:" + free, "lead:" + held} {
			if err := tx.Enqueue(ctx, &brabo.OutboxMessage{ProjectID: p.ID, Topic: brabo.TopicActionSettled,
				ActorKey: key, ActionID: id("act"), Payload: json.RawMessage(`{}`)}); err != nil {
				return err
			}
		}
		return nil
	}))
	claim := func(owner string, at time.Time) []string {
		var keys []string
		must(t, s.Update(ctx, func(tx brabo.Tx) error {
			ms, err := tx.ClaimOutboxFor(ctx, owner, at, time.Second, 10)
			for _, m := range ms {
				keys = append(keys, m.ActorKey)
			}
			return err
		}))
		return keys
	}
	if got := claim(a, now); len(got) != 2 || got[0] != "agent:"+free || got[1] != "lead:"+held {
		t.Fatalf("A claimed %v: want the free agent's and the other key's messages, not those of B's agent", got)
	}
	if got := claim(b, now); len(got) != 1 || got[0] != "agent:"+held {
		t.Fatalf("B claimed %v: want its agent's message", got)
	}
	// B dies: once its lease runs out, anyone takes the message.
	if got := claim(a, now.Add(2*time.Minute)); len(got) != 3 {
		t.Fatalf("after B's lease ran out A claimed %v, want all three messages", got)
	}
}
