package pipeline

import "github.com/brabo-dev/brabo"

// UnsandboxedMissing is what a terminal action's reason says when
// bubblewrap cannot run a sandbox on this machine: no rule auto-approves
// it, a human decides (docs/sandbox.md).
const UnsandboxedMissing = "runs unsandboxed: bubblewrap is not available"

// UnsandboxedChosen is what it says when the operator started brabo with
// --no-sandbox: the rules decide as usual, and every card says so.
const UnsandboxedChosen = "runs unsandboxed: brabo serve --no-sandbox"

// sandboxedTypes are the types whose processes run in the sandbox when
// brabo has one: terminal commands, and the git actions whose steps touch
// only a repository on this machine (executor/gitbox.go). git_push,
// pr_open and git_repo_create run their git on the host under gitguard
// whatever the sandbox (docs/sandbox.md, "Git actions").
var sandboxedTypes = map[brabo.ActionType]bool{
	brabo.Terminal: true, brabo.GitCommit: true, brabo.GitBranchCreate: true, brabo.GitMerge: true,
	brabo.OpenAdrPr: true, brabo.OpenInfraPr: true,
}

// unsandboxed adds to the decision of an action of sandboxedTypes that
// its processes would run outside the sandbox (Service.Unsandboxed): the
// sentence, and, unless the operator chose it (Service.UnsandboxedChosen),
// a human's approval instead of an auto-approval. Other types and a
// sandboxed brabo are left as they are.
func (s *Service) unsandboxed(t brabo.ActionType, d brabo.Decision) brabo.Decision {
	if s.Unsandboxed == "" || !sandboxedTypes[t] {
		return d
	}
	d.Reason += "; " + s.Unsandboxed
	if d.Policy == brabo.AutoApprove && !s.UnsandboxedChosen {
		d.Policy = brabo.RequireApproval
	}
	return d
}
