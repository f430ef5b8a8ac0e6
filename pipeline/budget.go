package pipeline

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/brabo-dev/brabo"
)

// The project settings the executors read: the budget (its owner
// sets it; spend and brabo's own agents' model calls count against it),
// the module map (container_start's resources), the protected branches
// and the agents' stored instructions.

// BudgetView is a project's budget as the API and the page show it
// (brabo.BudgetView).
type BudgetView = brabo.BudgetView

// memberRole reads the project and the member's role in it; no role is
// not_found (the project is not even visible), below min is
// forbidden_role.
func (s *Service) memberRole(ctx context.Context, tx brabo.Tx, projectID string, m *brabo.Member, min brabo.Role, what string) (*brabo.Project, error) {
	p, err := tx.Project(ctx, projectID)
	if err != nil {
		return nil, err
	}
	role, err := tx.Role(ctx, projectID, m.ID)
	if err != nil {
		return nil, err
	}
	if role == "" {
		return nil, fmt.Errorf("project %s: %w", projectID, brabo.ErrNotFound)
	}
	if !role.AtLeast(min) {
		return nil, forbidden("%s needs the role %s; you are %s", what, min, role)
	}
	return p, nil
}

// BudgetOf returns the project's budget and its latest ledger lines, for a
// member of it.
func (s *Service) BudgetOf(ctx context.Context, projectID string, m *brabo.Member) (*BudgetView, error) {
	v := &BudgetView{Entries: []brabo.BudgetEntry{}}
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		if _, err := s.memberRole(ctx, tx, projectID, m, brabo.Developer, "reading the budget"); err != nil {
			return err
		}
		b, err := tx.Budget(ctx, projectID)
		if errors.Is(err, brabo.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v.Budget = b
		left := b.Remaining()
		v.Remaining = &left
		entries, err := tx.BudgetEntries(ctx, projectID, 50)
		if err == nil && entries != nil {
			v.Entries = entries
		}
		return err
	})
	return v, err
}

// SetBudget sets the project's limit and model prices, for its owner,
// with budget.changed. What was spent stays: a limit below it leaves
// nothing to spend.
func (s *Service) SetBudget(ctx context.Context, projectID string, m *brabo.Member, limit, inputPrice, outputPrice brabo.Money) (*BudgetView, error) {
	if limit < 0 || inputPrice < 0 || outputPrice < 0 {
		return nil, invalid("budget: the limit and the prices must not be negative")
	}
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		if _, err := s.memberRole(ctx, tx, projectID, m, brabo.Owner, "setting the budget"); err != nil {
			return err
		}
		previous, err := tx.Budget(ctx, projectID)
		if errors.Is(err, brabo.ErrNotFound) {
			previous, err = nil, nil
		}
		if err != nil {
			return err
		}
		now := s.now()
		if err := tx.PutBudget(ctx, &brabo.Budget{ProjectID: projectID, Limit: limit, InputPrice: inputPrice,
			OutputPrice: outputPrice, UpdatedBy: m.ID, UpdatedAt: now}); err != nil {
			return err
		}
		payload := map[string]any{"limit": limit, "inputPricePerMTok": inputPrice, "outputPricePerMTok": outputPrice}
		if previous != nil {
			payload["previousLimit"] = previous.Limit
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: projectID, Type: brabo.EventBudgetChanged, ActorID: m.ID,
			Payload: mustJSON(payload), CreatedAt: now})
	})
	if err != nil {
		return nil, err
	}
	return s.BudgetOf(ctx, projectID, m)
}

// RecordModelUsage records one model call of one of brabo's own agents
// against its project's budget, at the budget's prices; a project with no
// budget records nothing. The call happened: it is recorded even past the
// limit.
func (s *Service) RecordModelUsage(ctx context.Context, u brabo.ModelUsage) error {
	if u.ProjectID == "" || (u.InputTokens == 0 && u.OutputTokens == 0) {
		return nil
	}
	return s.Store.Update(context.WithoutCancel(ctx), func(tx brabo.Tx) error {
		b, err := tx.Budget(ctx, u.ProjectID)
		if errors.Is(err, brabo.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.DebitBudget(ctx, &brabo.BudgetEntry{ProjectID: u.ProjectID, Kind: brabo.BudgetModel,
			Amount: b.ModelCost(u.InputTokens, u.OutputTokens), AgentID: u.AgentID, InputTokens: u.InputTokens,
			OutputTokens: u.OutputTokens, CreatedAt: s.now()}, false)
		return err
	})
}

// AgentInstructions returns an agent's stored instructions, "" when it has
// none: what brabo adds to the agent's built-in prompt at each model call.
func (s *Service) AgentInstructions(ctx context.Context, agentID string) (string, error) {
	var text string
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		text, err = currentInstructions(ctx, tx, agentID)
		return err
	})
	return text, err
}

// AgentInstructionsOf returns an agent's stored instructions for a member
// of its project (nil when it has none).
func (s *Service) AgentInstructionsOf(ctx context.Context, projectID, agentID string, m *brabo.Member) (*brabo.AgentInstructions, error) {
	var in *brabo.AgentInstructions
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		if _, err := s.memberRole(ctx, tx, projectID, m, brabo.Developer, "reading an agent's instructions"); err != nil {
			return err
		}
		a, err := tx.Agent(ctx, agentID)
		if err != nil || a.ProjectID != projectID {
			return fmt.Errorf("agent %s: %w", agentID, brabo.ErrNotFound)
		}
		in, err = tx.AgentInstructions(ctx, agentID)
		if errors.Is(err, brabo.ErrNotFound) {
			in, err = nil, nil
		}
		return err
	})
	return in, err
}

var moduleNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// SetModuleMap replaces the project's module map, for a maintainer, with
// project.module_map_changed. Module names are dev-<module>'s (lowercase
// letters, digits, dashes), each once; resources are zero (not declared)
// or positive.
func (s *Service) SetModuleMap(ctx context.Context, projectID string, m *brabo.Member, modules []brabo.Module) (*brabo.ModuleMap, error) {
	seen := map[string]bool{}
	for i, mod := range modules {
		if !moduleNameRE.MatchString(mod.Name) {
			return nil, invalid("modules[%d]: name %q: use lowercase letters, digits and dashes (the <module> of dev-<module>)", i, mod.Name)
		}
		if seen[mod.Name] {
			return nil, invalid("modules[%d]: %q is named twice", i, mod.Name)
		}
		seen[mod.Name] = true
		r := mod.Resources
		if r.CPUs < 0 || r.MemoryMB < 0 || r.CPUs != r.CPUs {
			return nil, invalid("modules[%d] (%s): cpus and memoryMb must be positive, or omitted to declare nothing", i, mod.Name)
		}
	}
	if modules == nil {
		modules = []brabo.Module{}
	}
	mm := &brabo.ModuleMap{ProjectID: projectID, Modules: modules, UpdatedBy: m.ID, UpdatedAt: s.now()}
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		if _, err := s.memberRole(ctx, tx, projectID, m, brabo.Maintainer, "setting the module map"); err != nil {
			return err
		}
		if err := tx.PutModuleMap(ctx, mm); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: projectID, Type: brabo.EventModuleMapChanged, ActorID: m.ID,
			Payload: mustJSON(map[string]any{"modules": modules, "minimum": mm.MinResources()}), CreatedAt: mm.UpdatedAt})
	})
	return mm, err
}

// ModuleMapOf returns the project's module map (empty when none was set)
// and the minimum container it derives, for a member.
func (s *Service) ModuleMapOf(ctx context.Context, projectID string, m *brabo.Member) (*brabo.ModuleMap, error) {
	mm := &brabo.ModuleMap{ProjectID: projectID, Modules: []brabo.Module{}}
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		if _, err := s.memberRole(ctx, tx, projectID, m, brabo.Developer, "reading the module map"); err != nil {
			return err
		}
		got, err := tx.ModuleMap(ctx, projectID)
		if errors.Is(err, brabo.ErrNotFound) {
			return nil
		}
		if err == nil {
			mm = got
		}
		return err
	})
	return mm, err
}

// ProtectedBranchesOf lists the project's protected branches for a member:
// the built-in ones, then those git_branch_protect added.
func (s *Service) ProtectedBranchesOf(ctx context.Context, projectID string, m *brabo.Member) ([]brabo.ProtectedBranch, error) {
	var out []brabo.ProtectedBranch
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		if _, err := s.memberRole(ctx, tx, projectID, m, brabo.Developer, "reading the protected branches"); err != nil {
			return err
		}
		list, err := tx.ProtectedBranches(ctx, projectID)
		out = list
		return err
	})
	return out, err
}

// ContainerRow is one project's container as the containers page lists
// it (brabo.ContainerRow).
type ContainerRow = brabo.ContainerRow

// ContainersOf lists the container of every project the member has a role
// in, by project.
func (s *Service) ContainersOf(ctx context.Context, m *brabo.Member) ([]ContainerRow, error) {
	out := []ContainerRow{}
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		ms, err := tx.Memberships(ctx, m.ID)
		if err != nil {
			return err
		}
		for _, ms := range ms {
			p, err := tx.Project(ctx, ms.ProjectID)
			if err != nil {
				return err
			}
			c, err := tx.ProjectContainer(ctx, p.ID)
			if errors.Is(err, brabo.ErrNotFound) {
				c, err = &brabo.ProjectContainer{ProjectID: p.ID, Name: ContainerName(p)}, nil
			}
			if err != nil {
				return err
			}
			out = append(out, ContainerRow{Project: p, Role: ms.Role, Container: c})
		}
		return nil
	})
	return out, err
}
