package e2e

import (
	"strings"
	"testing"
)

// permissions.json in Claude Code's spelling, through the real server: a
// deny written as Claude Code writes it holds a nested .env and an
// absolute path back, an allow entry brabo cannot read is dropped with a
// warning (the file stays valid), and an unreadable deny makes the file
// invalid instead of being dropped.
func TestClaudeSpellingsThroughTheServer(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		hook := e.ok("POST", e.pp("/agents"), e.admin, map[string]any{"name": "claude", "kind": "hook"}, 201)
		token := hook["token"].(string)
		ext := map[string]any{"mode": "external", "runner": "claude"}
		e.refused("PUT", e.pp("/permissions"), e.admin, `{"deny": ["Read(./.env)", "WebSearch"]}`, 400, "invalid_permissions")
		p := e.ok("PUT", e.pp("/permissions"), e.admin,
			`{"allow": ["WebSearch", "Read(//etc/**)", "mcp__github__get_issue"], "deny": ["Read(./.env)", "Read(//etc/ssl/**)"]}`, 200)
		warnings := strings.Join(strs(p["warnings"]), "\n")
		for _, w := range []string{`allow[0] "WebSearch": dropped:`, `allow[1] "Read(//etc/**)": dropped: names a path outside the project folder`} {
			if !strings.Contains(warnings, w) {
				t.Errorf("warnings %q lack %q", warnings, w)
			}
		}
		read := func(path string) map[string]any {
			return e.ok("POST", e.pp("/actions"), token, map[string]any{"type": "read_file", "payload": map[string]any{"path": path}, "execution": ext}, 201)
		}
		for _, path := range []string{".env", "apps/api/.env", "/etc/ssl/private/key.pem"} {
			if a := read(path); a["status"] != "denied" {
				t.Errorf("read %s: %v %v, want denied by the Claude Code deny", path, a["status"], a["reason"])
			}
		}
		if a := read("/etc/hosts"); a["status"] != "pending" {
			t.Errorf("read /etc/hosts: %v %v: a dropped allow must not approve it", a["status"], a["reason"])
		}
		a := e.ok("POST", e.pp("/actions"), token, map[string]any{"type": "mcp_tool",
			"payload": map[string]any{"tool": "github__get_issue"}, "execution": ext}, 201)
		if a["status"] != "auto_approved" {
			t.Errorf("mcp__github__get_issue in allow: %v %v", a["status"], a["reason"])
		}
	})
}

// strs reads a JSON list of strings.
func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
