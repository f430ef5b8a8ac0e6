package brabo_test

import (
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// Payload.Validate is the one check of a payload's fields: each row is a payload some type refuses with invalid_action naming
// the field, and the same type's good payload passes.
func TestPayloadValidate(t *testing.T) {
	for _, tc := range []struct {
		typ  brabo.ActionType
		bad  brabo.Payload
		says string
		good brabo.Payload
	}{
		{brabo.Terminal, brabo.Payload{Command: "  "}, "needs a command", brabo.Payload{Command: "ls"}},
		{brabo.Terminal, brabo.Payload{Command: "ls", TimeoutSec: -1}, "timeoutSec", brabo.Payload{Command: "ls", TimeoutSec: 5}},
		{brabo.WriteFile, brabo.Payload{}, "needs a path", brabo.Payload{Path: "a.go"}},
		{brabo.GitCommit, brabo.Payload{Message: " "}, "needs a message", brabo.Payload{Message: "fix"}},
		{brabo.GitPush, brabo.Payload{Branch: "a..b"}, "not a valid branch name", brabo.Payload{Branch: "main"}},
		{brabo.GitPush, brabo.Payload{Branch: "main", Remote: "-x"}, "remote", brabo.Payload{Branch: "main", Remote: "origin"}},
		{brabo.PrOpen, brabo.Payload{Branch: "f", Base: "main"}, "a base branch and a title", brabo.Payload{Branch: "f", Base: "main", Title: "T"}},
		{brabo.GitMerge, brabo.Payload{}, "pull request", brabo.Payload{PR: 1}},
		{brabo.GitBranchProtect, brabo.Payload{}, "the branch to protect", brabo.Payload{Branch: "release"}},
		{brabo.OpenAdrPr, brabo.Payload{Title: "T", Content: "x", Path: "../x.md"}, "leaves the repository", brabo.Payload{Title: "T", Content: "x", Path: "docs/adr/1.md"}},
		{brabo.OpenInfraPr, brabo.Payload{Title: "T", Content: "x", Path: "a/.git/x"}, ".git folder", brabo.Payload{Title: "T", Content: "x"}},
		{brabo.InstructionPatch, brabo.Payload{Content: "x"}, "agent", brabo.Payload{Agent: "coder", Content: "x"}},
		{brabo.Spend, brabo.Payload{Amount: "0"}, "spend", brabo.Payload{Amount: "1.00"}},
		{brabo.ContainerStart, brabo.Payload{Image: "-rm"}, "image", brabo.Payload{Image: "golang:1"}},
		{brabo.ContainerHandoff, brabo.Payload{CPUs: -1}, "cpus", brabo.Payload{CPUs: 2}},
		{brabo.McpTool, brabo.Payload{Tool: "github"}, "server__tool", brabo.Payload{Tool: "github__create_issue"}},
		{brabo.ReadFile, brabo.Payload{}, "needs a path", brabo.Payload{Path: "/etc/hosts"}},
		{brabo.Parallelize, brabo.Payload{Extra: []byte("{")}, "", brabo.Payload{}},
	} {
		err := tc.bad.Validate(tc.typ)
		if brabo.ErrorCode(err) != brabo.CodeInvalidAction || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s %+v: %v, want invalid_action saying %q", tc.typ, tc.bad, err, tc.says)
		}
		if tc.typ == brabo.Parallelize {
			continue // its good Extra is the parallel package's to test
		}
		if err := tc.good.Validate(tc.typ); err != nil {
			t.Errorf("%s %+v: %v, want valid", tc.typ, tc.good, err)
		}
	}
	if err := (&brabo.Payload{Command: "ls"}).Validate("nope"); brabo.ErrorCode(err) != brabo.CodeInvalidAction {
		t.Errorf("an unknown type: %v", err)
	}
}
