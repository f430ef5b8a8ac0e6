package e2e

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// TestActivateExecution: a maintainer's activation writes the seeded allow
// list into permissions.json as a trusted version, keeping what the file
// had, gives each dev-<module> agent git_commit: auto_approve (and leaves
// other agents and an explicit rule alone), records one event, and a
// second activation changes nothing.
func TestActivateExecution(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"deny": ["Terminal(curl)"], "allow": ["Terminal(ls)"], "x-team": "kept"}`)
		_, web := e.newAgent(e.maintainer, "dev-web")
		_, api := e.newAgent(e.maintainer, "dev-api")
		e.ok("PUT", e.pp("/agents/"+api+"/autonomy"), e.maintainer, map[string]any{"actionType": "git_commit", "mode": "require_approval"}, 200)
		eventsBefore := len(e.events())

		before := e.written()
		e.refused("POST", e.pp("/activate"), e.developer, nil, 403, "forbidden_role")
		e.refused("POST", e.pp("/activate"), e.agent, nil, 404, "not_found")
		e.unchanged(before, "activation by a developer")

		act := e.ok("POST", e.pp("/activate"), e.maintainer, nil, 200)
		seed := policy.SeedAllow()
		var added []string
		for _, p := range act["patterns"].([]any) {
			added = append(added, p.(string))
		}
		if act["changed"] != true || len(added) != len(seed)-1 || slices.Contains(added, "Terminal(ls)") {
			t.Fatalf("activation: %v", act)
		}
		if ag := act["agents"].([]any); len(ag) != 1 || ag[0] != web {
			t.Fatalf("agents given git_commit: %v (dev-web %s)", ag, web)
		}
		if kept := act["kept"].([]any); len(kept) != 1 || kept[0] != api {
			t.Fatalf("agents whose rule was kept: %v", kept)
		}
		// The file: the seed added, the deny and the unknown key kept.
		var file map[string]any
		data, _ := os.ReadFile(filepath.Join(e.root, "permissions.json"))
		if err := json.Unmarshal(data, &file); err != nil {
			t.Fatal(err)
		}
		allow := file["allow"].([]any)
		if len(allow) != len(seed) || file["x-team"] != "kept" || len(file["deny"].([]any)) != 1 {
			t.Fatalf("permissions.json after activation: %s", data)
		}
		// Trusted: brabo decides with it, and the file on disk is it.
		trust := e.ok("GET", e.pp("/permissions/trust"), e.developer, nil, 200)
		if trust["status"] != "trusted" || trust["trustedHash"] != act["permissionsHash"] || trust["diskHash"] != act["permissionsHash"] {
			t.Fatalf("trust after activation: %v", trust)
		}
		if a := e.terminal("git log --oneline"); a["status"] != "executed" {
			t.Fatalf("a seeded command after activation: %v %v", a["status"], a["reason"])
		}
		// The autonomy: dev-web's git_commit auto-approves, dev-api's rule
		// stays, coder (not a module agent) has none.
		rules := func(id string) []any {
			return e.ok("GET", e.pp("/agents/"+id+"/autonomy"), e.developer, nil, 200)["autonomy"].([]any)
		}
		if r := rules(web); len(r) != 1 || r[0].(map[string]any)["actionType"] != "git_commit" || r[0].(map[string]any)["mode"] != "auto_approve" {
			t.Fatalf("dev-web's autonomy: %v", r)
		}
		if r := rules(api); len(r) != 1 || r[0].(map[string]any)["mode"] != "require_approval" {
			t.Fatalf("dev-api's autonomy: %v", r)
		}
		if r := rules(e.agentID); len(r) != 0 {
			t.Fatalf("coder's autonomy: %v", r)
		}
		// One event.
		evs := e.events()[eventsBefore:]
		if len(evs) != 3 || evs[0].Type != brabo.EventExecutionActivated || evs[0].ActorID != e.memberID(e.maintainer) {
			var types []string
			for _, ev := range evs {
				types = append(types, ev.Type)
			}
			t.Fatalf("events of the activation (then the git log): %v", types)
		}
		if p := payloadOf(evs[0]); len(p["patterns"].([]any)) != len(added) || p["permissionsHash"] != act["permissionsHash"] {
			t.Fatalf("the event's payload: %v", p)
		}

		// Again: nothing changes, nothing is recorded.
		n := len(e.events())
		again := e.ok("POST", e.pp("/activate"), e.maintainer, nil, 200)
		if again["changed"] != false || len(again["patterns"].([]any)) != 0 || len(again["agents"].([]any)) != 0 {
			t.Fatalf("a second activation: %v", again)
		}
		if len(e.events()) != n {
			t.Fatal("a second activation recorded an event")
		}
		if data2, _ := os.ReadFile(filepath.Join(e.root, "permissions.json")); string(data2) != string(data) {
			t.Fatal("a second activation rewrote permissions.json")
		}
	})
}

// TestActivateRefusesAFileItWouldLaunder: a loosening on disk nobody
// accepted, or an invalid file, is not built on.
func TestActivateRefusesAFileItWouldLaunder(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"deny": ["Terminal(curl)"]}`)
		path := filepath.Join(e.root, "permissions.json")
		os.WriteFile(path, []byte(`{"allow": ["Terminal(curl)"]}`), 0o644)
		e.terminal("ls") // brabo sees the change on disk
		before := e.written()
		e.refused("POST", e.pp("/activate"), e.maintainer, nil, 409, "permissions_changed")
		e.unchanged(before, "an activation on a held file")
		os.WriteFile(path, []byte(`{"allow": ["Shell(ls)"]}`), 0o644)
		before = e.written()
		e.refused("POST", e.pp("/activate"), e.maintainer, nil, 400, "invalid_permissions")
		e.unchanged(before, "an activation on an invalid file")
	})
}

// TestProjectPageActivates: the project page's button activates, as the
// member who clicks; a developer sees no button and is refused.
func TestProjectPageActivates(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		dev := newWebClient(t, e.srv.URL)
		dev.login(e.developer)
		_, page := dev.do("GET", "/ui/projects/"+e.project+"/agents", nil, nil)
		if !strings.Contains(page, `id="execution"`) || strings.Contains(page, "/activate\"") {
			t.Fatalf("a developer's project page: %s", page)
		}
		_, body := dev.do("POST", "/ui/projects/"+e.project+"/activate", url.Values{}, map[string]string{"X-CSRF-Token": dev.csrf})
		if !strings.Contains(body, "activating execution needs the role maintainer") {
			t.Fatalf("a developer's click: %s", body)
		}
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		_, page = w.do("GET", "/ui/projects/"+e.project+"/agents", nil, nil)
		if !strings.Contains(page, `hx-post="/ui/projects/`+e.project+`/activate"`) {
			t.Fatalf("a maintainer's project page has no Activate button: %s", page)
		}
		_, body = w.do("POST", "/ui/projects/"+e.project+"/activate", url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
		if !strings.Contains(body, "Execution activated:") {
			t.Fatalf("the maintainer's click: %s", body)
		}
		ev := e.events()
		last := ev[len(ev)-1]
		if last.Type != brabo.EventExecutionActivated || last.ActorID != e.memberID(e.maintainer) {
			t.Fatalf("the last event: %+v", last)
		}
		_, body = w.do("POST", "/ui/projects/"+e.project+"/activate", url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
		if !strings.Contains(body, "Execution was active already") {
			t.Fatalf("a second click: %s", body)
		}
		// The owner sets the budget on the same page.
		o := newWebClient(t, e.srv.URL)
		o.login(e.admin)
		_, body = o.do("POST", "/ui/projects/"+e.project+"/budget", url.Values{"limit": {"25.5"}, "inputPricePerMTok": {"3"}}, map[string]string{"X-CSRF-Token": o.csrf})
		if !strings.Contains(body, `data-limit="25.50"`) {
			t.Fatalf("the owner's budget form: %s", body)
		}
		_, body = w.do("POST", "/ui/projects/"+e.project+"/budget", url.Values{"limit": {"99"}}, map[string]string{"X-CSRF-Token": w.csrf})
		if !strings.Contains(body, "setting the budget needs the role owner") || !strings.Contains(body, `data-limit="25.50"`) {
			t.Fatalf("a maintainer's budget form: %s", body)
		}
	})
}
