package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The scripted dev agent of the browser test: one command that needs
// approval; when resumed, it must have read the human's reason.
const denyScript = `{"turns": [
  {"toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "touch denied.txt"}}]},
  {"expectToolResult": "not in this sprint", "content": "Understood: I leave denied.txt alone."}
]}`

// TestWebApprovalQueue drives the web page of the real `brabo serve` in a
// real headless Chromium: the live queue, the three decisions, roles,
// CSRF, the agent card, the session log, the permissions view, keyboard
// use, and the screenshots.
func TestWebApprovalQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server and a browser")
	}
	ctx := browser(t)
	data, root, shots := t.TempDir(), t.TempDir(), t.TempDir()
	model := scriptedModel(t, denyScript)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)", "Terminal(echo)"]}`), 0o644)
	gitProject(t, root)
	srv := startServe(t, data, "--model", model)
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	bot := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "ci-bot"}, 201)
	botID, botToken := bot["agent"].(map[string]any)["id"].(string), bot["token"].(string)
	dana := srv.must(t, "POST", "/v1/projects/"+project+"/members", admin, map[string]any{"name": "dana", "role": "developer"}, 201)["token"].(string)

	propose := func(typ string, payload map[string]any) map[string]any {
		t.Helper()
		return srv.must(t, "POST", "/v1/projects/"+project+"/actions", botToken, map[string]any{"type": typ, "payload": payload}, 201)
	}
	pending := func(command string) string {
		t.Helper()
		a := propose("terminal", map[string]any{"command": command})
		if a["status"] != "pending" {
			t.Fatalf("%q was %v, want pending", command, a["status"])
		}
		return a["id"].(string)
	}
	status := func(id string) string {
		_, a, _ := srv.call("GET", "/v1/actions/"+id, admin, nil)
		s, _ := a["status"].(string)
		return s
	}
	card := func(id string) string { return "#card-" + id }

	webLogin(t, ctx, srv.url, admin)

	var liveID string
	t.Run("a pending action proposed through the API appears without reload", func(t *testing.T) {
		evalBool(t, ctx, "mark the page", `(window.notReloaded = 42) === 42`)
		waitJS(t, ctx, "the stream to connect", `window.braboStream && window.braboStream.readyState === 1`)
		liveID = pending("touch live.txt && echo live")
		do(t, ctx, "the card arrives", chromedp.WaitVisible(css(card(liveID))))
		evalBool(t, ctx, "no reload", `window.notReloaded === 42`)
		title := get(t, ctx, "title", chromedp.Title())
		text := text(t, ctx, card(liveID))
		if !strings.HasPrefix(title, "(1) ") {
			t.Errorf("title %q: want the count (1) first", title)
		}
		for _, want := range []string{"terminal", "ci-bot", "touch live.txt && echo live", "asks a human: nothing in permissions.json allows `touch live.txt`, one part of the line",
			"permissions.json allow: Terminal(echo)", "scope root", "Approve", "Deny", "Always allow"} {
			if !strings.Contains(text, want) {
				t.Errorf("the card lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("a (re)connection merges what the stream missed", func(t *testing.T) {
		evalBool(t, ctx, "close the stream", `(window.braboStream.close(), true)`)
		id := pending("touch missed.txt")
		time.Sleep(500 * time.Millisecond)
		evalBool(t, ctx, "no card without the stream", fmt.Sprintf(`!document.querySelector(%q)`, card(id)))
		evalBool(t, ctx, "merge as on open", `(window.braboMerge(), true)`)
		do(t, ctx, "the missed card arrives", chromedp.WaitVisible(css(card(id))))
		evalBool(t, ctx, "the live card stays, once", fmt.Sprintf(`document.querySelectorAll(%q).length === 1`, card(liveID)))
		do(t, ctx, "reload for a live stream again", chromedp.Reload(), chromedp.WaitVisible(css("#queue")))
		waitJS(t, ctx, "the stream to connect", `window.braboStream && window.braboStream.readyState === 1`)
		do(t, ctx, "deny the missed one", chromedp.Click(css(card(id)+" button.deny")),
			chromedp.WaitVisible(css(card(id)+" textarea")),
			chromedp.SendKeys(css(card(id)+" textarea"), "only a test"),
			chromedp.Click(css(card(id)+" form button.deny")),
			chromedp.WaitNotPresent(css(card(id))))
	})

	t.Run("Approve executes it and the card leaves the queue", func(t *testing.T) {
		do(t, ctx, "approve", chromedp.Click(css(card(liveID)+" button.approve")),
			chromedp.WaitNotPresent(css(card(liveID))))
		flash := text(t, ctx, "#flash")
		title := get(t, ctx, "title", chromedp.Title())
		if !strings.Contains(flash, "executed, exit 0") {
			t.Errorf("status line %q", flash)
		}
		if strings.HasPrefix(title, "(") {
			t.Errorf("title %q still counts a card", title)
		}
		if s := status(liveID); s != "executed" { // the answer came after the execution
			t.Errorf("action is %s, want executed", s)
		}
		if _, err := os.Stat(filepath.Join(root, "live.txt")); err != nil {
			t.Error("the approved command did not run")
		}
	})

	t.Run("the page works by keyboard: Tab to Approve, Enter", func(t *testing.T) {
		id := pending("touch keyboard.txt")
		do(t, ctx, "the card arrives", chromedp.WaitVisible(css(card(id))))
		evalBool(t, ctx, "focus the top", `(document.activeElement && document.activeElement.blur(), window.scrollTo(0, 0), true)`)
		tabTo(t, ctx, card(id)+" button.approve", 40)
		do(t, ctx, "press Enter", chromedp.KeyEvent(kb.Enter), chromedp.WaitNotPresent(css(card(id))))
		if s := status(id); s != "executed" {
			t.Errorf("action is %s, want executed", s)
		}
	})

	t.Run("the buttons are disabled while a decision is in flight", func(t *testing.T) {
		id := pending("sleep 1.5 && echo slow")
		do(t, ctx, "approve a slow command", chromedp.WaitVisible(css(card(id))),
			chromedp.Click(css(card(id)+" button.approve")))
		evalBool(t, ctx, "disabled in flight", fmt.Sprintf(`document.querySelector(%q).disabled === true`, card(id)+" fieldset.decide"))
		do(t, ctx, "the answer", chromedp.WaitNotPresent(css(card(id))))
		if s := status(id); s != "executed" {
			t.Errorf("action is %s, want executed", s)
		}
	})

	t.Run("Always allow records the shown patterns and the next like command is auto-approved", func(t *testing.T) {
		id := pending("printf always-%s ok")
		evalBool(t, ctx, "mark the page", `(window.alwaysMark = 43) === 43`)
		do(t, ctx, "preview", chromedp.WaitVisible(css(card(id))),
			chromedp.Click(css(card(id)+" button.always")),
			chromedp.WaitVisible(css(card(id)+" ul.patterns")))
		shown := get(t, ctx, "the shown patterns", chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(e => e.textContent)`, card(id)+" ul.patterns code")))
		if len(shown) != 1 || shown[0] != "Terminal(printf)" {
			t.Fatalf("the preview shows %q, want [Terminal(printf)]", shown)
		}
		before, _ := os.ReadFile(filepath.Join(root, "permissions.json"))
		if strings.Contains(string(before), "Terminal(printf)") {
			t.Fatal("the preview recorded the pattern")
		}
		// Clicked the moment it shows: htmx handles the swapped-in form at
		// once (no settle delay), so the click is its POST, not a native
		// submit that reloads the page and records nothing.
		do(t, ctx, "record", chromedp.Click(css(card(id)+" form button.always")),
			chromedp.WaitNotPresent(css(card(id))))
		evalBool(t, ctx, "no reload", `window.alwaysMark === 43`)
		after, _ := os.ReadFile(filepath.Join(root, "permissions.json"))
		for _, p := range shown {
			if !strings.Contains(string(after), p) {
				t.Errorf("permissions.json lacks the shown %s:\n%s", p, after)
			}
		}
		next := propose("terminal", map[string]any{"command": "printf again-%s x"})
		if next["status"] != "executed" || !strings.Contains(next["reason"].(string), "Terminal(printf)") {
			t.Errorf("the next like command: %v %v", next["status"], next["reason"])
		}
	})

	var taskID, waitingID string
	t.Run("Deny with a reason resumes a waiting scripted agent", func(t *testing.T) {
		dev := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-api"}, 201)["agent"].(map[string]any)["id"].(string)
		taskID = srv.must(t, "POST", "/v1/projects/"+project+"/tasks", admin, map[string]any{"title": "Make denied.txt"}, 201)["id"].(string)
		waitingID = waitFor(t, "the agent to suspend", func() string {
			_, out, _ := srv.call("GET", "/v1/queue", admin, nil)
			for _, a := range asList(out["actions"]) {
				if a["payload"].(map[string]any)["command"] == "touch denied.txt" {
					return a["id"].(string)
				}
			}
			return ""
		})
		do(t, ctx, "the card arrives", chromedp.WaitVisible(css(card(waitingID))))
		suspended(t, srv, admin, project, waitingID)

		// The agent card says what it waits on.
		do(t, ctx, "agent card", chromedp.Navigate(srv.url+"/ui/projects/"+project+"/agents"),
			chromedp.WaitVisible(css("#agent-"+dev)))
		state := text(t, ctx, "#agent-"+dev+" .state")
		if !strings.Contains(state, "awaiting approval") || !strings.Contains(state, waitingID[len(waitingID)-8:]) {
			t.Errorf("agent state %q: want awaiting approval on the action", state)
		}

		do(t, ctx, "deny", chromedp.Navigate(srv.url+"/"),
			chromedp.WaitVisible(css(card(waitingID))),
			chromedp.Click(css(card(waitingID)+" button.deny")),
			chromedp.WaitVisible(css(card(waitingID)+" textarea")),
			chromedp.SendKeys(css(card(waitingID)+" textarea"), "not in this sprint"),
			chromedp.Click(css(card(waitingID)+" form button.deny")),
			chromedp.WaitNotPresent(css(card(waitingID))))
		waitFor(t, "the agent to finish", func() string {
			_, out, _ := srv.call("GET", "/v1/tasks/"+taskID, admin, nil)
			if out["status"] == "blocked" {
				t.Fatalf("the task was blocked: %v", out)
			}
			if out["status"] == "done" {
				return "done"
			}
			return ""
		})
		if _, err := os.Stat(filepath.Join(worktreeOf(root, dev), "README.md")); err != nil {
			t.Errorf("the agent's worktree: %v", err)
		}
		if _, err := os.Stat(filepath.Join(worktreeOf(root, dev), "denied.txt")); err == nil {
			t.Error("the denied command ran")
		}
	})

	t.Run("the session log shows the task's events in order with actor and sentence", func(t *testing.T) {
		if taskID == "" {
			t.Fatal("no task: an earlier step did not make one")
		}
		do(t, ctx, "session log", chromedp.Navigate(srv.url+"/ui/tasks/"+taskID),
			chromedp.WaitVisible(css("ol.log")))
		lines := get(t, ctx, "the log lines", chromedp.Evaluate[[]map[string]string](`Array.from(document.querySelectorAll("ol.log li")).map(li => ({type: li.dataset.type,
				seq: li.querySelector(".seq").textContent, actor: li.querySelector(".actor").textContent,
				sentence: li.querySelector(".sentence").textContent}))`))
		screenshot(t, ctx, shots, "session-log.png")
		var types []string
		prev := 0
		for _, l := range lines {
			types = append(types, l["type"])
			var seq int
			fmt.Sscanf(l["seq"], "#%d", &seq)
			if seq <= prev {
				t.Errorf("events out of order: #%d after #%d", seq, prev)
			}
			prev = seq
		}
		want := map[string]func(l map[string]string) bool{
			"proposed_action.created": func(l map[string]string) bool {
				return l["actor"] == "dev-api" && strings.HasPrefix(l["sentence"], "asks a human: ")
			},
			"proposed_action.denied": func(l map[string]string) bool {
				return l["actor"] == "owner" && l["sentence"] == "denied by owner: not in this sprint"
			},
			"dev.awaiting_approval": func(l map[string]string) bool { return l["actor"] == "dev-api" },
		}
		for typ, ok := range want {
			found := false
			for _, l := range lines {
				if l["type"] == typ && ok(l) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s line as expected in %v", typ, lines)
			}
		}
		if len(lines) < 4 {
			t.Errorf("session log: %v", types)
		}
	})

	var pushID string
	t.Run("the queue with three cards, screenshot", func(t *testing.T) {
		do(t, ctx, "open the queue", chromedp.Navigate(srv.url+"/"), chromedp.WaitVisible(css("#queue")))
		waitJS(t, ctx, "the stream to connect", `window.braboStream && window.braboStream.readyState === 1`)
		a := pending("npm ci && npm run build && ls dist")
		pushID = propose("git_push", map[string]any{"branch": "feature/login", "remote": "origin"})["id"].(string)
		c := propose("pr_open", map[string]any{"branch": "feature/login", "base": "main", "title": "Log in with a token"})["id"].(string)
		for _, id := range []string{a, pushID, c} {
			do(t, ctx, "card "+id, chromedp.WaitVisible(css(card(id))))
		}
		title := get(t, ctx, "title", chromedp.Title())
		if !strings.HasPrefix(title, "(3) ") {
			heads := get(t, ctx, "the cards", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#queue article.card")).map(e => e.id + ": " + e.querySelector("h2").textContent + " " + (e.querySelector("pre, code") || {}).textContent)`))
			t.Errorf("title %q, want (3) first; the cards: %q", title, heads)
		}
		// Newest first, as the server lists them, even for two proposed in
		// the same millisecond (ids begin with it; the rest is random).
		evalBool(t, ctx, "newest first", fmt.Sprintf(
			`Array.from(document.querySelectorAll("#queue article.card")).map(e => e.id).join(" ") === %q`,
			"card-"+c+" card-"+pushID+" card-"+a))
		evalBool(t, ctx, "every button has a label",
			`Array.from(document.querySelectorAll("button")).every(b => (b.textContent.trim() || b.getAttribute("aria-label") || "").length > 0)`)
		evalBool(t, ctx, "no always allow on git_push or pr_open",
			fmt.Sprintf(`!document.querySelector(%q) && !document.querySelector(%q) && !!document.querySelector(%q)`,
				card(pushID)+" button.always", card(c)+" button.always", card(a)+" button.always"))
		screenshot(t, ctx, shots, "queue.png")
	})

	t.Run("a developer sees no buttons on a git_push card, and no toggle", func(t *testing.T) {
		if pushID == "" {
			t.Fatal("no git_push card: an earlier step did not make one")
		}
		webLogout(t, ctx)
		webLogin(t, ctx, srv.url, dana)
		do(t, ctx, "git_push card", chromedp.WaitVisible(css(card(pushID))))
		note := text(t, ctx, card(pushID)+" .role-note")
		evalBool(t, ctx, "no buttons on the git_push card", fmt.Sprintf(`document.querySelectorAll(%q).length === 0`, card(pushID)+" button"))
		if !strings.Contains(note, "maintainer") {
			t.Errorf("the card's note %q does not name the role", note)
		}
		evalBool(t, ctx, "buttons on a terminal card", `document.querySelectorAll("article.card[data-status=pending] button.approve").length >= 1`)
		do(t, ctx, "agents page", chromedp.Navigate(srv.url+"/ui/projects/"+project+"/agents"),
			chromedp.WaitVisible(css("#agent-"+botID)))
		evalBool(t, ctx, "no toggle for a developer", `document.querySelectorAll("button.toggle").length === 0`)
	})

	t.Run("a CSRF-less POST is refused", func(t *testing.T) {
		id := pending("touch csrf.txt")
		do(t, ctx, "open the queue", chromedp.Navigate(srv.url+"/"), chromedp.WaitVisible(css("#queue")))
		code := get(t, ctx, "post without the token", chromedp.Evaluate[int](
			fmt.Sprintf(`fetch("/ui/actions/%s/approve", {method: "POST"}).then(r => r.status)`, id), chromedp.EvalAwaitPromise))
		if code != http.StatusForbidden {
			t.Errorf("POST without the CSRF token from the page: %d, want 403", code)
		}
		// And from outside the page, with a session cookie of its own but
		// no token.
		client := formLogin(t, srv.url, dana)
		resp, err := client.PostForm(srv.url+"/ui/actions/"+id+"/approve", url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST with the cookie and no CSRF token: %d, want 403", resp.StatusCode)
		}
		if s := status(id); s != "pending" {
			t.Errorf("the action is %s after refused POSTs, want pending", s)
		}
		if _, err := os.Stat(filepath.Join(root, "csrf.txt")); err == nil {
			t.Error("a refused POST ran the command")
		}
	})

	t.Run("the agent card toggles auto mode, maintainer only", func(t *testing.T) {
		webLogout(t, ctx)
		webLogin(t, ctx, srv.url, admin)
		toggle := "#agent-" + botID + " button.toggle"
		wildcard := func() string {
			for _, r := range asList(srv.must(t, "GET", "/v1/projects/"+project+"/agents/"+botID+"/autonomy", admin, nil, 200)["autonomy"]) {
				if r["actionType"] == "*" {
					return r["mode"].(string)
				}
			}
			return ""
		}
		do(t, ctx, "toggle on", chromedp.Navigate(srv.url+"/ui/projects/"+project+"/agents"),
			chromedp.WaitVisible(css(toggle)),
			chromedp.Click(css(toggle)),
			// Auto mode asks first.
			chromedp.WaitVisible(css("#confirm-auto-"+botID+" button.confirm-on")),
			chromedp.Click(css("#confirm-auto-"+botID+" button.confirm-on")))
		waitJS(t, ctx, "the toggle to be on", fmt.Sprintf(`document.querySelector(%q) && document.querySelector(%q).getAttribute("aria-checked") === "true"`, toggle, toggle))
		if got := wildcard(); got != "auto_approve" {
			t.Errorf("the wildcard after the toggle: %q, want auto_approve", got)
		}
		do(t, ctx, "toggle off", chromedp.Click(css(toggle)))
		waitJS(t, ctx, "the toggle to be off", fmt.Sprintf(`document.querySelector(%q) && document.querySelector(%q).getAttribute("aria-checked") === "false"`, toggle, toggle))
		if got := wildcard(); got != "require_approval" {
			t.Errorf("manual rewrites the wildcard: %q, want require_approval", got)
		}
	})

	t.Run("the permissions view shows the file, per-entry errors and the check box", func(t *testing.T) {
		do(t, ctx, "check a command", chromedp.Navigate(srv.url+"/ui/projects/"+project+"/permissions"),
			chromedp.WaitVisible(css("#check-command")),
			chromedp.SendKeys(css("#check-command"), "ls -la && rm -rf /"),
			chromedp.Click(css("form.check button")),
			chromedp.WaitVisible(css("#check-result .policy")))
		explained := text(t, ctx, "#check-result")
		if !regexp.MustCompile(`(?s)deny.*allow\s+ls -la.*deny\s+rm -rf /`).MatchString(explained) {
			t.Errorf("the explanation:\n%s", explained)
		}
		os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)", "Bogus(x)", "Terminal("]}`), 0o644)
		do(t, ctx, "an invalid file", chromedp.Reload(), chromedp.WaitVisible(css(".entry-errors")))
		errs := get(t, ctx, "the entry errors", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".entry-errors li")).map(li => li.textContent)`))
		if len(errs) != 2 || !strings.Contains(errs[0], "allow[1]") || !strings.Contains(errs[1], "allow[2]") {
			t.Errorf("per-entry errors: %q", errs)
		}
	})

	t.Run("a loosening on disk shows its difference, and a maintainer's Accept applies it", func(t *testing.T) {
		webLogout(t, ctx)
		webLogin(t, ctx, srv.url, admin)
		os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)", "Terminal(echo)", "Terminal(bash)"]}`), 0o644)
		do(t, ctx, "the held file", chromedp.Navigate(srv.url+"/ui/projects/"+project+"/permissions"),
			chromedp.WaitVisible(css(`#trust[data-status="held"] .held`)))
		held := text(t, ctx, "#trust")
		for _, want := range []string{"waiting for a maintainer", "allow + Terminal(bash)", "Accept", "Restore"} {
			if !strings.Contains(held, want) {
				t.Errorf("the trust section lacks %q:\n%s", want, held)
			}
		}
		screenshot(t, ctx, shots, "permissions-trust.png")
		do(t, ctx, "accept", chromedp.Click(css("#trust form.accept button")),
			chromedp.WaitVisible(css(`#trust[data-status="trusted"]`)))
		if _, st, _ := srv.call("GET", "/v1/projects/"+project+"/permissions/trust", admin, nil); st["status"] != "trusted" {
			t.Errorf("after Accept on the page the file is %v", st["status"])
		}
	})
}
