package e2e

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// The action's page decides (issue 28): a pending action's page has the
// queue card's buttons under "The card as proposed"; a decision sent from
// that page answers with a reload of it (HX-Redirect), which then reads
// "The card as decided" with no buttons; a refusal there re-renders the
// whole card (the whole diff), not the queue's.
func TestActionPageDecides(t *testing.T) {
	s, err := sqlite.Open(t.Context(), t.TempDir()+"/brabo.db")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	hook := e.ok("POST", e.pp("/agents"), e.maintainer, map[string]any{"name": "claude", "kind": "hook"}, 201)
	token := hook["token"].(string)
	propose := func(typ string, payload map[string]any) string {
		t.Helper()
		a := e.ok("POST", e.pp("/actions"), token, map[string]any{"type": typ, "payload": payload,
			"execution": map[string]any{"mode": "external", "runner": "claude-code"}}, 201)
		if a["status"] != "pending" {
			t.Fatalf("%s %v is %v", typ, payload, a["status"])
		}
		return a["id"].(string)
	}
	content := strings.Repeat("line\n", 60) + "the sixtieth-first line\n"
	write := propose("write_file", map[string]any{"path": "notes/long.txt", "content": content})
	w := newWebClient(t, e.srv.URL)
	w.login(e.maintainer)
	page := "/ui/actions/" + write
	_, body := w.do("GET", page, nil, nil)
	for _, want := range []string{"The card as proposed", `hx-post="/ui/actions/` + write + `/approve"`, `hx-get="/ui/actions/` + write + `/deny"`, "the sixtieth-first line"} {
		if !strings.Contains(body, want) {
			t.Errorf("the pending action's page lacks %q", want)
		}
	}
	if strings.Contains(body, "The card as decided") || strings.Contains(body, `class="select"`) {
		t.Errorf("the pending action's page reads as decided, or has the queue's checkbox")
	}
	fromPage := map[string]string{"X-CSRF-Token": w.csrf, "HX-Request": "true", "HX-Current-URL": e.srv.URL + page}
	// A deny with no reason, from the page: refused on the whole card.
	resp, body := w.do("POST", page+"/deny", url.Values{"reason": {" "}}, fromPage)
	if resp.StatusCode != 400 || !strings.Contains(body, "the sixtieth-first line") || resp.Header.Get("HX-Redirect") != "" {
		t.Errorf("a deny with no reason from the page: %d %q, the whole card: %v", resp.StatusCode, resp.Header.Get("HX-Redirect"), strings.Contains(body, "the sixtieth-first line"))
	}
	// The same from the queue keeps the queue's card: its first lines only.
	_, body = w.do("POST", page+"/deny", url.Values{"reason": {" "}}, map[string]string{"X-CSRF-Token": w.csrf, "HX-Request": "true", "HX-Current-URL": e.srv.URL + "/"})
	if strings.Contains(body, "the sixtieth-first line") {
		t.Errorf("a refusal in the queue re-rendered the action page's card")
	}
	resp, _ = w.do("POST", page+"/approve", url.Values{}, fromPage)
	if resp.StatusCode != 200 || resp.Header.Get("HX-Redirect") != page {
		t.Fatalf("an approve from the page: %d, HX-Redirect %q, want %q", resp.StatusCode, resp.Header.Get("HX-Redirect"), page)
	}
	_, body = w.do("GET", page, nil, nil)
	if !strings.Contains(body, "The card as decided") || strings.Contains(body, "/approve\"") || strings.Contains(body, "The card as proposed") {
		t.Errorf("the decided action's page:\n%s", body)
	}
	// Deny, from the page, with a reason.
	cmd := propose("terminal", map[string]any{"command": "touch from-the-page.txt"})
	page = "/ui/actions/" + cmd
	fromPage["HX-Current-URL"] = e.srv.URL + page
	// Always allow, where the queue's card offers it, is on the page too.
	_, queue := w.do("GET", "/", nil, nil)
	_, body = w.do("GET", page, nil, nil)
	always := `hx-get="/ui/actions/` + cmd + `/always"`
	if !strings.Contains(queue, always) || !strings.Contains(body, always) {
		t.Errorf("Always allow: on the queue's card %v, on the page %v", strings.Contains(queue, always), strings.Contains(body, always))
	}
	resp, _ = w.do("POST", page+"/deny", url.Values{"reason": {"not from here"}}, fromPage)
	if resp.StatusCode != 200 || resp.Header.Get("HX-Redirect") != page {
		t.Fatalf("a deny from the page: %d %q", resp.StatusCode, resp.Header.Get("HX-Redirect"))
	}
	if a := e.ok("GET", "/v1/actions/"+cmd, e.maintainer, nil, 200); a["status"] != "denied" {
		t.Errorf("after the page's deny: %v", a["status"])
	}
	// Always allow from the page: what its preview shows is recorded, the
	// action approved, and the page reloads as decided.
	again := propose("terminal", map[string]any{"command": "touch always-from-the-page.txt"})
	page = "/ui/actions/" + again
	fromPage["HX-Current-URL"] = e.srv.URL + page
	_, preview := w.do("GET", page+"/always", nil, fromPage)
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="(pattern|agentPattern|autonomy)" value="([^"]*)">`).FindAllStringSubmatch(preview, -1) {
		form.Add(m[1], html.UnescapeString(m[2]))
	}
	if len(form) == 0 {
		t.Fatalf("the always preview from the page shows nothing to record:\n%s", preview)
	}
	resp, _ = w.do("POST", page+"/always", form, fromPage)
	if resp.StatusCode != 200 || resp.Header.Get("HX-Redirect") != page {
		t.Fatalf("always allow from the page: %d %q", resp.StatusCode, resp.Header.Get("HX-Redirect"))
	}
	if a := e.ok("GET", "/v1/actions/"+again, e.maintainer, nil, 200); a["status"] != "approved" {
		t.Errorf("after the page's always allow: %v", a["status"])
	}
}

// The agent's own words about a call are bounded at the API edge and shown
// on the card, labelled as the agent's and escaped; a risky card is marked
// at its top and comes first in the queue.
func TestAgentWordsAndRiskOnTheCard(t *testing.T) {
	s, err := sqlite.Open(t.Context(), t.TempDir()+"/brabo.db")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	hook := e.ok("POST", e.pp("/agents"), e.maintainer, map[string]any{"name": "claude", "kind": "hook"}, 201)
	token := hook["token"].(string)
	body := func(command, description string) map[string]any {
		return map[string]any{"type": "terminal", "payload": map[string]any{"command": command},
			"execution": map[string]any{"mode": "external", "runner": "claude-code", "description": description}}
	}
	e.refused("POST", e.pp("/actions"), token, body("touch too-long.txt", strings.Repeat("x", brabo.MaxDescription+1)), 400, "invalid_action")
	risky := e.ok("POST", e.pp("/actions"), token, body("git push --force origin main", `<script>alert(1)</script> "rebase" & push`), 201)
	if str(risky, "execution", "description") != `<script>alert(1)</script> "rebase" & push` {
		t.Errorf("the action's execution: %v", risky["execution"])
	}
	plain := e.ok("POST", e.pp("/actions"), token, body("touch plain.txt", strings.Repeat("y", brabo.MaxDescription)), 201)
	w := newWebClient(t, e.srv.URL)
	w.login(e.maintainer)
	_, page := w.do("GET", "/", nil, nil)
	ri, pi := strings.Index(page, `id="card-`+risky["id"].(string)+`"`), strings.Index(page, `id="card-`+plain["id"].(string)+`"`)
	if ri < 0 || pi < 0 || ri > pi {
		t.Fatalf("the risky card (older) is not first: %d, %d", ri, pi)
	}
	card := page[ri:pi]
	if strings.Contains(card, "<script>alert") || !strings.Contains(card, "&lt;script&gt;alert(1)&lt;/script&gt; &#34;rebase&#34; &amp; push") ||
		!strings.Contains(card, "The agent's own words (not brabo's)") {
		t.Errorf("the agent's words on the card:\n%s", card)
	}
	if !strings.Contains(card, `class="risk-banner"`) || !strings.Contains(card, "a force push") || !strings.Contains(card, "the protected branch main") ||
		!strings.Contains(card, `data-risk="`) || strings.Contains(card, `data-risk="0"`) {
		t.Errorf("the risky card is not marked:\n%s", card)
	}
	if rest := page[pi:]; strings.Contains(rest[:strings.Index(rest, "</article>")], "risk-banner") {
		t.Errorf("the plain card is marked risky")
	}
}
