package e2e

// No route lets a role do indirectly what a direct route refuses it
// (DESIGN §9, "Effective role"): the role an approval needs is computed
// once by the policy, stored with the action, and read by every route.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNoRouteRaisesARoleIndirectly(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["WriteFile()", "Terminal(git)", "Terminal(echo)"]}`)
		permissions := filepath.Join(e.root, "permissions.json")
		before, _ := os.ReadFile(permissions)

		// A write_file of permissions.json: allowed by WriteFile(), and
		// still held for a maintainer.
		w := e.propose(e.agent, "write_file", map[string]any{"path": "permissions.json", "content": `{"allow":["Terminal(bash)"]}`})
		if w["status"] != "pending" || str(w, "decision", "requiredRole") != "maintainer" {
			t.Fatalf("a write of permissions.json: %v", w)
		}
		e.refused("POST", "/v1/actions/"+w["id"].(string)+"/approve", e.developer, nil, 403, "forbidden_role")
		if after, _ := os.ReadFile(permissions); string(after) != string(before) {
			t.Fatalf("a developer's refused approval wrote permissions.json: %s", after)
		}

		// A terminal push, the typed git_push's twin.
		push := e.terminal("git push --force origin main")
		if push["status"] != "pending" || str(push, "decision", "requiredRole") != "maintainer" {
			t.Fatalf("a terminal push: %v", push)
		}
		e.refused("POST", "/v1/actions/"+push["id"].(string)+"/approve", e.developer, nil, 403, "forbidden_role")
		e.refused("POST", "/v1/actions/"+push["id"].(string)+"/approve-always", e.developer, nil, 403, "forbidden_role")

		// An opaque program and a protected write through the shell.
		for _, cmd := range []string{"$x status", "echo '[core] fsmonitor = x' >> .git/config"} {
			a := e.terminal(cmd)
			if a["status"] != "pending" || str(a, "decision", "requiredRole") != "maintainer" {
				t.Fatalf("%q: %v", cmd, a)
			}
			e.refused("POST", "/v1/actions/"+a["id"].(string)+"/approve", e.developer, nil, 403, "forbidden_role")
		}
		if cfg, _ := os.ReadFile(filepath.Join(e.root, ".git", "config")); strings.Contains(string(cfg), "fsmonitor") {
			t.Fatalf("a refused approval wrote .git/config:\n%s", cfg)
		}

		// Denying needs only the type's minimum.
		e.ok("POST", "/v1/actions/"+push["id"].(string)+"/deny", e.developer, map[string]any{"reason": "no pushes today"}, 200)

		// A maintainer approves the write; it runs.
		e.ok("POST", "/v1/actions/"+w["id"].(string)+"/approve", e.maintainer, nil, 200)
		if after, _ := os.ReadFile(permissions); string(after) != `{"allow":["Terminal(bash)"]}` {
			t.Fatalf("the maintainer's approval did not write the file: %s", after)
		}
	})
}

// An always-allow that would write a whole type's agent_autonomy needs a
// maintainer, as PUT …/autonomy does.
func TestTypeLevelAutonomyClickNeedsAMaintainer(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		ag := e.ok("POST", e.pp("/agents"), e.admin, map[string]any{"name": "dev-web"}, 201)
		token := ag["token"].(string)
		a := e.propose(token, "write_file", map[string]any{"path": "src/x.txt", "content": "x"})
		if a["status"] != "pending" {
			t.Fatalf("write_file: %v", a)
		}
		e.refused("POST", "/v1/actions/"+a["id"].(string)+"/approve-always", e.developer, nil, 403, "forbidden_role")
		if _, err := os.Stat(filepath.Join(e.root, "src", "x.txt")); err == nil {
			t.Fatal("the refused click wrote the file")
		}
		out := e.ok("POST", "/v1/actions/"+a["id"].(string)+"/approve-always", e.maintainer, nil, 200)
		if out["autonomy"] == nil {
			t.Fatalf("the maintainer's click recorded no autonomy: %v", out)
		}
	})
}
