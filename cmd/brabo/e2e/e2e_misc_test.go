package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		for _, scheme := range []string{"bearer", "BEARER", "Bearer"} {
			req, _ := http.NewRequest("GET", e.srv.URL+"/v1/me", nil)
			req.Header.Set("Authorization", scheme+" "+e.admin)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("scheme %q: status %d", scheme, resp.StatusCode)
			}
		}
		req, _ := http.NewRequest("GET", e.srv.URL+"/v1/me", nil)
		req.Header.Set("Authorization", "Basic "+e.admin)
		resp, _ := http.DefaultClient.Do(req)
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("Basic scheme: status %d, want 401", resp.StatusCode)
		}
	})
}

func TestAnEmptyPermissionsBodyIsRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"deny": ["Terminal(curl)"]}`)
		before, _ := os.ReadFile(filepath.Join(e.root, "permissions.json"))
		out := e.refused("PUT", e.pp("/permissions"), e.maintainer, " \n", 400, "invalid_permissions")
		if !strings.Contains(out["message"].(string), "{}") {
			t.Errorf("the refusal should say how to empty the file: %v", out)
		}
		after, _ := os.ReadFile(filepath.Join(e.root, "permissions.json"))
		if string(before) != string(after) {
			t.Fatal("an empty body changed permissions.json")
		}
		e.setPermissions(`{}`) // the explicit way still works
	})
}

func TestTwoProjectsNeverShareAFolder(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		for _, root := range []string{e.root, filepath.Join(e.root, "src"), filepath.Dir(e.root)} {
			out := e.refused("POST", "/v1/projects", e.admin, map[string]any{"slug": "again", "mode": "local", "root": root}, 400, "invalid_project")
			if !strings.Contains(out["message"].(string), "overlaps") {
				t.Errorf("root %s: %v", root, out)
			}
		}
		other := t.TempDir()
		e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "other", "mode": "local", "root": other}, 201)
	})
}

func TestTasksBacklog(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.refused("POST", e.pp("/tasks"), e.developer, map[string]any{"title": " "}, 400, "invalid_action")
		e.refused("POST", e.pp("/tasks"), e.agent, map[string]any{"title": "x"}, 404, "not_found")
		task := e.ok("POST", e.pp("/tasks"), e.developer, map[string]any{"title": "Add login", "description": "OAuth"}, 201)
		if task["status"] != "todo" || task["title"] != "Add login" {
			t.Fatalf("task: %v", task)
		}
		list := e.ok("GET", e.pp("/tasks"), e.agent, nil, 200)["tasks"].([]any)
		if len(list) != 1 {
			t.Fatalf("the agent sees %d tasks", len(list))
		}
		got := e.ok("GET", "/v1/tasks/"+task["id"].(string), e.maintainer, nil, 200)
		if got["id"] != task["id"] {
			t.Fatalf("get task: %v", got)
		}
		e.refused("GET", "/v1/tasks/nope", e.maintainer, nil, 404, "not_found")
	})
}

// A permissions.json brabo cannot read is held back like an invalid one
// (docs/permissions-trust.md): brabo decides with the trusted version, so
// its denies hold, and the reason says why without naming the absolute
// path.
func TestAnUnreadablePermissionsFileIsHeld(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"], "deny": ["Terminal(curl)"]}`)
		path := filepath.Join(e.root, "permissions.json")
		os.Remove(path)
		if err := os.Mkdir(path, 0o755); err != nil { // exists, but not a file
			t.Fatal(err)
		}
		a := e.terminal("echo hi")
		reason, _ := a["reason"].(string)
		if a["status"] != "executed" || !strings.Contains(reason, "the file on disk cannot be read") {
			t.Fatalf("proposal with an unreadable file: %v %q", a["status"], reason)
		}
		if strings.Contains(reason, e.root) {
			t.Fatalf("the reason names the absolute path: %q", reason)
		}
		if d := e.terminal("curl -s example.com"); d["status"] != "denied" {
			t.Fatalf("the trusted deny did not hold: %v %v", d["status"], d["reason"])
		}
		st := e.ok("GET", e.pp("/permissions/trust"), e.developer, nil, 200)
		if st["status"] != "held" || !strings.Contains(str(st, "unreadable"), "not a regular file") || strings.Contains(str(st, "unreadable"), e.root) {
			t.Fatalf("trust state: %v", st)
		}
	})
}
