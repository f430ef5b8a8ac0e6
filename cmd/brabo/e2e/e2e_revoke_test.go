package e2e

import (
	"context"
	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/store/postgres"
)

// status is the status of a GET as token (no body read).
func (e *env) status(path, token string) int {
	e.t.Helper()
	s, _ := e.call("GET", path, token, nil)
	return s
}

func TestRevokedTokensAre401OnTheirNextRequest(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"]}`)
		// Each token works, and is in the server's cache (10 s), before it
		// is revoked: the 401 that follows is the revocation, not a miss.
		if e.status("/v1/me", e.agent) != 200 || e.status("/v1/me", e.developer) != 200 {
			t.Fatal("the tokens do not work before the revocation")
		}
		// Who may not revoke: an agent (the route is not its own: 404), a
		// developer (403), another project's owner (404).
		agentToken := e.pp("/agents/" + e.agentID + "/token")
		e.refused("DELETE", agentToken, e.agent, nil, 404, "not_found")
		e.refused("DELETE", agentToken, e.developer, nil, 403, "forbidden_role")
		blog := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "blog", "mode": "local", "root": t.TempDir()}, 201)["id"].(string)
		outsider := e.ok("POST", "/v1/projects/"+blog+"/members", e.admin, map[string]any{"name": "olga", "role": "owner"}, 201)["token"].(string)
		devID := e.memberID(e.developer)
		e.refused("DELETE", "/v1/members/"+devID+"/token", outsider, nil, 404, "not_found")
		e.refused("DELETE", "/v1/members/"+devID+"/token", e.maintainer, nil, 403, "forbidden_role")
		e.refused("DELETE", "/v1/members/"+e.memberID(e.admin)+"/token", e.developer, nil, 403, "forbidden_role")
		if e.status("/v1/me", e.agent) != 200 || e.status("/v1/me", e.developer) != 200 || e.status("/v1/me", e.admin) != 200 {
			t.Fatal("a refused revocation revoked something")
		}

		// The agent's token, revoked by a maintainer: refused at once, on
		// every route, and nothing it sends is written.
		e.ok("DELETE", agentToken, e.maintainer, nil, 204)
		before := e.written()
		e.refused("GET", "/v1/me", e.agent, nil, 401, "unauthorized")
		e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "terminal", "payload": map[string]any{"command": "echo hi"}}, 401, "unauthorized")
		e.unchanged(before, "a revoked agent token")
		agents := e.ok("GET", e.pp("/agents"), e.maintainer, nil, 200)["agents"].([]any)
		if a := agents[0].(map[string]any); a["id"] != e.agentID || a["revokedAt"] == nil {
			t.Errorf("the revoked agent as listed: %v", a)
		}
		// Revoking again changes nothing and is not an error.
		e.ok("DELETE", agentToken, e.maintainer, nil, 204)

		// A member's token, revoked by the owner of its project: its web
		// session ends with it.
		w := newWebClient(t, e.srv.URL)
		w.login(e.developer)
		if resp, _ := w.do("GET", "/", nil, nil); resp.StatusCode != 200 {
			t.Fatalf("the developer's page before the revocation: %d", resp.StatusCode)
		}
		e.ok("DELETE", "/v1/members/"+devID+"/token", e.admin, nil, 204)
		e.refused("GET", "/v1/me", e.developer, nil, 401, "unauthorized")
		if resp, _ := w.do("GET", "/", nil, nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
			t.Errorf("the revoked member's web session still opens the page: %d", resp.StatusCode)
		}
		// And a member may revoke its own.
		e.ok("DELETE", "/v1/members/"+e.memberID(e.maintainer)+"/token", e.maintainer, nil, 204)
		e.refused("GET", "/v1/me", e.maintainer, nil, 401, "unauthorized")
		if e.status("/v1/me", e.admin) != 200 {
			t.Error("revoking others' tokens revoked the admin's")
		}
	})
}

func TestRevokingAnAgentOnItsCard(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		dev := newWebClient(t, e.srv.URL)
		dev.login(e.developer)
		_, page := dev.do("GET", "/ui/projects/"+e.project+"/agents", nil, nil)
		if strings.Contains(page, "Revoke token") {
			t.Error("a developer is offered the Revoke token button")
		}
		path := "/ui/projects/" + e.project + "/agents/" + e.agentID + "/revoke"
		if resp, _ := dev.do("POST", path, url.Values{}, map[string]string{"X-CSRF-Token": dev.csrf}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("a developer's click: %d, want 403", resp.StatusCode)
		}
		if e.status("/v1/me", e.agent) != 200 {
			t.Fatal("a developer's click revoked the agent's token")
		}
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		_, page = w.do("GET", "/ui/projects/"+e.project+"/agents", nil, nil)
		if !strings.Contains(page, `hx-post="`+path+`"`) || !strings.Contains(page, "Revoke token") {
			t.Fatalf("the maintainer's agents page has no Revoke token button:\n%s", page)
		}
		// Without the page's CSRF token nothing happens.
		if resp, _ := w.do("POST", path, url.Values{}, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("a click without the CSRF token: %d", resp.StatusCode)
		}
		resp, card := w.do("POST", path, url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
		if resp.StatusCode != 200 || !strings.Contains(card, `data-revoked="true"`) || strings.Contains(card, "Revoke token") {
			t.Fatalf("the card after the click: %d\n%s", resp.StatusCode, card)
		}
		e.refused("GET", "/v1/me", e.agent, nil, 401, "unauthorized")
	})
}

func TestLogoutAndRevokedSessionsAre401(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		secret := w.cookie("brabo_session")
		if secret == "" || strings.Contains(secret, e.maintainer) {
			t.Fatalf("the session cookie carries the member token, or nothing: %q", secret)
		}
		// The member token itself in the cookie opens nothing.
		forged := newWebClient(t, e.srv.URL)
		forged.setCookie("brabo_session", e.maintainer)
		if resp, _ := forged.do("GET", "/", nil, nil); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("a member token as the session cookie: %d, want the login redirect", resp.StatusCode)
		}
		// The session is listed, for the member only.
		list := e.ok("GET", "/v1/sessions", e.maintainer, nil, 200)["sessions"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["expiresAt"] == nil {
			t.Fatalf("the maintainer's sessions: %v", list)
		}
		sessionID := list[0].(map[string]any)["id"].(string)
		if others := e.ok("GET", "/v1/sessions", e.developer, nil, 200)["sessions"].([]any); len(others) != 0 {
			t.Errorf("the developer lists sessions it does not have: %v", others)
		}
		e.refused("DELETE", "/v1/sessions/"+sessionID, e.developer, nil, 404, "not_found")

		// A copy of the cookie, used after the logout, is refused: logout
		// revoked the session, it did not only drop the cookie.
		copyOf := newWebClient(t, e.srv.URL)
		copyOf.setCookie("brabo_session", secret)
		if resp, _ := copyOf.do("GET", "/ui/queue", nil, nil); resp.StatusCode != 200 {
			t.Fatalf("the copied cookie before the logout: %d", resp.StatusCode)
		}
		resp, _ := w.do("POST", "/logout", url.Values{"csrf": {w.csrf}}, nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
			t.Fatalf("logout: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp, _ := copyOf.do("GET", "/ui/queue", nil, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the logged-out session's cookie: %d, want 401", resp.StatusCode)
		}
		if list := e.ok("GET", "/v1/sessions", e.maintainer, nil, 200)["sessions"].([]any); len(list) != 0 {
			t.Errorf("a logged-out session is still listed: %v", list)
		}
		// The member token still works: logging out ends the session only.
		if e.status("/v1/me", e.maintainer) != 200 {
			t.Error("logging out revoked the member token")
		}

		// A session revoked through the API is refused on its next request.
		w2 := newWebClient(t, e.srv.URL)
		w2.login(e.maintainer)
		if resp, _ := w2.do("GET", "/ui/queue", nil, nil); resp.StatusCode != 200 {
			t.Fatalf("a second session: %d", resp.StatusCode)
		}
		id := e.ok("GET", "/v1/sessions", e.maintainer, nil, 200)["sessions"].([]any)[0].(map[string]any)["id"].(string)
		e.ok("DELETE", "/v1/sessions/"+id, e.maintainer, nil, 204)
		if resp, _ := w2.do("GET", "/ui/queue", nil, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a revoked session: %d, want 401", resp.StatusCode)
		}
		e.refused("DELETE", "/v1/sessions/"+id, e.maintainer, nil, 404, "not_found")
	})
}

func TestSessionsExpire(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.api.SessionTTL = 1500 * time.Millisecond
		w := newWebClient(t, e.srv.URL)
		resp := w.login(e.maintainer)
		for _, c := range resp.Cookies() {
			if c.Name == "brabo_session" && c.MaxAge != 1 {
				t.Errorf("the cookie's Max-Age is %d, want the session's 1 s", c.MaxAge)
			}
		}
		copyOf := newWebClient(t, e.srv.URL)
		copyOf.setCookie("brabo_session", w.cookie("brabo_session"))
		if resp, _ := copyOf.do("GET", "/ui/queue", nil, nil); resp.StatusCode != 200 {
			t.Fatalf("a fresh session: %d", resp.StatusCode)
		}
		time.Sleep(1600 * time.Millisecond)
		if resp, _ := copyOf.do("GET", "/ui/queue", nil, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("an expired session: %d, want 401", resp.StatusCode)
		}
	})
}

// TestRevocationReachesTheOtherInstance runs two API servers, each with
// its own PostgreSQL store (pool and LISTEN connection), on one database:
// a token revoked through one and a session logged out through one are
// refused by the other within a second, although the other cached both
// for ten.
func TestRevocationReachesTheOtherInstance(t *testing.T) {
	db := postgresURL(t)
	open := func() (*env, *served) { // another brabo serve on the database
		a, err := app.Open(context.Background(), app.Config{Data: t.TempDir(), DB: db, Addr: "127.0.0.1:0", NotSubreaper: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		b := envOf(t, a)
		return b, b.srv
	}
	s, err := postgres.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, s, onDB(db)) // instance A, with the project, members and agent
	b, bsrv := open()               // instance B, on the same database
	b.project = e.project

	w := newWebClient(t, bsrv.URL)
	w.login(e.developer)
	wa := newWebClient(t, e.srv.URL)
	wa.setCookie("brabo_session", w.cookie("brabo_session"))
	wa.csrf = w.csrf
	if b.status("/v1/me", e.agent) != 200 || b.status("/v1/me", e.maintainer) != 200 {
		t.Fatal("instance B does not know the tokens")
	}
	if resp, _ := w.do("GET", "/ui/queue", nil, nil); resp.StatusCode != 200 {
		t.Fatal("instance B does not know the session")
	}
	within := func(what string, refused func() bool) {
		t.Helper()
		start := time.Now()
		for !refused() {
			if time.Since(start) > time.Second {
				t.Errorf("%s: still accepted by the other instance after %s", what, time.Since(start).Round(time.Millisecond))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	e.ok("DELETE", e.pp("/agents/"+e.agentID+"/token"), e.maintainer, nil, 204)
	within("a revoked agent token", func() bool { return b.status("/v1/me", e.agent) == 401 })
	e.ok("DELETE", "/v1/members/"+e.memberID(e.maintainer)+"/token", e.admin, nil, 204)
	within("a revoked member token", func() bool { return b.status("/v1/me", e.maintainer) == 401 })
	if resp, _ := wa.do("POST", "/logout", url.Values{"csrf": {wa.csrf}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout on instance A: %d", resp.StatusCode)
	}
	within("a logged-out session", func() bool {
		resp, _ := w.do("GET", "/ui/queue", nil, nil)
		return resp.StatusCode == 401
	})
	if b.status("/v1/me", e.admin) != 200 {
		t.Error("the admin's token stopped working on instance B")
	}
}
