package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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
	// AgentLeases lists what AgentLease reads, agent by agent.
	other := id("agt")
	if !claimAgent(t, s, other, b, now, time.Hour) {
		t.Fatal("a free agent was not claimed")
	}
	var all map[string]*brabo.AgentLease
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		var err error
		all, err = tx.AgentLeases(ctx)
		return err
	}))
	for _, ag := range []string{agent, other} {
		one := agentLease(t, s, ag)
		if l := all[ag]; l == nil || one == nil || l.AgentID != one.AgentID || l.Owner != one.Owner || !l.Until.Equal(one.Until) {
			t.Fatalf("AgentLeases has %+v for %s, AgentLease %+v", l, ag, one)
		}
	}
	if l, ok := all[id("agt")]; ok {
		t.Fatalf("AgentLeases has a lease nobody claimed: %+v", l)
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

// testAgentLeasesInBulk: ClaimAgents takes what ClaimAgent would take,
// agent by agent (a free agent, a lease run out, one's own lease) and
// leaves what it would leave (another owner's live lease), in one call
// over more agents than one statement holds.
func testAgentLeasesInBulk(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	a, b := id("proc"), id("proc")
	now := time.Now().UTC().Truncate(time.Microsecond)
	const n, mixed = 12000, 1200 // more than one statement's chunk
	ids := make([]string, n)
	for i := range ids {
		ids[i] = id("agt")
	}
	// In the first ones, by i%4: b holds a live lease, b's lease ran
	// out, a holds it, free; the rest are free.
	for i, ag := range ids[:mixed] {
		switch i % 4 {
		case 0:
			claimAgent(t, s, ag, b, now, time.Minute)
		case 1:
			claimAgent(t, s, ag, b, now.Add(-2*time.Minute), time.Minute)
		case 2:
			claimAgent(t, s, ag, a, now.Add(-30*time.Second), time.Minute)
		}
	}
	var won map[string]bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		won, err = tx.ClaimAgents(ctx, append(ids, ids[1], ids[2]), a, now, time.Minute)
		return err
	}))
	for i, ag := range ids {
		want := i >= mixed || i%4 != 0
		if won[ag] != want {
			t.Fatalf("agent %d (case %d): won %v, want %v", i, i%4, won[ag], want)
		}
		if want && i%97 != 0 {
			continue // the leases are read for a sample, and every refused one
		}
		l := agentLease(t, s, ag)
		switch {
		case want && (l == nil || l.Owner != a || !l.Until.Equal(now.Add(time.Minute))):
			t.Fatalf("agent %d won, but its lease is %+v", i, l)
		case !want && (l == nil || l.Owner != b || !l.Until.Equal(now.Add(time.Minute))):
			t.Fatalf("agent %d's live lease of another owner became %+v", i, l)
		}
	}
	if len(won) != n-mixed/4 {
		t.Fatalf("won %d agents, want %d", len(won), n-mixed/4)
	}
	// Nothing to claim is no statement and no error.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		got, err := tx.ClaimAgents(ctx, nil, a, now, time.Minute)
		if err == nil && len(got) != 0 {
			t.Errorf("claiming nothing won %v", got)
		}
		return err
	}))
}

// BenchLeaseRenewal measures one renewal of n agents' leases by one owner
// in one transaction, for each n of BRABO_BENCH_LEASES (a comma-separated
// list; 2,000 and 10,000 by default), as sub-benchmarks "<n>-agents": one
// ClaimAgent statement per agent ("per-agent"), and ClaimAgents ("bulk").
// devagent.Manager renews in transactions of 2,000 agents, so 2,000 is
// what one of its transactions holds the writer for. It reports
// ms/renewal; ns/op is the same.
func BenchLeaseRenewal(b *testing.B, s brabo.Store) {
	sizes := []int{2000, 10000}
	if env := os.Getenv("BRABO_BENCH_LEASES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BRABO_BENCH_LEASES=%q: %q is not a number of agents", env, f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("%d-agents", n), func(b *testing.B) { benchLeaseRenewal(b, s, n) })
	}
}

func benchLeaseRenewal(b *testing.B, s brabo.Store, n int) {
	ctx := context.Background()
	owner := id("proc")
	ids := make([]string, n)
	for i := range ids {
		ids[i] = id("agt")
	}
	now := time.Now()
	if err := s.Update(ctx, func(tx brabo.Tx) error {
		_, err := tx.ClaimAgents(ctx, ids, owner, now, time.Minute)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	renew := map[string]func(tx brabo.Tx) error{
		"per-agent": func(tx brabo.Tx) error {
			for _, ag := range ids {
				if ok, err := tx.ClaimAgent(ctx, ag, owner, time.Now(), time.Minute); err != nil || !ok {
					return fmt.Errorf("renewing %s: %v %w", ag, ok, err)
				}
			}
			return nil
		},
		"bulk": func(tx brabo.Tx) error {
			won, err := tx.ClaimAgents(ctx, ids, owner, time.Now(), time.Minute)
			if err == nil && len(won) != len(ids) {
				err = fmt.Errorf("renewed %d of %d", len(won), len(ids))
			}
			return err
		},
	}
	for _, name := range []string{"per-agent", "bulk"} {
		b.Run(name, func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				if err := s.Update(ctx, renew[name]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/renewal")
		})
	}
}
