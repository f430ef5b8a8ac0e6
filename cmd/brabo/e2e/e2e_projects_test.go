package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectAnswersCarryRoot: a local project's answers (create, get,
// list) say its folder, so a newcomer can see what brabo guards.
func TestProjectAnswersCarryRoot(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		got := e.ok("GET", e.pp(""), e.admin, nil, 200)["project"].(map[string]any)
		if got["root"] != e.root {
			t.Errorf("GET project: root %v, want %s", got["root"], e.root)
		}
		list := e.ok("GET", "/v1/projects", e.developer, nil, 200)["projects"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["root"] != e.root {
			t.Errorf("GET projects: %v", list)
		}
		other := t.TempDir()
		if p := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "blog", "mode": "local", "root": other}, 201); p["root"] != other {
			t.Errorf("POST project: %v", p)
		}
	})
}

// TestProjectErrorsHaveTheirOwnCode: what is wrong with a project to be
// made is invalid_project, not invalid_action, and says what to give.
func TestProjectErrorsHaveTheirOwnCode(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		for _, tc := range []struct {
			body map[string]any
			says string
		}{
			{map[string]any{"slug": "x", "mode": "local"}, "a local project needs root, the absolute path of an existing folder"},
			{map[string]any{"slug": "x", "mode": "local", "root": "shop"}, "absolute"},
			{map[string]any{"slug": "x", "mode": "local", "root": filepath.Join(t.TempDir(), "gone")}, "does not exist"},
			{map[string]any{"slug": "X!", "mode": "local", "root": t.TempDir()}, "slug"},
			{map[string]any{"slug": "x", "root": t.TempDir()}, "want local (with root, an existing absolute folder), container or runner"},
			{map[string]any{"slug": "x", "mode": "container", "root": t.TempDir()}, "give no root"},
			{map[string]any{"slug": "x", "mode": "local", "root": e.root}, "overlaps"},
		} {
			out := e.refused("POST", "/v1/projects", e.admin, tc.body, 400, "invalid_project")
			if !strings.Contains(out["message"].(string), tc.says) {
				t.Errorf("%v: %v, want it to say %q", tc.body, out, tc.says)
			}
		}
		e.refused("PUT", e.pp("/container"), e.maintainer, map[string]any{"running": true}, 400, "invalid_project")
	})
}

// TestAMissingProjectFolderFailsClearly: an action approved after its
// project folder was deleted runs nothing and fails with the stable code
// project_folder_missing and no exit code, in the answer, the action and
// the log; a 0 there would read as a success.
func TestAMissingProjectFolderFailsClearly(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		pending := e.terminal("touch made-after-delete")
		if pending["status"] != "pending" {
			t.Fatalf("touch: %v", pending)
		}
		id := pending["id"].(string)
		moved := e.root + "-moved"
		if err := os.Rename(e.root, moved); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Rename(moved, e.root) })
		out := e.ok("POST", "/v1/actions/"+id+"/approve", e.admin, nil, 200)
		a := out["action"].(map[string]any)
		for _, got := range []map[string]any{a, e.ok("GET", "/v1/actions/"+id, e.agent, nil, 200)} {
			res, _ := got["result"].(map[string]any)
			if got["status"] != "failed" || res["code"] != "project_folder_missing" || !strings.Contains(res["error"].(string), e.root) {
				t.Errorf("the action: %v", got)
			}
			if _, has := res["exitCode"]; has {
				t.Errorf("a result that never ran has an exit code: %v", res)
			}
		}
		events := e.ok("GET", e.pp("/events"), e.admin, nil, 200)["events"].([]any)
		last := events[len(events)-1].(map[string]any)
		payload := last["payload"].(map[string]any)
		if last["type"] != "action.failed" || payload["code"] != "project_folder_missing" {
			t.Errorf("the last event: %v", last)
		}
		if _, has := payload["exitCode"]; has {
			t.Errorf("action.failed of an action that never ran has an exit code: %v", payload)
		}
		for _, p := range []string{filepath.Join(moved, "made-after-delete"), filepath.Join(e.root, "made-after-delete")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("the command ran: %s exists", p)
			}
		}
		// An action that ran keeps its exit code, 0 included.
		if err := os.Rename(moved, e.root); err != nil {
			t.Fatal(err)
		}
		ok := e.terminal("true")
		id = ok["id"].(string)
		res := e.ok("POST", "/v1/actions/"+id+"/approve", e.admin, nil, 200)["action"].(map[string]any)["result"].(map[string]any)
		if res["exitCode"] != float64(0) || res["code"] != nil {
			t.Errorf("a command that ran: %v", res)
		}
	})
}
