package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// The action types whose execution is a change of brabo's own state, not
// of the world: git_branch_protect (the project's protected branches),
// instruction_patch (an agent's stored instructions) and spend (the
// project's budget). The pipeline executes them itself, in the
// transaction that settles the action: the change and the executed
// status are one commit, and a named failure (a budget too small,
// instructions that changed since the proposal) writes nothing but the
// failure.

// storeApply returns the execution of a, run inside the settling
// transaction, or nil when a is not one of these types.
func (s *Service) storeApply(ctx context.Context, a *brabo.ProposedAction, cred *brabo.Member) func(brabo.Tx, *brabo.Result) error {
	by := ""
	if cred != nil {
		by = cred.ID
	}
	switch a.Type {
	case brabo.GitBranchProtect:
		return func(tx brabo.Tx, res *brabo.Result) error { return s.applyProtect(ctx, tx, a, by, res) }
	case brabo.InstructionPatch:
		return func(tx brabo.Tx, res *brabo.Result) error { return s.applyInstructions(ctx, tx, a, by, res) }
	case brabo.Spend:
		return func(tx brabo.Tx, res *brabo.Result) error { return s.applySpend(ctx, tx, a, res) }
	}
	return nil
}

// applyProtect adds the payload's branch to the project's protected list.
// A built-in protected branch, or one already on the list, is protected
// already: success, and nothing changes.
func (s *Service) applyProtect(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, by string, res *brabo.Result) error {
	b := a.Payload.Branch
	res.Detail = map[string]string{"branch": b}
	if slices.Contains(policy.ProtectedBranches, b) {
		res.Output = fmt.Sprintf("%s is one of the built-in protected branches (dev, qa, rc, main): protected already", b)
		res.Detail["builtIn"] = "true"
		return nil
	}
	added, err := tx.AddProtectedBranch(ctx, &brabo.ProtectedBranch{ProjectID: a.ProjectID, Branch: b, ActionID: a.ID,
		CreatedBy: by, CreatedAt: s.now()})
	if err != nil {
		return err
	}
	if !added {
		res.Output = fmt.Sprintf("%s is on the project's protected list already", b)
		return nil
	}
	res.Detail["added"] = "true"
	res.Output = fmt.Sprintf("%s is protected: a git_merge into it always waits for a human", b)
	return nil
}

// applyInstructions replaces the target agent's stored instructions with
// the payload's Content, if and only if they are still the Previous text
// the proposal was shown with.
func (s *Service) applyInstructions(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, by string, res *brabo.Result) error {
	target, err := tx.Agent(ctx, a.Payload.Agent)
	if errors.Is(err, brabo.ErrNotFound) || (err == nil && target.ProjectID != a.ProjectID) {
		res.Error = fmt.Sprintf("instruction_patch: agent %s is not an agent of this project any more", a.Payload.Agent)
		return nil
	}
	if err != nil {
		return err
	}
	current, err := currentInstructions(ctx, tx, target.ID)
	if err != nil {
		return err
	}
	res.Detail = map[string]string{"agent": target.ID, "agentName": target.Name}
	if current != a.Payload.Previous {
		res.Error = fmt.Sprintf("instruction_patch: the instructions of %s changed since this patch was proposed; propose it again against the current text",
			target.Name)
		return nil
	}
	if err := tx.PutAgentInstructions(ctx, &brabo.AgentInstructions{AgentID: target.ID, Content: a.Payload.Content,
		ActionID: a.ID, UpdatedBy: by, UpdatedAt: s.now()}); err != nil {
		return err
	}
	res.Output = fmt.Sprintf("the instructions of %s are replaced (%d bytes, were %d); its next turn uses them",
		target.Name, len(a.Payload.Content), len(current))
	return nil
}

// currentInstructions is an agent's stored text, "" for none.
func currentInstructions(ctx context.Context, tx brabo.Tx, agentID string) (string, error) {
	in, err := tx.AgentInstructions(ctx, agentID)
	if errors.Is(err, brabo.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return in.Content, nil
}

// applySpend debits the payload's amount from the project's budget, if and
// only if the budget has that much left.
func (s *Service) applySpend(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, res *brabo.Result) error {
	amount, err := brabo.ParseMoney(a.Payload.Amount)
	if err != nil {
		res.Error = "spend: " + err.Error()
		return nil
	}
	b, err := tx.Budget(ctx, a.ProjectID)
	if errors.Is(err, brabo.ErrNotFound) {
		res.Error = "spend: no budget is set for this project; its owner sets one (PUT /v1/projects/{project}/budget, or the project page)"
		return nil
	}
	if err != nil {
		return err
	}
	ok, err := tx.DebitBudget(ctx, &brabo.BudgetEntry{ProjectID: a.ProjectID, Kind: brabo.BudgetSpend, Amount: amount,
		ActionID: a.ID, Note: a.Payload.Purpose, CreatedAt: s.now()}, true)
	if err != nil {
		return err
	}
	res.Detail = map[string]string{"amount": amount.String(), "limit": b.Limit.String()}
	if !ok {
		res.Error = fmt.Sprintf("spend: over budget: %s is more than the %s left of the budget of %s",
			amount, max(b.Remaining(), 0), b.Limit)
		return nil
	}
	res.Detail["remaining"] = (b.Remaining() - amount).String()
	res.Output = fmt.Sprintf("spent %s on %s; %s of the budget of %s is left", amount, orSomething(a.Payload.Purpose),
		b.Remaining()-amount, b.Limit)
	return nil
}

func orSomething(purpose string) string {
	if purpose == "" {
		return "an unnamed purpose"
	}
	return fmt.Sprintf("%q", purpose)
}
