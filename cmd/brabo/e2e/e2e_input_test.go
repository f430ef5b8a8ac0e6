package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	brabohttp "github.com/brabo-dev/brabo/http"
)

// written is what a request could have written: the counts of the rows a
// write would add, and permissions.json's bytes.
type written struct {
	actions, events, members, agents, autonomy, memberships int
	patterns                                                int // the agent's own
	permissions                                             string
	containerRunning                                        bool
}

func (e *env) written() written {
	e.t.Helper()
	var w written
	ctx := context.Background()
	err := e.store.View(ctx, func(tx brabo.Tx) error {
		list, err := tx.Actions(ctx, brabo.ActionFilter{Limit: 1000})
		if err != nil {
			return err
		}
		w.actions = len(list)
		evs, err := tx.Events(ctx, e.project, 0, 1000)
		if err != nil {
			return err
		}
		w.events = len(evs)
		if w.members, err = tx.CountMembers(ctx); err != nil {
			return err
		}
		agents, err := tx.Agents(ctx, e.project)
		if err != nil {
			return err
		}
		w.agents = len(agents)
		rules, err := tx.Autonomy(ctx, e.agentID)
		if err != nil {
			return err
		}
		w.autonomy = len(rules)
		patterns, err := tx.AgentPatterns(ctx, e.agentID)
		if err != nil {
			return err
		}
		w.patterns = len(patterns)
		projects, err := tx.Projects(ctx)
		if err != nil {
			return err
		}
		for _, p := range projects {
			if p.ID == e.project {
				w.containerRunning = p.ContainerRunning
			}
		}
		for _, p := range projects {
			ms, err := tx.Memberships(ctx, p.OwnerID)
			if err != nil {
				return err
			}
			w.memberships += len(ms)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.root, "permissions.json"))
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	w.permissions = string(b)
	return w
}

// unchanged fails the test when anything was written since before.
func (e *env) unchanged(before written, what string) {
	e.t.Helper()
	if after := e.written(); after != before {
		b, a := before.permissions != after.permissions, fmt.Sprintf("%+v", after)
		before.permissions, after.permissions = "", ""
		e.t.Errorf("%s wrote something (permissions.json changed: %v):\nbefore %+v\nafter  %s", what, b, before, short(a))
	}
}

// rawCall sends body as it is, with the header set given (nil: no
// Authorization at all), and returns the status, the decoded answer and
// the response headers.
func (e *env) rawCall(method, path string, header map[string]string, body []byte) (int, map[string]any, http.Header) {
	e.t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		e.t.Fatalf("%s %s: answer is not JSON (%d): %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out, resp.Header
}

// badBody sends a raw body as the maintainer and wants status and code
// with a message, and nothing written.
func (e *env) badBody(method, path string, body []byte, status int, code, what string) map[string]any {
	e.t.Helper()
	before := e.written()
	got, out, _ := e.rawCall(method, path, map[string]string{"Authorization": "Bearer " + e.maintainer}, body)
	if got != status || out["code"] != code {
		e.t.Errorf("%s: got %d %s, want %d %s", what, got, short(out), status, code)
	}
	if msg, _ := out["message"].(string); msg == "" {
		e.t.Errorf("%s: a refusal without a message: %s", what, short(out))
	}
	e.unchanged(before, what)
	return out
}

func TestBadProposalBodiesWriteNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"]}`)
		path := e.pp("/actions")
		cases := []struct{ what, body string }{
			{"malformed JSON", `{"type": "terminal", "payload": {"command": "echo hi"`},
			{"not an object", `"terminal"`},
			{"a field of the wrong type", `{"type": "terminal", "payload": {"command": 42}}`},
			{"an unknown top-level field", `{"type": "terminal", "payload": {"command": "echo hi"}, "approve": true}`},
			{"an unknown payload field", `{"type": "terminal", "payload": {"command": "echo hi", "sudo": true}}`},
			{"two JSON values", `{"type": "terminal", "payload": {"command": "echo hi"}} {"type": "terminal", "payload": {"command": "echo hi"}}`},
			{"a value then an array", `{"type": "terminal", "payload": {"command": "echo hi"}} []`},
			{"a stray closing brace", `{"type": "terminal", "payload": {"command": "echo hi"}}}`},
			{"a stray closing bracket", `{"type": "terminal", "payload": {"command": "echo hi"}}]`},
			{"an empty body", ``},
			{"a body of white space", " \n\t "},
			{"null", `null`},
			{"an unknown action type", `{"type": "rm_everything", "payload": {"command": "echo hi"}}`},
			{"a type in the wrong case", `{"type": "Terminal", "payload": {"command": "echo hi"}}`},
			{"the wildcard as a type", `{"type": "*", "payload": {"command": "echo hi"}}`},
			{"a terminal action with no command", `{"type": "terminal", "payload": {}}`},
			{"a terminal action with a blank command", `{"type": "terminal", "payload": {"command": "   "}}`},
			{"a negative timeout", `{"type": "terminal", "payload": {"command": "echo hi", "timeoutSec": -1}}`},
			{"a git_merge with no pr", `{"type": "git_merge", "payload": {}}`},
			{"a git_merge with pr 0", `{"type": "git_merge", "payload": {"pr": 0}}`},
			{"a git_merge with a negative pr", `{"type": "git_merge", "payload": {"pr": -3}}`},
			{"a git_merge of a PR that does not exist", `{"type": "git_merge", "payload": {"pr": 7}}`},
			{"a git_merge with a string pr", `{"type": "git_merge", "payload": {"pr": "1"}}`},
			{"a write_file with no path", `{"type": "write_file", "payload": {"content": "x"}}`},
			{"a git_commit with no message", `{"type": "git_commit", "payload": {}}`},
			{"a pr_open with no base", `{"type": "pr_open", "payload": {"branch": "feat", "title": "t"}}`},
		}
		for _, c := range cases {
			for _, token := range []string{e.maintainer, e.agent} {
				before := e.written()
				got, out, _ := e.rawCall("POST", path, map[string]string{"Authorization": "Bearer " + token}, []byte(c.body))
				if got != 400 || out["code"] != "invalid_action" {
					t.Errorf("%s: got %d %s, want 400 invalid_action", c.what, got, short(out))
				}
				if msg, _ := out["message"].(string); msg == "" {
					t.Errorf("%s: no message: %s", c.what, short(out))
				}
				e.unchanged(before, c.what)
			}
		}
		// The same body, well formed, is accepted: the refusals above are
		// about the body, not the route.
		if a := e.terminal("echo hi"); a["status"] != "executed" {
			t.Fatalf("a good proposal: %v", a)
		}
	})
}

func TestOversizedBodiesAre413(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"]}`)
		pending := e.terminal("touch x")["id"].(string)
		big := strings.Repeat("a", 80<<10) // over the env's MaxBody of 64 KiB
		proposal, _ := json.Marshal(map[string]any{"type": "terminal", "payload": map[string]any{"command": "echo " + big}})
		e.badBody("POST", e.pp("/actions"), proposal, 413, "too_large", "an oversized proposal")
		denial, _ := json.Marshal(map[string]any{"reason": big})
		e.badBody("POST", "/v1/actions/"+pending+"/deny", denial, 413, "too_large", "an oversized denial")
		if a := e.ok("GET", "/v1/actions/"+pending, e.maintainer, nil, 200); a["status"] != "pending" {
			t.Fatalf("an oversized denial changed the action: %v", a["status"])
		}
		// permissions.json is a body too: a valid file over MaxBody is
		// refused whole.
		allow := make([]string, 0, 4000)
		for i := 0; len(strings.Join(allow, "")) < 80<<10; i++ {
			allow = append(allow, fmt.Sprintf("Terminal(tool%d run)", i))
		}
		file, _ := json.Marshal(map[string]any{"allow": allow})
		e.badBody("PUT", e.pp("/permissions"), file, 413, "too_large", "an oversized permissions.json")
		// Just under the limit is accepted.
		ok, _ := json.Marshal(map[string]any{"type": "terminal", "payload": map[string]any{"command": "echo " + big[:60<<10]}})
		if got, out, _ := e.rawCall("POST", e.pp("/actions"), map[string]string{"Authorization": "Bearer " + e.agent}, ok); got != 201 {
			t.Fatalf("a body under the limit: %d %v", got, out["code"])
		}
	})
}

// operations lists every /v1 operation openapi.json documents (a test in
// package http keeps it equal to the route table), with its path
// parameters filled.
func operations(t *testing.T, fill map[string]string) [][2]string {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(brabohttp.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for k, v := range fill {
			path = strings.ReplaceAll(path, "{"+k+"}", v)
		}
		if strings.Contains(path, "{") {
			t.Fatalf("no value for a parameter of %s", path)
		}
		for method := range ops {
			out = append(out, [2]string{strings.ToUpper(method), path})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][1]+out[i][0] < out[j][1]+out[j][0] })
	return out
}

func TestEveryRouteNeedsAValidToken(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"]}`)
		pending := e.terminal("touch x")["id"].(string)
		task := e.ok("POST", e.pp("/tasks"), e.developer, map[string]any{"title": "Add login"}, 201)["id"].(string)
		// A live web session's secret: it opens the page, never the API.
		w := newWebClient(t, e.srv.URL)
		w.login(e.developer)
		secret := w.cookie("brabo_session")
		if secret == "" {
			t.Fatal("logging in set no session cookie")
		}
		ops := operations(t, map[string]string{"project": e.project, "agent": e.agentID, "action": pending, "task": task,
			"member": e.memberID(e.developer), "session": "ses_0000"})
		if len(ops) < 23 {
			t.Fatalf("openapi.json lists %d operations; the route table has 23", len(ops))
		}
		// Bodies that would succeed with a token: a refusal must come from
		// the missing token, not from the body.
		bodies := map[string]string{
			"POST /v1/projects":                             `{"slug": "other", "mode": "local", "root": "` + t.TempDir() + `"}`,
			"PUT " + e.pp("/container"):                     `{"running": false}`,
			"PATCH " + e.pp(""):                             `{"gitHooks": true}`,
			"POST " + e.pp("/members"):                      `{"name": "eve", "role": "owner"}`,
			"POST " + e.pp("/agents"):                       `{"name": "intruder"}`,
			"PUT " + e.pp("/permissions"):                   `{"allow": ["Terminal(rm)"]}`,
			"POST " + e.pp("/actions"):                      `{"type": "terminal", "payload": {"command": "echo pwned"}}`,
			"POST /v1/actions/" + pending + "/deny":         `{"reason": "no"}`,
			"PUT " + e.pp("/agents/"+e.agentID+"/autonomy"): `{"actionType": "*", "mode": "auto_approve"}`,
			"POST " + e.pp("/tasks"):                        `{"title": "sneak"}`,
		}
		headers := []struct {
			what string
			h    map[string]string
		}{
			{"no Authorization header", nil},
			{"an empty bearer token", map[string]string{"Authorization": "Bearer "}},
			{"a Basic credential", map[string]string{"Authorization": "Basic YWRtaW46YWRtaW4="}},
			{"the token without the Bearer scheme", map[string]string{"Authorization": e.admin}},
			{"a token that does not exist", map[string]string{"Authorization": "Bearer brb_" + strings.Repeat("0", 64)}},
			{"a token one character off", map[string]string{"Authorization": "Bearer " + e.admin[:len(e.admin)-1] + flip(e.admin[len(e.admin)-1])}},
			{"a token hash as the token", map[string]string{"Authorization": "Bearer " + brabohttp.HashToken(e.admin)}},
			{"a web session's secret as the token", map[string]string{"Authorization": "Bearer " + secret}},
		}
		for _, h := range headers {
			before := e.written()
			for _, op := range ops {
				var body []byte
				if b, ok := bodies[op[0]+" "+op[1]]; ok {
					body = []byte(b)
				}
				status, out, hdr := e.rawCall(op[0], op[1], h.h, body)
				if status != 401 || out["code"] != "unauthorized" || out["message"] == "" {
					t.Errorf("%s: %s %s: got %d %v, want 401 unauthorized", h.what, op[0], op[1], status, out)
				}
				if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s: %s %s: WWW-Authenticate %q", h.what, op[0], op[1], hdr.Get("WWW-Authenticate"))
				}
			}
			// Paths that name nothing are 401 too: nothing is revealed before
			// the token is checked.
			for _, p := range []string{"/v1/projects/prj_nope", "/v1/actions/act_nope", "/v1/nothing/here"} {
				if status, out, _ := e.rawCall("GET", p, h.h, nil); status != 401 {
					t.Errorf("%s: GET %s: got %d %v, want 401", h.what, p, status, out)
				}
			}
			e.unchanged(before, h.what)
		}
		if a := e.ok("GET", "/v1/actions/"+pending, e.admin, nil, 200); a["status"] != "pending" {
			t.Fatalf("the pending action moved: %v", a["status"])
		}
	})
}

func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}

func TestInvalidPermissionsAreRefusedWhole(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		const good = "{\n  \"allow\": [\"Terminal(echo)\"],\n  \"x-team\": {\"owner\": \"ana\"}\n}\n"
		e.setPermissions(good)
		cases := []struct {
			what, body string
			entries    map[string]string // entry → a word its why must hold
		}{
			{"an unknown label", `{"allow": ["Terminal(echo)", "Bogus(x)"]}`, map[string]string{"allow[1]": "Bogus"}},
			{"bad JSON", `{"allow": ["Terminal(echo)"`, map[string]string{"": ""}},
			{"a non-string entry", `{"deny": ["Terminal(curl)", 42]}`, map[string]string{"deny[1]": "string"}},
			{"a list that is not a list", `{"ask": "GitPush()"}`, map[string]string{"ask": "list"}},
			{"a pattern with no parentheses", `{"deny": ["Terminal"]}`, map[string]string{"deny[0]": ""}},
			{"two bad entries", `{"allow": ["Nope()", "Terminal(echo)", "Zap(x)"]}`, map[string]string{"allow[0]": "Nope", "allow[2]": "Zap"}},
			{"two bad lists", `{"allow": "Terminal(echo)", "deny": [true]}`, map[string]string{"allow": "list", "deny[0]": "string"}},
		}
		for _, c := range cases {
			out := e.badBody("PUT", e.pp("/permissions"), []byte(c.body), 400, "invalid_permissions", c.what)
			detail, _ := out["detail"].(map[string]any)
			if detail["file"] != "permissions.json" {
				t.Errorf("%s: detail names the file %v (never an absolute path)", c.what, detail["file"])
			}
			list, _ := detail["entries"].([]any)
			got := map[string]string{}
			for _, x := range list {
				m, _ := x.(map[string]any)
				entry, _ := m["entry"].(string)
				why, _ := m["why"].(string)
				if why == "" {
					t.Errorf("%s: an entry without a why: %v", c.what, m)
				}
				got[entry] = why
			}
			for entry, word := range c.entries {
				why, ok := got[entry]
				if !ok {
					t.Errorf("%s: detail does not name entry %q: %v", c.what, entry, list)
					continue
				}
				if !strings.Contains(why, word) {
					t.Errorf("%s: %s: why %q does not say %q", c.what, entry, why, word)
				}
			}
			if strings.Contains(fmt.Sprint(out), e.root) {
				t.Errorf("%s: the answer exposes the project folder: %v", c.what, out)
			}
		}
		// The file on disk is still the good one, and still decides.
		got := e.ok("GET", e.pp("/permissions"), e.developer, nil, 200)
		if got["content"] != good || got["valid"] != true {
			t.Fatalf("permissions after refused writes: %v", got)
		}
		if a := e.terminal("echo still"); a["status"] != "executed" {
			t.Fatalf("the good file no longer decides: %v", a)
		}
	})
}

func TestBadQueryStrings(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.terminal("touch a")
		e.terminal("touch b")
		bad := []struct{ path, token string }{
			{e.pp("/actions?status=bogus"), e.maintainer},
			{e.pp("/actions?status=PENDING"), e.maintainer},
			{e.pp("/actions?type=rm_everything"), e.maintainer},
			{e.pp("/actions?type=*"), e.maintainer},
			{e.pp("/actions?limit=0"), e.maintainer},
			{e.pp("/actions?limit=-1"), e.maintainer},
			{e.pp("/actions?limit=1001"), e.maintainer},
			{e.pp("/actions?limit=ten"), e.maintainer},
			{e.pp("/actions?status=bogus"), e.agent},
			{"/v1/queue?status=bogus", e.maintainer},
			{"/v1/queue?limit=0", e.maintainer},
			{"/v1/queue?type=nope", e.maintainer},
			{e.pp("/events?after=-1"), e.maintainer},
			{e.pp("/events?after=x"), e.maintainer},
			{e.pp("/events?limit=0"), e.maintainer},
			{e.pp("/events?limit=5000"), e.maintainer},
			{e.pp("/events/stream?after=x"), e.maintainer},
		}
		for _, b := range bad {
			before := e.written()
			got, out, _ := e.rawCall("GET", b.path, map[string]string{"Authorization": "Bearer " + b.token}, nil)
			if got != 400 || out["code"] != "invalid_action" || out["message"] == "" {
				t.Errorf("GET %s: got %d %v, want 400 invalid_action", b.path, got, out)
			}
			e.unchanged(before, "GET "+b.path)
		}
		got, out, _ := e.rawCall("GET", e.pp("/events"), map[string]string{"Authorization": "Bearer " + e.maintainer, "Last-Event-ID": "nope"}, nil)
		if got != 400 || out["code"] != "invalid_action" {
			t.Errorf("a bad Last-Event-ID: %d %v", got, out)
		}
		// Good values filter for real.
		if l := e.ok("GET", e.pp("/actions?limit=1"), e.maintainer, nil, 200)["actions"].([]any); len(l) != 1 {
			t.Errorf("limit=1 returned %d actions", len(l))
		}
		if l := e.ok("GET", e.pp("/actions?status=pending"), e.maintainer, nil, 200)["actions"].([]any); len(l) != 2 {
			t.Errorf("status=pending returned %d actions", len(l))
		}
		if l := e.ok("GET", e.pp("/actions?status=executed"), e.maintainer, nil, 200)["actions"].([]any); len(l) != 0 {
			t.Errorf("status=executed returned %d actions", len(l))
		}
		if l := e.ok("GET", e.pp("/events?after=1"), e.maintainer, nil, 200)["events"].([]any); len(l) != 1 {
			t.Errorf("after=1 returned %d events, want the second only", len(l))
		}
		if l := e.ok("GET", e.pp("/events?limit=1"), e.maintainer, nil, 200)["events"].([]any); len(l) != 1 {
			t.Errorf("limit=1 returned %d events", len(l))
		}
	})
}

// short formats v for a failure message, cut to a readable length.
func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 400 {
		s = s[:400] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}
