package policy

import (
	"slices"
	"testing"

	"github.com/brabo-dev/brabo"
)

// TestRisksOfDecidedActions: brabo.Risks marks what issue 28 calls risk
// (a cap, a force push, a push to a protected branch, an external effect,
// a protected write, a write to a file that runs), read from the decision
// this package really makes; an ordinary command or write is not marked.
func TestRisksOfDecidedActions(t *testing.T) {
	root := newProject(t)
	kinds := func(a *brabo.ProposedAction) []string {
		var out []string
		for _, r := range brabo.Risks(a) {
			out = append(out, r.Kind)
		}
		return out
	}
	cases := []struct {
		name string
		typ  brabo.ActionType
		p    brabo.Payload
		auto bool
		want []string
	}{
		{"a plain command", brabo.Terminal, brabo.Payload{Command: "touch notes.txt"}, false, nil},
		{"a plain write", brabo.WriteFile, brabo.Payload{Path: "src/app/main.go", Content: "package main\n"}, false, nil},
		{"a force push to main", brabo.Terminal, brabo.Payload{Command: "git push --force origin main"}, false,
			[]string{"cap", "force", "protected-branch", "external"}},
		{"a push to a protected branch by refspec", brabo.Terminal, brabo.Payload{Command: "git -C . push origin HEAD:refs/heads/qa"}, false,
			[]string{"cap", "protected-branch", "external"}},
		{"a push of a feature branch", brabo.Terminal, brabo.Payload{Command: "git push origin feature/x"}, false, []string{"cap", "external"}},
		{"a force push no rule allows", brabo.Terminal, brabo.Payload{Command: "rsync -a . host: && git push -f"}, false, []string{"force", "external"}},
		{"a capped external effect in auto mode", brabo.Terminal, brabo.Payload{Command: "npm publish"}, true, []string{"cap", "external"}},
		{"a privilege gain", brabo.Terminal, brabo.Payload{Command: "sudo make install"}, false, []string{"privilege", "external"}},
		{"a command writing a protected file", brabo.Terminal, brabo.Payload{Command: "echo x >> permissions.json"}, false,
			[]string{"protected-write", "external"}},
		{"a write of permissions.json", brabo.WriteFile, brabo.Payload{Path: "permissions.json", Content: "{}\n"}, false, []string{"protected-write"}},
		{"a write of the Makefile", brabo.WriteFile, brabo.Payload{Path: "Makefile", Content: "all:\n"}, false, []string{"runs"}},
		{"a write of a CI workflow", brabo.WriteFile, brabo.Payload{Path: ".github/workflows/ci.yml", Content: "on: push\n"}, false, []string{"runs"}},
		{"a write of a shell script", brabo.WriteFile, brabo.Payload{Path: "tools/deploy.sh", Content: "echo\n"}, false, []string{"runs"}},
		{"a typed push of a feature branch", brabo.GitPush, brabo.Payload{Branch: "feature/x"}, false, []string{"cap", "external"}},
		{"a pull request", brabo.PrOpen, brabo.Payload{Branch: "feature/x", Base: "main", Title: "x"}, false, []string{"cap", "external"}},
		{"a merge into main", brabo.GitMerge, brabo.Payload{PR: 1, TargetBranch: "main"}, false, []string{"cap", "protected-branch", "external"}},
	}
	rules, err := NewRules("", []string{"Terminal(touch)", "Terminal(git)", "Terminal(npm)", "WriteFile()"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		in := Input{Type: c.typ, Command: c.p.Command, Path: c.p.Path, TargetBranch: c.p.TargetBranch, Role: brabo.Owner, Rules: rules,
			Scope: Scope{Root: root, Mode: brabo.ModeLocal, ID: "acme"}, Protect: Protect{Home: "/home/alice"}}
		if c.auto || c.typ != brabo.Terminal {
			in.Autonomy.Wildcard = brabo.AutoApprove
		}
		d := Decide(in)
		a := &brabo.ProposedAction{Type: c.typ, Payload: c.p, Decision: d, Reason: d.Reason}
		if c.typ == brabo.WriteFile && d.RequiredRole == brabo.Maintainer {
			// The pipeline's preview flags a protected write (pipeline/preview.go).
			a.Preview = &brabo.Preview{Flags: []brabo.Flag{{Kind: brabo.FlagProtected, What: c.p.Path}}}
		}
		if got := kinds(a); !slices.Equal(got, c.want) {
			t.Errorf("%s (%s, %q): risks %v, want %v", c.name, d.Policy, d.Reason, got, c.want)
		}
	}
}

// TestRisksKnowTheProtectedBranches: a push to each of ProtectedBranches,
// and only to those, is marked (brabo keeps its own copy of the list: the
// root package cannot import this one).
func TestRisksKnowTheProtectedBranches(t *testing.T) {
	protected := func(branch string) bool {
		for _, r := range brabo.Risks(&brabo.ProposedAction{Type: brabo.GitPush, Payload: brabo.Payload{Branch: branch}}) {
			if r.Kind == "protected-branch" {
				return true
			}
		}
		return false
	}
	for _, b := range ProtectedBranches {
		if !protected(b) {
			t.Errorf("a push to the protected branch %s is not marked", b)
		}
	}
	for _, b := range []string{"feature/main", "mainline", "develop", "release"} {
		if protected(b) {
			t.Errorf("a push to %s is marked as a protected branch", b)
		}
	}
}
