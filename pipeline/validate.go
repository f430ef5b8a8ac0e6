package pipeline

import (
	"context"

	"github.com/brabo-dev/brabo"
)

// What a proposal must be besides its payload's own fields (which
// brabo.Payload.Validate checks): proposed by whom its type allows, naming
// what the store holds (the agent an instruction_patch replaces the
// instructions of, the protected branches a git_merge meets).

// humanOnly reports whether only a human may propose t: container_stop
// and container_remove come from a member's click on the containers page
// (a human's click only), never from an agent (brabo.Traits.HumanOnly).
func humanOnly(t brabo.ActionType) bool { return t.Traits().HumanOnly }

// protectedList is the project's protected branches beyond the built-in
// ones.
func protectedList(ctx context.Context, tx brabo.Tx, projectID string) ([]string, error) {
	list, err := tx.ProtectedBranches(ctx, projectID)
	out := make([]string, 0, len(list))
	for _, b := range list {
		out = append(out, b.Branch)
	}
	return out, err
}

// instructionTarget checks that an instruction_patch names an agent of the
// project (by id or by name), writes its id into the payload, and fills in
// the text the patch replaces.
func instructionTarget(ctx context.Context, tx brabo.Tx, projectID string, p *brabo.Payload) error {
	agents, err := tx.Agents(ctx, projectID)
	if err != nil {
		return err
	}
	for _, a := range agents {
		if a.ID != p.Agent && a.Name != p.Agent {
			continue
		}
		if a.IsHook() {
			return invalid("instruction_patch: %s is a hook agent; brabo does not run it, so it has no instructions of brabo's", a.Name)
		}
		p.Agent = a.ID
		prev, err := currentInstructions(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		if prev == p.Content {
			return invalid("instruction_patch: the instructions of %s are this text already", a.Name)
		}
		p.Previous = prev
		return nil
	}
	return invalid("instruction_patch: agent %q is not an agent of this project", p.Agent)
}
