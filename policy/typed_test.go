package policy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// The decide-only types of DESIGN §9: read_file decided by the path scope
// and ReadFile(…) path patterns, mcp_tool by McpTool(…) tool patterns and
// its effective role.
func TestDecideReadFileAndMcpTool(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proj")
	home := t.TempDir()
	type tc struct {
		name             string
		typ              brabo.ActionType
		path, tool       string
		allow, deny, ask []string
		mapped           bool
		auto             bool
		want             brabo.Policy
		reason           string
		role             brabo.Role // RequiredRole
	}
	for _, c := range []tc{
		{name: "a read in the folder", typ: brabo.ReadFile, path: "src/a.go", want: brabo.AutoApprove, reason: "scope: a read inside the project folder", role: brabo.Developer},
		{name: "an absolute read in the folder", typ: brabo.ReadFile, path: root + "/README.md", want: brabo.AutoApprove, reason: "scope: a read inside", role: brabo.Developer},
		{name: "the folder itself (a Glob)", typ: brabo.ReadFile, path: root, want: brabo.AutoApprove, reason: "scope: a read inside", role: brabo.Developer},
		{name: "a read outside asks", typ: brabo.ReadFile, path: "/etc/passwd", want: brabo.RequireApproval, reason: "default: no rule", role: brabo.Developer},
		{name: "a read climbing out asks", typ: brabo.ReadFile, path: "../other/.env", want: brabo.RequireApproval, reason: "default: no rule", role: brabo.Developer},
		{name: "an allow does not free a read outside", typ: brabo.ReadFile, path: "/etc/passwd", allow: []string{"ReadFile()"}, want: brabo.RequireApproval, reason: "scope: a read outside the project folder: /etc/passwd"},
		{name: "auto mode does not free a read outside", typ: brabo.ReadFile, path: "/etc/passwd", auto: true, want: brabo.RequireApproval, reason: "scope: a read outside"},
		{name: "a read-protected path asks", typ: brabo.ReadFile, path: filepath.Join(home, ".config/brabo/token"), allow: []string{"ReadFile()"}, want: brabo.RequireApproval, reason: "protected: reads"},
		{name: "a deny on a path", typ: brabo.ReadFile, path: "secrets/k.pem", deny: []string{"ReadFile(secrets/**)"}, want: brabo.Deny, reason: "permissions.json deny: ReadFile(secrets/**)"},
		{name: "a deny on other paths does not hold", typ: brabo.ReadFile, path: "src/k.go", deny: []string{"ReadFile(secrets/**)"}, want: brabo.AutoApprove, reason: "scope: a read inside"},
		{name: "an ask on a path", typ: brabo.ReadFile, path: "docs/x.md", ask: []string{"ReadFile(docs/*.md)"}, want: brabo.RequireApproval, reason: "permissions.json ask: ReadFile(docs/*.md)"},

		{name: "an unmapped tool asks a maintainer", typ: brabo.McpTool, tool: "github__create_issue", want: brabo.RequireApproval, reason: "default: no rule", role: brabo.Maintainer},
		{name: "a mapped tool asks a developer", typ: brabo.McpTool, tool: "github__create_issue", mapped: true, want: brabo.RequireApproval, role: brabo.Developer},
		{name: "an exact allow", typ: brabo.McpTool, tool: "github__create_issue", allow: []string{"McpTool(github__create_issue)"}, want: brabo.AutoApprove, reason: "permissions.json allow: McpTool(github__create_issue)"},
		{name: "a server allow", typ: brabo.McpTool, tool: "github__list_issues", allow: []string{"McpTool(github__*)"}, want: brabo.AutoApprove, reason: "permissions.json allow: McpTool(github__*)"},
		{name: "another server is not allowed", typ: brabo.McpTool, tool: "gitlab__list_issues", allow: []string{"McpTool(github__*)"}, want: brabo.RequireApproval, reason: "default: no rule"},
		{name: "an exact deny beats a server allow", typ: brabo.McpTool, tool: "github__delete_repo", allow: []string{"McpTool(github__*)"}, deny: []string{"McpTool(github__delete_repo)"}, want: brabo.Deny},
		{name: "McpTool() is every tool", typ: brabo.McpTool, tool: "x__y", ask: []string{"McpTool()"}, want: brabo.RequireApproval, reason: "permissions.json ask: McpTool()"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rules, err := NewRules("permissions.json", c.allow, c.deny, c.ask)
			if err != nil {
				t.Fatal(err)
			}
			in := Input{Type: c.typ, Path: c.path, Tool: c.tool, McpMapped: c.mapped, Role: brabo.Developer, Rules: rules,
				Scope:   Scope{Root: root, Mode: brabo.ModeLocal, ID: "proj"},
				Protect: Protect{Home: home, ServerPaths: []string{filepath.Join(home, ".config/brabo")}}}
			if c.auto {
				in.Autonomy.Wildcard = brabo.AutoApprove
			}
			d := Decide(in)
			if d.Policy != c.want || !strings.HasPrefix(d.Reason, c.reason) {
				t.Errorf("%s %q: %s %q, want %s %q…", c.typ, c.path+c.tool, d.Policy, d.Reason, c.want, c.reason)
			}
			if c.role != "" && d.RequiredRole != c.role {
				t.Errorf("required role %s, want %s", d.RequiredRole, c.role)
			}
		})
	}
}

func TestMcpToolPatterns(t *testing.T) {
	for _, bad := range []string{"McpTool(github)", "McpTool(github__)", "McpTool(__x)", "McpTool(git hub__x)", "McpTool(github__a*)", "McpTool(*)"} {
		if _, err := NewRules("", []string{bad}, nil, nil); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	for _, good := range []string{"McpTool()", "McpTool(github__create_issue)", "McpTool(my-server.v2__do_it)", "McpTool(github__*)", "ReadFile(docs/**)"} {
		if _, err := NewRules("", []string{good}, nil, nil); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	mapped := []string{"github__*", "fs__read", "bad entry"}
	for tool, want := range map[string]bool{"github__x": true, "fs__read": true, "fs__write": false, "": false, "bad entry": false} {
		if got := McpToolMapped(mapped, tool); got != want {
			t.Errorf("McpToolMapped(%q) = %v", tool, got)
		}
	}
	if CheckMcpToolPattern("") == nil || CheckMcpToolPattern("github__*") != nil {
		t.Error("CheckMcpToolPattern")
	}
}
