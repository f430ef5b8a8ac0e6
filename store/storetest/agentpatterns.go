package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// testAgentPatterns: an agent's own allow patterns are kept per agent, in
// the order they were recorded, once each; the proposal's facts carry
// them; a rule is removed only while it has the mode the remover saw.
func testAgentPatterns(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	web := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "dev-web", PrincipalID: m.ID, TokenHash: id("agh"), CreatedAt: time.Now().UTC()}
	api := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "dev-api", PrincipalID: m.ID, TokenHash: id("agh"), CreatedAt: time.Now().UTC()}
	at := time.Now().UTC().Truncate(time.Microsecond)
	// Recorded in an order that is not the alphabetical one.
	want := []string{"Terminal(pnpm lint)", "Terminal(cat)", "Terminal('ls -la src')"}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		for _, a := range []*brabo.Agent{web, api} {
			if err := tx.CreateAgent(ctx, a); err != nil {
				return err
			}
		}
		for _, pat := range want {
			added, err := tx.AddAgentPattern(ctx, &brabo.AgentPattern{AgentID: web.ID, Pattern: pat, ActionID: "act_1", CreatedBy: m.ID, CreatedAt: at})
			if err != nil {
				return err
			}
			if !added {
				t.Errorf("AddAgentPattern(%s) reported it was there already", pat)
			}
		}
		added, err := tx.AddAgentPattern(ctx, &brabo.AgentPattern{AgentID: web.ID, Pattern: want[0], CreatedBy: m.ID})
		if err != nil || added {
			t.Errorf("a second AddAgentPattern of one pattern: added %v, %v", added, err)
		}
		return tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: web.ID, ActionType: brabo.Terminal, Mode: brabo.AutoApprove})
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		list, err := tx.AgentPatterns(ctx, web.ID)
		if err != nil {
			return err
		}
		var got []string
		for _, pat := range list {
			got = append(got, pat.Pattern)
			if pat.AgentID != web.ID || pat.ActionID != "act_1" || pat.CreatedBy != m.ID || !pat.CreatedAt.Equal(at) {
				t.Errorf("pattern row: %+v", pat)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("AgentPatterns = %q, want %q", got, want)
		}
		if other, err := tx.AgentPatterns(ctx, api.ID); err != nil || len(other) != 0 {
			t.Errorf("another agent's patterns: %v %v", other, err)
		}
		f, err := tx.ProposalFacts(ctx, p.ID, m.ID, web.ID, brabo.Terminal)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(f.AgentPatterns, want) || f.Specific != brabo.AutoApprove {
			t.Errorf("ProposalFacts of the agent: patterns %q specific %q", f.AgentPatterns, f.Specific)
		}
		for _, agentID := range []string{api.ID, ""} {
			f, err := tx.ProposalFacts(ctx, p.ID, m.ID, agentID, brabo.Terminal)
			if err != nil || len(f.AgentPatterns) != 0 {
				t.Errorf("ProposalFacts of agent %q: patterns %q, %v", agentID, f.AgentPatterns, err)
			}
		}
		return nil
	}))
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if ok, err := tx.DeleteAgentPattern(ctx, web.ID, want[1]); err != nil || !ok {
			t.Errorf("DeleteAgentPattern of a pattern there: %v %v", ok, err)
		}
		if ok, err := tx.DeleteAgentPattern(ctx, web.ID, want[1]); err != nil || ok {
			t.Errorf("DeleteAgentPattern of a pattern gone: %v %v", ok, err)
		}
		if ok, err := tx.DeleteAgentPattern(ctx, api.ID, want[0]); err != nil || ok {
			t.Errorf("DeleteAgentPattern of another agent's pattern: %v %v", ok, err)
		}
		// The rule is removed only while its mode is the one named.
		if ok, err := tx.DeleteAutonomy(ctx, brabo.AgentAutonomy{AgentID: web.ID, ActionType: brabo.Terminal, Mode: brabo.RequireApproval}); err != nil || ok {
			t.Errorf("DeleteAutonomy with another mode: %v %v", ok, err)
		}
		if ok, err := tx.DeleteAutonomy(ctx, brabo.AgentAutonomy{AgentID: web.ID, ActionType: brabo.Terminal, Mode: brabo.AutoApprove}); err != nil || !ok {
			t.Errorf("DeleteAutonomy: %v %v", ok, err)
		}
		if ok, err := tx.DeleteAutonomy(ctx, brabo.AgentAutonomy{AgentID: web.ID, ActionType: brabo.Terminal, Mode: brabo.AutoApprove}); err != nil || ok {
			t.Errorf("a second DeleteAutonomy: %v %v", ok, err)
		}
		return nil
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		f, err := tx.ProposalFacts(ctx, p.ID, m.ID, web.ID, brabo.Terminal)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(f.AgentPatterns, []string{want[0], want[2]}) || f.Specific != "" {
			t.Errorf("after the deletes: patterns %q specific %q", f.AgentPatterns, f.Specific)
		}
		return nil
	}))
}

// testEventsOfType: only the events of the type, in order, paged by seq.
func testEventsOfType(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	_, other := fixture(t, s)
	types := []string{brabo.EventActionCreated, brabo.EventPermissionGranted, brabo.EventActionCreated,
		brabo.EventPermissionGranted, brabo.EventPermissionGranted}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		for _, typ := range types {
			if err := tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: typ, ActorID: "x"}); err != nil {
				return err
			}
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: other.ID, Type: brabo.EventPermissionGranted, ActorID: "x"})
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		all, err := tx.EventsOfType(ctx, p.ID, brabo.EventPermissionGranted, 0, 0)
		if err != nil {
			return err
		}
		var seqs []int64
		for _, e := range all {
			seqs = append(seqs, e.Seq)
			if e.Type != brabo.EventPermissionGranted || e.ProjectID != p.ID {
				t.Errorf("EventsOfType returned %+v", e)
			}
		}
		if !reflect.DeepEqual(seqs, []int64{2, 4, 5}) {
			t.Errorf("EventsOfType seqs = %v, want [2 4 5]", seqs)
		}
		page, err := tx.EventsOfType(ctx, p.ID, brabo.EventPermissionGranted, 2, 1)
		if err != nil || len(page) != 1 || page[0].Seq != 4 {
			t.Errorf("EventsOfType after 2, limit 1: %+v %v", page, err)
		}
		return nil
	}))
}
