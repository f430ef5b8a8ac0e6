package pipeline

import "github.com/brabo-dev/brabo"

// UnsandboxedMissing is what a terminal action's reason says when
// bubblewrap cannot run a sandbox on this machine: no rule auto-approves
// it, a human decides (docs/sandbox.md).
const UnsandboxedMissing = "runs unsandboxed: bubblewrap is not available"

// UnsandboxedChosen is what it says when the operator started brabo with
// --no-sandbox: the rules decide as usual, and every card says so.
const UnsandboxedChosen = "runs unsandboxed: brabo serve --no-sandbox"

// unsandboxed adds to the decision of an action of a sandboxed type
// (brabo.Traits.Sandboxed) that its processes would run outside the
// sandbox (Service.Unsandboxed): the sentence, and, unless the operator chose it (Service.UnsandboxedChosen),
// a human's approval instead of an auto-approval. Other types and a
// sandboxed brabo are left as they are.
func (s *Service) unsandboxed(t brabo.ActionType, d brabo.Decision) brabo.Decision {
	if s.Unsandboxed == "" || !t.Traits().Sandboxed {
		return d
	}
	d.Reason += "; " + s.Unsandboxed
	if d.Policy == brabo.AutoApprove && !s.UnsandboxedChosen {
		d.Policy = brabo.RequireApproval
	}
	return d
}
