package pipeline

import (
	"context"
	"math"
	"path"
	"strings"

	"github.com/brabo-dev/brabo"
)

// What a proposal of the types given executors must carry, checked
// before anything is decided or stored: a bad payload is invalid_action,
// naming the field, and nothing is written.

// humanOnly reports whether only a human may propose t: container_stop
// and container_remove come from a member's click on the containers page
// (a human's click only), never from an agent.
func humanOnly(t brabo.ActionType) bool {
	return t == brabo.ContainerStop || t == brabo.ContainerRemove
}

// MaxDocumentBytes bounds the document an open_adr_pr or open_infra_pr
// adds.
const MaxDocumentBytes = 256 << 10

// validBranch refuses, at the proposal, a branch name the executor would
// refuse after a human approved it (brabo.BranchNameProblem): the human
// never sees an action that cannot run. An empty name passes unless
// required.
func validBranch(t brabo.ActionType, field, name string, required bool) error {
	if name == "" && !required {
		return nil
	}
	if why := brabo.BranchNameProblem(name); why != "" {
		return invalid("%s: %s %q is not a valid branch name: %s", t, field, name, why)
	}
	return nil
}

func validateNewTypes(t brabo.ActionType, p *brabo.Payload) error {
	branch := func(field, name string, required bool) error { return validBranch(t, field, name, required) }
	switch t {
	case brabo.GitBranchProtect:
		if p.Branch == "" {
			return invalid("a git_branch_protect action needs the branch to protect")
		}
		return branch("branch", p.Branch, true)
	case brabo.GitRepoCreate:
		return branch("branch", p.Branch, false)
	case brabo.OpenAdrPr, brabo.OpenInfraPr:
		if strings.TrimSpace(p.Title) == "" {
			return invalid("a %s action needs a title", t)
		}
		if strings.TrimSpace(p.Content) == "" {
			return invalid("a %s action needs the document's content", t)
		}
		if len(p.Content) > MaxDocumentBytes || strings.ContainsRune(p.Content, 0) {
			return invalid("%s: the content is over %d bytes or holds a NUL byte", t, MaxDocumentBytes)
		}
		if err := branch("branch", p.Branch, false); err != nil {
			return err
		}
		if err := branch("base", p.Base, false); err != nil {
			return err
		}
		if p.Path != "" {
			if why := documentPathProblem(p.Path); why != "" {
				return invalid("%s: path %q %s", t, p.Path, why)
			}
		}
	case brabo.InstructionPatch:
		if p.Agent == "" {
			return invalid("an instruction_patch action needs the agent whose instructions it replaces (agent)")
		}
		if len(p.Content) > brabo.MaxInstructionsBytes || strings.ContainsRune(p.Content, 0) {
			return invalid("instruction_patch: the content is over %d bytes or holds a NUL byte", brabo.MaxInstructionsBytes)
		}
	case brabo.Spend:
		amount, err := brabo.ParseMoney(p.Amount)
		if err != nil {
			return invalid("spend: %v", err)
		}
		if amount <= 0 {
			return invalid("spend: amount must be more than zero")
		}
	case brabo.ContainerStart, brabo.ContainerHandoff:
		if p.CPUs < 0 || math.IsNaN(p.CPUs) || math.IsInf(p.CPUs, 0) || p.MemoryMB < 0 {
			return invalid("%s: cpus and memoryMb must be positive numbers, or omitted for the module map's minimum", t)
		}
		if strings.ContainsFunc(p.Image, func(r rune) bool { return r <= ' ' || r == 0x7f }) || strings.HasPrefix(p.Image, "-") {
			return invalid("%s: image %q is not an image reference", t, p.Image)
		}
	}
	return nil
}

// documentPathProblem says why a document path cannot be added by a PR
// ("" when it can): it must be a clean relative path of a file, outside
// any .git folder.
func documentPathProblem(p string) string {
	switch {
	case strings.ContainsRune(p, 0) || strings.ContainsRune(p, '\\'):
		return "holds a NUL byte or a backslash"
	case path.IsAbs(p):
		return "is absolute; give a path relative to the repository"
	case path.Clean(p) != p || p == "." || strings.HasSuffix(p, "/"):
		return "is not a clean relative path of a file"
	case p == ".." || strings.HasPrefix(p, "../"):
		return "leaves the repository"
	}
	for _, el := range strings.Split(p, "/") {
		if strings.EqualFold(el, ".git") {
			return "lies in a .git folder"
		}
	}
	return ""
}

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
