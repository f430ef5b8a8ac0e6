package policy

import (
	"reflect"
	"testing"

	"github.com/brabo-dev/brabo"
)

// NewInput sets every field of Input from the action and its situation:
// a field added to Input that the builder does not set
// would be one that every caller forgets, and this test fails for it.
func TestNewInputSetsEveryField(t *testing.T) {
	rules, err := Parse("permissions.json", []byte(`{"allow": ["Terminal(ls)"]}`))
	if err != nil {
		t.Fatal(err)
	}
	agent, bad := AgentRules([]string{"Terminal(make)", "Terminal("})
	if agent == nil || len(bad) != 1 || bad[0] != "Terminal(" {
		t.Fatalf("AgentRules: %v %q", agent, bad)
	}
	var resolvedAt string
	sit := Situation{
		Role: brabo.Maintainer, Autonomy: Autonomy{Specific: brabo.AutoApprove}, Rules: rules, AgentAllow: agent,
		Scope: Scope{Root: "/srv/p", Mode: brabo.ModeLocal, ID: "p"}, ContainerRunning: true,
		ExtraProtected: []string{"release"}, Protect: Protect{Home: "/home/a"}, McpTools: []string{"github__*"},
		Resolve: func(names []string, cwd string) map[string]Program {
			resolvedAt = cwd
			out := map[string]Program{}
			for _, n := range names {
				out[n] = Program{Path: "/usr/bin/" + n}
			}
			return out
		},
	}
	p := brabo.Payload{Command: "ls -la", Cwd: "sub", Path: "a.go", Tool: "github__create_issue", TargetBranch: "main"}
	in := NewInput(brabo.Terminal, p, sit)
	v := reflect.ValueOf(in)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("NewInput leaves Input.%s unset", v.Type().Field(i).Name)
		}
	}
	if resolvedAt != "/srv/p/sub" || in.Programs["ls"].Path != "/usr/bin/ls" {
		t.Errorf("programs resolved from %q: %v", resolvedAt, in.Programs)
	}
	// No programs without a scope root, or for a type that runs no line.
	sit.Scope.Root = ""
	if in := NewInput(brabo.Terminal, p, sit); in.Programs != nil {
		t.Errorf("programs with no scope root: %v", in.Programs)
	}
	sit.Scope.Root = "/srv/p"
	if in := NewInput(brabo.WriteFile, p, sit); in.Programs != nil {
		t.Errorf("programs of a write_file: %v", in.Programs)
	}
	for _, c := range []struct{ root, cwd, want string }{{"/r", "", "/r"}, {"/r", "a/b", "/r/a/b"}, {"/r", "/abs", "/abs"}, {"/r", "../x", "/x"}} {
		if got := StartDir(c.root, c.cwd); got != c.want {
			t.Errorf("StartDir(%q, %q) = %q, want %q", c.root, c.cwd, got, c.want)
		}
	}
}
