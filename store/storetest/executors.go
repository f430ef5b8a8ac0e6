package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// testExecutorState: the rows the executors write round-trip on
// both stores: protected branches once each, in order; an agent's
// instructions replaced; the module map; the container's lifecycle row
// with its workspace_verified_at; and the budget, whose capped debit lets
// exactly one of two spends racing for its last money through.
func testExecutorState(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	at := time.Now().UTC().Truncate(time.Microsecond)
	agent := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "dev-web", PrincipalID: m.ID, TokenHash: id("agh"), CreatedAt: at}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateAgent(ctx, agent); err != nil {
			return err
		}
		for i, b := range []string{"release", "hotfix", "release"} {
			added, err := tx.AddProtectedBranch(ctx, &brabo.ProtectedBranch{ProjectID: p.ID, Branch: b, ActionID: "act_p",
				CreatedBy: m.ID, CreatedAt: at.Add(time.Duration(i) * time.Second)})
			if err != nil {
				return err
			}
			if added != (i < 2) {
				t.Errorf("AddProtectedBranch(%s) #%d: added %v", b, i, added)
			}
		}
		return nil
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		list, err := tx.ProtectedBranches(ctx, p.ID)
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].Branch != "release" || list[1].Branch != "hotfix" || list[0].ActionID != "act_p" ||
			list[0].CreatedBy != m.ID || !list[0].CreatedAt.Equal(at) {
			t.Errorf("ProtectedBranches = %+v", list)
		}
		if _, err := tx.AgentInstructions(ctx, agent.ID); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("instructions of an agent with none: %v, want ErrNotFound", err)
		}
		if _, err := tx.Budget(ctx, p.ID); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("budget of a project with none: %v, want ErrNotFound", err)
		}
		if _, err := tx.ModuleMap(ctx, p.ID); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("module map of a project with none: %v", err)
		}
		if _, err := tx.ProjectContainer(ctx, p.ID); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("container of a project with none: %v", err)
		}
		return nil
	}))

	// Instructions are replaced whole.
	for _, text := range []string{"Write tests first.", "Write tests first.\nKeep functions short."} {
		must(t, s.Update(ctx, func(tx brabo.Tx) error {
			return tx.PutAgentInstructions(ctx, &brabo.AgentInstructions{AgentID: agent.ID, Content: text, ActionID: "act_i",
				UpdatedBy: m.ID, UpdatedAt: at})
		}))
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		in, err := tx.AgentInstructions(ctx, agent.ID)
		if err != nil {
			return err
		}
		if in.Content != "Write tests first.\nKeep functions short." || in.ActionID != "act_i" || in.UpdatedBy != m.ID || !in.UpdatedAt.Equal(at) {
			t.Errorf("AgentInstructions = %+v", in)
		}
		return nil
	}))

	// Module map and container row.
	mm := &brabo.ModuleMap{ProjectID: p.ID, Modules: []brabo.Module{{Name: "web", Resources: brabo.Resources{CPUs: 0.5, MemoryMB: 256}},
		{Name: "api"}}, UpdatedBy: m.ID, UpdatedAt: at}
	c := &brabo.ProjectContainer{ProjectID: p.ID, State: brabo.ContainerRunning, Name: "brabo-x", ContainerID: "c0ffee",
		Image: "img:1", Resources: brabo.Resources{CPUs: 1.5, MemoryMB: 768}, WorkspaceVerifiedAt: at, ActionID: "act_c", UpdatedAt: at}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.PutModuleMap(ctx, mm); err != nil {
			return err
		}
		return tx.PutProjectContainer(ctx, c)
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.ModuleMap(ctx, p.ID)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, mm) {
			t.Errorf("ModuleMap = %+v, want %+v", got, mm)
		}
		gc, err := tx.ProjectContainer(ctx, p.ID)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(gc, c) {
			t.Errorf("ProjectContainer = %+v, want %+v", gc, c)
		}
		all, err := tx.ProjectContainers(ctx)
		if err != nil || len(all) != 1 || all[0].ProjectID != p.ID {
			t.Errorf("ProjectContainers = %v, %v", all, err)
		}
		return nil
	}))
	c.State, c.Error, c.WorkspaceVerifiedAt = brabo.ContainerFailed, "engine said no", time.Time{}
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.PutProjectContainer(ctx, c) }))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		gc, err := tx.ProjectContainer(ctx, p.ID)
		if err == nil && (gc.State != brabo.ContainerFailed || gc.Error != "engine said no" || !gc.WorkspaceVerifiedAt.IsZero()) {
			t.Errorf("updated container row: %+v", gc)
		}
		return err
	}))

	// The budget: no budget is ErrNotFound for a debit; a capped debit
	// over what is left writes nothing; an uncapped one (model usage) may
	// go past the limit.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		_, err := tx.DebitBudget(ctx, &brabo.BudgetEntry{ProjectID: p.ID, Kind: brabo.BudgetSpend, Amount: 1}, true)
		if !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("a debit with no budget: %v, want ErrNotFound", err)
		}
		return tx.PutBudget(ctx, &brabo.Budget{ProjectID: p.ID, Limit: 10_000_000, InputPrice: 3_000_000, OutputPrice: 15_000_000,
			UpdatedBy: m.ID, UpdatedAt: at})
	}))
	debit := func(amount brabo.Money, capped bool) bool {
		var ok bool
		must(t, s.Update(ctx, func(tx brabo.Tx) error {
			var err error
			ok, err = tx.DebitBudget(ctx, &brabo.BudgetEntry{ProjectID: p.ID, Kind: brabo.BudgetSpend, Amount: amount,
				ActionID: id("act"), Note: "x", CreatedAt: at}, capped)
			return err
		}))
		return ok
	}
	if !debit(6_000_000, true) {
		t.Fatal("a debit within the budget was refused")
	}
	if debit(5_000_000, true) {
		t.Error("a capped debit over what is left went through")
	}
	// Two spends of 3 race for the 4 left: exactly one goes through.
	var wg sync.WaitGroup
	results := make([]bool, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Update(ctx, func(tx brabo.Tx) error {
				var err error
				results[i], err = tx.DebitBudget(ctx, &brabo.BudgetEntry{ProjectID: p.ID, Kind: brabo.BudgetSpend, Amount: 3_000_000,
					ActionID: id("act")}, true)
				return err
			})
		}()
	}
	wg.Wait()
	if results[0] == results[1] {
		t.Errorf("two capped debits racing for the last of the budget: %v, want exactly one", results)
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.DebitBudget(ctx, &brabo.BudgetEntry{ProjectID: p.ID, Kind: brabo.BudgetModel, Amount: 2_000_000,
			AgentID: agent.ID, InputTokens: 1000, OutputTokens: 20}, false)
		if !ok || err != nil {
			t.Errorf("an uncapped debit past the limit: %v %v", ok, err)
		}
		// Setting the limit again keeps what was spent.
		return tx.PutBudget(ctx, &brabo.Budget{ProjectID: p.ID, Limit: 20_000_000, UpdatedBy: m.ID, UpdatedAt: at})
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		b, err := tx.Budget(ctx, p.ID)
		if err != nil {
			return err
		}
		if b.Spent != 11_000_000 || b.Limit != 20_000_000 || b.InputPrice != 0 || b.Remaining() != 9_000_000 {
			t.Errorf("budget = %+v", b)
		}
		entries, err := tx.BudgetEntries(ctx, p.ID, 10)
		if err != nil {
			return err
		}
		if len(entries) != 3 || entries[0].Kind != brabo.BudgetModel || entries[0].InputTokens != 1000 ||
			entries[0].OutputTokens != 20 || entries[0].AgentID != agent.ID || entries[2].Amount != 6_000_000 ||
			entries[2].Note != "x" || !entries[2].CreatedAt.Equal(at) {
			t.Errorf("ledger = %+v", entries)
		}
		return nil
	}))
}
