package e2e

import (
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"

	"github.com/brabo-dev/brabo/store/sqlite"
)

// webClient is a browser-like client: it keeps cookies and does not
// follow redirects, so each answer can be checked.
type webClient struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

func newWebClient(t *testing.T, base string) *webClient {
	jar, _ := cookiejar.New(nil)
	return &webClient{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (w *webClient) do(method, path string, form url.Values, header map[string]string) (*http.Response, string) {
	w.t.Helper()
	if m := uiDecidePath.FindStringSubmatch(path); m != nil && method == "POST" && form != nil && form.Get("revision") == "" {
		// The form the card renders sends the card's revision: so does
		// this one, read from the card as the page shows it.
		if _, card := w.do("GET", "/ui/cards/"+m[1], nil, nil); card != "" {
			if rev := revisionInput.FindStringSubmatch(card); rev != nil {
				form = maps.Clone(form)
				form.Set("revision", html.UnescapeString(rev[1]))
			}
		}
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, w.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// uiDecidePath is the web form's approve or always allow of one action;
// revisionInput the hidden input the card renders with its revision.
var (
	uiDecidePath  = regexp.MustCompile(`^/ui/actions/([^/?]+)/(approve|always)$`)
	revisionInput = regexp.MustCompile(`name="revision"[^>]*value="([^"]*)"`)
)

// cookie is the value of the client's cookie called name, "" for none.
func (w *webClient) cookie(name string) string {
	u, _ := url.Parse(w.base)
	for _, c := range w.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// setCookie gives the client a cookie, as a copy of another's or a forgery.
func (w *webClient) setCookie(name, value string) {
	u, _ := url.Parse(w.base)
	w.c.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

var (
	hiddenCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	headerCSRF = regexp.MustCompile(`"X-CSRF-Token": "([^"]+)"`)
)

// login logs in through the form and reads the page's CSRF token.
func (w *webClient) login(token string) *http.Response {
	w.t.Helper()
	_, page := w.do("GET", "/login", nil, nil)
	m := hiddenCSRF.FindStringSubmatch(page)
	if m == nil {
		w.t.Fatalf("the login page has no CSRF field:\n%s", page)
	}
	resp, _ := w.do("POST", "/login", url.Values{"csrf": {m[1]}, "token": {token}}, nil)
	if loc := resp.Header.Get("Location"); loc == "/" {
		_, queue := w.do("GET", "/", nil, nil)
		if m := headerCSRF.FindStringSubmatch(queue); m != nil {
			w.csrf = m[1]
		}
	}
	return resp
}

func TestWebSession(t *testing.T) {
	s, err := sqlite.Open(t.Context(), t.TempDir()+"/brabo.db")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)

	t.Run("no session: a page redirects to the login, a fragment is 401", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		if resp, _ := w.do("GET", "/", nil, nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
			t.Errorf("GET /: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp, _ := w.do("GET", "/ui/queue", nil, nil); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("HX-Redirect") != "/login" {
			t.Errorf("GET /ui/queue: %d %v", resp.StatusCode, resp.Header)
		}
	})

	t.Run("an agent token cannot log in", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		resp := w.login(e.agent)
		if resp.Header.Get("Location") != "/login?error=agent" {
			t.Errorf("agent login: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp, _ := w.do("GET", "/", nil, nil); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("after an agent's login, GET / is %d: a session was opened", resp.StatusCode)
		}
		_, page := w.do("GET", "/login?error=agent", nil, nil)
		if !strings.Contains(page, "agents never decide") {
			t.Error("the login page does not say why")
		}
		_, page = w.do("GET", "/login?error=<b>pay+here</b>", nil, nil)
		if strings.Contains(page, "pay here") {
			t.Error("the login page shows text a link chose")
		}
	})

	t.Run("a login without the form's nonce is refused", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		resp, _ := w.do("POST", "/login", url.Values{"token": {e.admin}}, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("login without nonce: %d", resp.StatusCode)
		}
	})

	t.Run("the session cookie is HttpOnly and SameSite=Strict; the page is not frameable", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		resp := w.login(e.admin)
		var session *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == "brabo_session" {
				session = c
			}
		}
		if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
			t.Fatalf("session cookie: %+v", session)
		}
		resp, page := w.do("GET", "/", nil, nil)
		if resp.StatusCode != 200 || !strings.Contains(page, "Approval queue") {
			t.Fatalf("GET / after login: %d", resp.StatusCode)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe") {
			t.Errorf("CSP %q", csp)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Error("no X-Frame-Options: DENY")
		}
	})

	t.Run("a decision needs the CSRF token of its own session", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		other := newWebClient(t, e.srv.URL)
		other.login(e.developer)
		if w.csrf == "" || other.csrf == "" || other.csrf == w.csrf {
			t.Fatalf("the sessions' CSRF tokens %q and %q: want two different ones", w.csrf, other.csrf)
		}
		id := e.terminal("touch web-csrf.txt")["id"].(string)
		for name, header := range map[string]map[string]string{
			"none (an empty form field)": nil,
			"a made-up token":            {"X-CSRF-Token": "x"},
			"another session's token":    {"X-CSRF-Token": other.csrf},
			"the session token itself":   {"X-CSRF-Token": e.maintainer},
			"a cross-site Origin header": {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "X-CSRF-Token": w.csrf},
		} {
			resp, _ := w.do("POST", "/ui/actions/"+id+"/approve", url.Values{"csrf": {""}}, header)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: %d, want 403", name, resp.StatusCode)
			}
		}
		if got := str(e.ok("GET", "/v1/actions/"+id, e.admin, nil, 200), "status"); got != "pending" {
			t.Fatalf("after refused POSTs the action is %s", got)
		}
		resp, body := w.do("POST", "/ui/actions/"+id+"/approve", url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
		if resp.StatusCode != 200 || !strings.Contains(body, "executed, exit 0") {
			t.Fatalf("approve with the token: %d %s", resp.StatusCode, body)
		}
		if got := str(e.ok("GET", "/v1/actions/"+id, e.admin, nil, 200), "status"); got != "executed" {
			t.Fatalf("the approved action is %s", got)
		}
		if len(e.eventsOf(id, "proposed_action.approved")) != 1 {
			t.Error("want one approved event")
		}
	})

	t.Run("a role below the type's minimum cannot decide, even by a hand-made POST", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		w.login(e.developer)
		id := e.propose(e.agent, "git_push", map[string]any{"branch": "main"})["id"].(string)
		_, card := w.do("GET", "/ui/cards/"+id, nil, nil)
		if strings.Contains(card, "<button") || !strings.Contains(card, "needs the role maintainer") {
			t.Errorf("a developer's git_push card:\n%s", card)
		}
		resp, body := w.do("POST", "/ui/actions/"+id+"/approve", url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "maintainer") {
			t.Errorf("developer approving a git_push: %d %s", resp.StatusCode, body)
		}
		if got := str(e.ok("GET", "/v1/actions/"+id, e.admin, nil, 200), "status"); got != "pending" {
			t.Errorf("the git_push is %s", got)
		}
	})

	t.Run("no always allow for an external-effect or privileged command", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		for _, command := range []string{"git push origin main", "sudo ls", "npm test && gh pr create --fill"} {
			id := e.terminal(command)["id"].(string)
			_, card := w.do("GET", "/ui/cards/"+id, nil, nil)
			if !strings.Contains(card, `class="approve"`) || strings.Contains(card, `class="always"`) {
				t.Errorf("%q: want Approve and no Always allow:\n%s", command, card)
			}
		}
		id := e.terminal("make lint")["id"].(string)
		if _, card := w.do("GET", "/ui/cards/"+id, nil, nil); !strings.Contains(card, `class="always"`) {
			t.Errorf("an ordinary command has no Always allow:\n%s", card)
		}
	})

	t.Run("a deny without a reason decides nothing", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		id := e.terminal("touch web-deny.txt")["id"].(string)
		resp, body := w.do("POST", "/ui/actions/"+id+"/deny", url.Values{"reason": {"  "}}, map[string]string{"X-CSRF-Token": w.csrf})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Say why") || !strings.Contains(body, `id="card-`+id) {
			t.Errorf("empty deny: %d %s", resp.StatusCode, body)
		}
		if got := str(e.ok("GET", "/v1/actions/"+id, e.admin, nil, 200), "status"); got != "pending" {
			t.Errorf("the action is %s", got)
		}
	})

	t.Run("another project's action is not found", func(t *testing.T) {
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		resp, _ := w.do("GET", "/ui/cards/act_nope", nil, nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown action: %d", resp.StatusCode)
		}
		resp, page := w.do("GET", "/ui/projects/prj_nope/agents", nil, nil)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(page, "Back to the approval queue") {
			t.Errorf("unknown project page: %d", resp.StatusCode)
		}
	})
}

func TestWebCardsAndAgentStates(t *testing.T) {
	s, err := sqlite.Open(t.Context(), t.TempDir()+"/brabo.db")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	w := newWebClient(t, e.srv.URL)
	w.login(e.maintainer)

	t.Run("a 409 shows its sentence on the card", func(t *testing.T) {
		id := e.terminal("touch web-409.txt")["id"].(string)
		e.ok("POST", "/v1/actions/"+id+"/deny", e.admin, map[string]any{"reason": "no"}, 200)
		resp, body := w.do("POST", "/ui/actions/"+id+"/approve", url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
		if resp.StatusCode != http.StatusConflict || !strings.Contains(body, `class="refusal"`) || !strings.Contains(body, `id="card-`+id) {
			t.Fatalf("approving a denied action: %d %s", resp.StatusCode, body)
		}
		if strings.Contains(body, "<button") {
			t.Error("a decided card still has buttons")
		}
	})

	t.Run("the agent card says working, blocked with origin, or idle", func(t *testing.T) {
		ctx := t.Context()
		now := time.Now().UTC()
		err := e.store.Update(ctx, func(tx brabo.Tx) error {
			for _, task := range []*brabo.Task{
				{ID: "tsk_work", ProjectID: e.project, Title: "Add login", AgentID: e.agentID, Status: brabo.TaskInProgress, CreatedAt: now, UpdatedAt: now},
			} {
				if err := tx.CreateTask(ctx, task); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		state := regexp.MustCompile(`(?s)id="agent-` + e.agentID + `".*?<p class="state"[^>]*>(.*?)</p>`)
		_, page := w.do("GET", "/ui/projects/"+e.project+"/agents", nil, nil)
		if m := state.FindStringSubmatch(page); m == nil || !strings.Contains(m[1], "working") || !strings.Contains(m[1], "Add login") {
			t.Errorf("in progress: %q", m)
		}
		err = e.store.Update(ctx, func(tx brabo.Tx) error {
			task, err := tx.Task(ctx, "tsk_work")
			if err != nil {
				return err
			}
			task.Status, task.BlockedReason, task.BlockedOrigin, task.UpdatedAt = brabo.TaskBlocked, "nobody decided within the cap", brabo.OriginPolicy, now.Add(time.Second)
			return tx.UpdateTask(ctx, task)
		})
		if err != nil {
			t.Fatal(err)
		}
		_, page = w.do("GET", "/ui/projects/"+e.project+"/agents", nil, nil)
		if m := state.FindStringSubmatch(page); m == nil || !strings.Contains(m[1], "blocked") || !strings.Contains(m[1], "origin policy") ||
			!strings.Contains(m[1], "nobody decided") {
			t.Errorf("blocked: %q", m)
		}
	})

	t.Run("the toggle is refused below maintainer", func(t *testing.T) {
		dev := newWebClient(t, e.srv.URL)
		dev.login(e.developer)
		resp, _ := dev.do("POST", "/ui/projects/"+e.project+"/agents/"+e.agentID+"/mode", url.Values{"mode": {"auto"}}, map[string]string{"X-CSRF-Token": dev.csrf})
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a developer's toggle: %d", resp.StatusCode)
		}
		rules := e.ok("GET", e.pp("/agents/"+e.agentID+"/autonomy"), e.admin, nil, 200)["autonomy"].([]any)
		if len(rules) != 0 {
			t.Errorf("autonomy after a refused toggle: %v", rules)
		}
	})
}
