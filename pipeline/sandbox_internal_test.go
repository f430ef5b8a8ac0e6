package pipeline

import (
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// TestUnsandboxedAsksAndSaysWhy: without a sandbox a terminal (or a
// local git action's) auto-approval becomes a human's decision and says
// why; the operator's
// --no-sandbox keeps the rules' verdict and says so; other types and a
// sandboxed brabo are left alone.
func TestUnsandboxedAsksAndSaysWhy(t *testing.T) {
	auto := brabo.Decision{Policy: brabo.AutoApprove, Reason: "permissions.json allow: Terminal(npm test)"}
	cases := []struct {
		name   string
		s      *Service
		t      brabo.ActionType
		policy brabo.Policy
		says   string
	}{
		{"sandboxed", &Service{}, brabo.Terminal, brabo.AutoApprove, ""},
		{"missing", &Service{Unsandboxed: UnsandboxedMissing}, brabo.Terminal, brabo.RequireApproval, UnsandboxedMissing},
		{"chosen", &Service{Unsandboxed: UnsandboxedChosen, UnsandboxedChosen: true}, brabo.Terminal, brabo.AutoApprove, UnsandboxedChosen},
		{"write_file", &Service{Unsandboxed: UnsandboxedMissing}, brabo.WriteFile, brabo.AutoApprove, ""},
		{"git_commit", &Service{Unsandboxed: UnsandboxedMissing}, brabo.GitCommit, brabo.RequireApproval, UnsandboxedMissing},
		{"git_merge chosen", &Service{Unsandboxed: UnsandboxedChosen, UnsandboxedChosen: true}, brabo.GitMerge, brabo.AutoApprove, UnsandboxedChosen},
		{"git_push", &Service{Unsandboxed: UnsandboxedMissing}, brabo.GitPush, brabo.AutoApprove, ""},
	}
	for _, c := range cases {
		d := c.s.unsandboxed(c.t, auto)
		if d.Policy != c.policy || (c.says != "" && !strings.HasSuffix(d.Reason, "; "+c.says)) || (c.says == "" && d.Reason != auto.Reason) {
			t.Errorf("%s: %v %q", c.name, d.Policy, d.Reason)
		}
	}
	if d := (&Service{Unsandboxed: UnsandboxedMissing}).unsandboxed(brabo.Terminal, brabo.Decision{Policy: brabo.Deny}); d.Policy != brabo.Deny {
		t.Errorf("a deny became %v", d.Policy)
	}
}
