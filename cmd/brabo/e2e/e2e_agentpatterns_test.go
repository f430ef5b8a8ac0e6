package e2e

// A module agent's always-allow records that agent's own patterns (issue
// 11 item 8): the clicked unit, for that agent alone; never a blanket
// terminal: auto_approve, which would free every later command of the
// agent (ADR 0052), and never permissions.json, which is every agent's.

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// agentEvents returns the project's events of one type that name the
// agent in their payload.
func (e *env) agentEvents(typ, agentID string) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, ev := range e.events() {
		if p := payloadOf(ev); ev.Type == typ && p["agentId"] == agentID {
			p["actorId"] = ev.ActorID
			out = append(out, p)
		}
	}
	return out
}

// patternsOf lists an agent's own patterns through the API.
func (e *env) patternsOf(agentID string) []string {
	e.t.Helper()
	var out []string
	for _, p := range e.ok("GET", e.pp("/agents/"+agentID+"/patterns"), e.developer, nil, 200)["patterns"].([]any) {
		out = append(out, p.(map[string]any)["pattern"].(string))
	}
	return out
}

func stringList(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestModuleAgentClickRecordsItsOwnPatterns(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		web, webID := e.newAgent(e.admin, "dev-web")
		api, apiID := e.newAgent(e.admin, "dev-api")
		permissions := filepath.Join(e.root, "permissions.json")
		fileBefore, fileErr := os.ReadFile(permissions)

		lint := e.propose(web, "terminal", map[string]any{"command": "pnpm lint"})
		if lint["status"] != "pending" {
			t.Fatalf("dev-web's first pnpm lint: %v", lint)
		}
		id := lint["id"].(string)
		preview := e.ok("GET", "/v1/actions/"+id+"/approve-always", e.developer, nil, 200)
		if got := stringList(preview["agentPatterns"]); !slices.Equal(got, []string{"Terminal(pnpm lint)"}) ||
			len(stringList(preview["patterns"])) != 0 || preview["autonomy"] != nil || preview["agentId"] != webID {
			t.Fatalf("preview: %v", preview)
		}
		// A pattern of one agent's own is not a type-level rule: the
		// action's own role decides it, as a click that writes the file.
		d := e.ok("POST", "/v1/actions/"+id+"/approve-always", e.developer, nil, 200)
		if got := stringList(d["agentPatterns"]); !slices.Equal(got, []string{"Terminal(pnpm lint)"}) || d["agentId"] != webID ||
			d["autonomy"] != nil || len(stringList(d["patterns"])) != 0 || d["outcome"] != "approved" {
			t.Fatalf("the click: %v", d)
		}

		// Nothing in permissions.json, no terminal rule.
		if after, err := os.ReadFile(permissions); string(after) != string(fileBefore) || (err == nil) != (fileErr == nil) {
			t.Fatalf("the click changed permissions.json: %q → %q", fileBefore, after)
		}
		auto := e.ok("GET", e.pp("/agents/"+webID+"/autonomy"), e.developer, nil, 200)
		for _, r := range auto["autonomy"].([]any) {
			if r.(map[string]any)["actionType"] == "terminal" {
				t.Fatalf("a terminal autonomy rule exists: %v", auto)
			}
		}
		if len(auto["patterns"].([]any)) != 1 || str(auto["patterns"].([]any)[0].(map[string]any), "actionId") != id {
			t.Fatalf("GET autonomy's patterns: %v", auto["patterns"])
		}
		if got := e.patternsOf(webID); !slices.Equal(got, []string{"Terminal(pnpm lint)"}) {
			t.Fatalf("dev-web's patterns: %q", got)
		}
		if got := e.patternsOf(apiID); len(got) != 0 {
			t.Fatalf("dev-api's patterns: %q", got)
		}

		// The log says who granted what to whom.
		granted := e.eventsOf(id, brabo.EventPermissionGranted)
		if len(granted) != 1 || payloadOf(granted[0])["agentId"] != webID ||
			!slices.Equal(stringList(payloadOf(granted[0])["patterns"]), []string{"Terminal(pnpm lint)"}) {
			t.Fatalf("permission.granted: %v", granted)
		}
		changed := e.agentEvents(brabo.EventAutonomyChanged, webID)
		if len(changed) != 1 || changed[0]["via"] != "always_allow" || changed[0]["actorId"] != e.memberID(e.developer) ||
			!slices.Equal(stringList(changed[0]["added"]), []string{"Terminal(pnpm lint)"}) {
			t.Fatalf("autonomy.changed of the click: %v", changed)
		}

		// Its next pnpm lint runs without asking; nothing else does.
		again := e.propose(web, "terminal", map[string]any{"command": "pnpm lint"})
		if again["status"] == "pending" || again["reason"] != "agent allow: Terminal(pnpm lint)" {
			t.Fatalf("dev-web's second pnpm lint: %v", again)
		}
		if c := e.propose(web, "terminal", map[string]any{"command": "curl x"}); c["status"] != "pending" {
			t.Fatalf("dev-web's curl x: %v", c)
		}
		if o := e.propose(api, "terminal", map[string]any{"command": "pnpm lint"}); o["status"] != "pending" {
			t.Fatalf("dev-api's pnpm lint: %v", o)
		}
		if o := e.propose(e.agent, "terminal", map[string]any{"command": "pnpm lint"}); o["status"] != "pending" {
			t.Fatalf("coder's pnpm lint: %v", o)
		}

		// A maintainer removes it; the next pnpm lint asks again.
		q := "?pattern=" + url.QueryEscape("Terminal(pnpm lint)")
		e.refused("DELETE", e.pp("/agents/"+webID+"/patterns"+q), e.developer, nil, 403, "forbidden_role")
		e.refused("DELETE", e.pp("/agents/"+webID+"/patterns"), e.maintainer, nil, 400, "invalid_action")
		e.refused("DELETE", e.pp("/agents/"+apiID+"/patterns"+q), e.maintainer, nil, 404, "not_found")
		e.ok("DELETE", e.pp("/agents/"+webID+"/patterns"+q), e.maintainer, nil, 204)
		e.refused("DELETE", e.pp("/agents/"+webID+"/patterns"+q), e.maintainer, nil, 404, "not_found")
		if got := e.patternsOf(webID); len(got) != 0 {
			t.Fatalf("patterns after the removal: %q", got)
		}
		if l := e.propose(web, "terminal", map[string]any{"command": "pnpm lint"}); l["status"] != "pending" {
			t.Fatalf("pnpm lint after the removal: %v", l)
		}
		changed = e.agentEvents(brabo.EventAutonomyChanged, webID)
		if len(changed) != 2 || changed[1]["via"] != "api" || changed[1]["actorId"] != e.memberID(e.maintainer) ||
			!slices.Equal(stringList(changed[1]["removed"]), []string{"Terminal(pnpm lint)"}) {
			t.Fatalf("autonomy.changed of the removal: %v", changed)
		}
	})
}

func TestPutAutonomyRecordsAutonomyChanged(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		path := e.pp("/agents/" + e.agentID + "/autonomy")
		e.ok("PUT", path, e.maintainer, map[string]any{"actionType": "git_commit", "mode": "auto_approve"}, 200)
		e.ok("PUT", path, e.maintainer, map[string]any{"actionType": "git_commit", "mode": "auto_approve"}, 200) // no change
		e.ok("PUT", path, e.admin, map[string]any{"actionType": "git_commit", "mode": "deny"}, 200)
		got := e.agentEvents(brabo.EventAutonomyChanged, e.agentID)
		if len(got) != 2 {
			t.Fatalf("autonomy.changed: %v, want one per change", got)
		}
		first, second := got[0], got[1]
		if first["actorId"] != e.memberID(e.maintainer) || first["via"] != "api" || first["actionType"] != "git_commit" ||
			first["mode"] != "auto_approve" || first["previousMode"] != nil {
			t.Errorf("the first PUT: %v", first)
		}
		if second["actorId"] != e.memberID(e.admin) || second["mode"] != "deny" || second["previousMode"] != "auto_approve" {
			t.Errorf("the second change: %v", second)
		}
	})
}

// A click on a module agent's action of another type still writes the
// type-level rule (which needs a maintainer), and now says so in the log.
func TestModuleAgentTypeLevelClickRecordsAutonomyChanged(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		token, agentID := e.newAgent(e.admin, "dev-api")
		id := e.propose(token, "write_file", map[string]any{"path": "src/x.txt", "content": "x"})["id"].(string)
		d := e.ok("POST", "/v1/actions/"+id+"/approve-always", e.maintainer, nil, 200)
		if str(d, "autonomy", "actionType") != "write_file" || d["agentPatterns"] != nil {
			t.Fatalf("the click: %v", d)
		}
		changed := e.agentEvents(brabo.EventAutonomyChanged, agentID)
		if len(changed) != 1 || changed[0]["via"] != "always_allow" || changed[0]["actionType"] != "write_file" ||
			changed[0]["mode"] != "auto_approve" {
			t.Fatalf("autonomy.changed: %v", changed)
		}
		if g := e.eventsOf(id, brabo.EventPermissionGranted); len(g) != 1 || payloadOf(g[0])["actionType"] != "write_file" {
			t.Fatalf("permission.granted: %v", g)
		}
	})
}

// The agent card lists the agent's patterns; a maintainer removes one
// with its button, a developer sees no button and is refused.
func TestAgentCardListsAndRemovesPatterns(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		web, webID := e.newAgent(e.admin, "dev-web")
		for _, cmd := range []string{"pnpm lint", "cat src/notes.txt"} {
			id := e.propose(web, "terminal", map[string]any{"command": cmd})["id"].(string)
			e.ok("POST", "/v1/actions/"+id+"/approve-always", e.maintainer, nil, 200)
		}
		if got := e.patternsOf(webID); !slices.Equal(got, []string{"Terminal(pnpm lint)", "Terminal(cat)"}) {
			t.Fatalf("patterns: %q", got)
		}
		page := "/ui/projects/" + e.project + "/agents"
		remove := "/ui/projects/" + e.project + "/agents/" + webID + "/patterns/remove"

		dev := newWebClient(t, e.srv.URL)
		dev.login(e.developer)
		_, body := dev.do("GET", page, nil, nil)
		if !containsAll(body, `data-pattern="Terminal(pnpm lint)"`, `data-pattern="Terminal(cat)"`) || containsAll(body, remove) {
			t.Fatalf("the developer's page: the patterns without buttons expected:\n%s", body)
		}
		resp, _ := dev.do("POST", remove, url.Values{"pattern": {"Terminal(cat)"}}, map[string]string{"X-CSRF-Token": dev.csrf})
		if resp.StatusCode != 403 {
			t.Fatalf("a developer's removal: %d", resp.StatusCode)
		}

		mia := newWebClient(t, e.srv.URL)
		mia.login(e.maintainer)
		_, body = mia.do("GET", page, nil, nil)
		if !containsAll(body, remove, `aria-label="Remove Terminal(cat)"`) {
			t.Fatalf("the maintainer's page has no remove button:\n%s", body)
		}
		resp, card := mia.do("POST", remove, url.Values{"pattern": {"Terminal(cat)"}}, map[string]string{"X-CSRF-Token": mia.csrf})
		if resp.StatusCode != 200 || containsAll(card, `data-pattern="Terminal(cat)"`) || !containsAll(card, `data-pattern="Terminal(pnpm lint)"`) {
			t.Fatalf("the removal's card: %d\n%s", resp.StatusCode, card)
		}
		if got := e.patternsOf(webID); !slices.Equal(got, []string{"Terminal(pnpm lint)"}) {
			t.Fatalf("patterns after the web removal: %q", got)
		}
		changed := e.agentEvents(brabo.EventAutonomyChanged, webID)
		if last := changed[len(changed)-1]; last["via"] != "web" || !slices.Equal(stringList(last["removed"]), []string{"Terminal(cat)"}) {
			t.Fatalf("autonomy.changed of the web removal: %v", last)
		}
		// The toggle is a change of autonomy too.
		mia.do("POST", "/ui/projects/"+e.project+"/agents/"+webID+"/mode", url.Values{"mode": {"auto"}}, map[string]string{"X-CSRF-Token": mia.csrf})
		changed = e.agentEvents(brabo.EventAutonomyChanged, webID)
		if last := changed[len(changed)-1]; last["via"] != "web" || last["actionType"] != "*" || last["mode"] != "auto_approve" {
			t.Fatalf("autonomy.changed of the toggle: %v", last)
		}
	})
}

// The page's Always allow shows a module agent's own patterns before it
// records them, and records nothing when what it showed is not what it
// would record.
func TestWebAlwaysAllowShowsTheAgentsOwnPatterns(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		web, webID := e.newAgent(e.admin, "dev-web")
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		csrf := map[string]string{"X-CSRF-Token": w.csrf}

		id := e.propose(web, "terminal", map[string]any{"command": "make lint"})["id"].(string)
		resp, preview := w.do("GET", "/ui/actions/"+id+"/always", nil, nil)
		if resp.StatusCode != 200 || !containsAll(preview, "this agent's own patterns", `name="agentPattern" value="Terminal(make lint)"`) ||
			containsAll(preview, `name="pattern"`) {
			t.Fatalf("the preview: %d\n%s", resp.StatusCode, preview)
		}
		// A form that showed nothing of the agent's is stale: 409, nothing recorded.
		if resp, _ := w.do("POST", "/ui/actions/"+id+"/always", url.Values{}, csrf); resp.StatusCode != 409 {
			t.Fatalf("a stale form: %d", resp.StatusCode)
		}
		if got := e.patternsOf(webID); len(got) != 0 || e.statusOf(id) != "pending" {
			t.Fatalf("a stale form recorded %q (action %s)", got, e.statusOf(id))
		}
		resp, body := w.do("POST", "/ui/actions/"+id+"/always", url.Values{"agentPattern": {"Terminal(make lint)"}}, csrf)
		if resp.StatusCode != 200 || !containsAll(body, "Terminal(make lint) for this agent alone") {
			t.Fatalf("the click: %d\n%s", resp.StatusCode, body)
		}
		if got := e.patternsOf(webID); !slices.Equal(got, []string{"Terminal(make lint)"}) {
			t.Fatalf("patterns after the page's click: %q", got)
		}
	})
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
