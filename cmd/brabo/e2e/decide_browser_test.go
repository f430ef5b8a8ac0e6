package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/brabo-dev/brabo/agenthook"
	"github.com/brabo-dev/brabo/notify"
)

// docShot saves a screenshot under the test's temp dir, and under
// docs/screenshots/ too when BRABO_UPDATE_SCREENSHOTS is set. sel "" is
// what the window shows; a selector, that element alone.
func docShot(t *testing.T, ctx context.Context, dir, sel, name string) {
	t.Helper()
	var png []byte
	if sel == "" {
		png = get(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
	} else {
		png = get(t, ctx, "screenshot "+name, chromedp.ScreenshotScale(css(sel), 1))
	}
	if len(png) < 1000 {
		t.Fatalf("screenshot %s is %d bytes", name, len(png))
	}
	os.WriteFile(filepath.Join(dir, name), png, 0o644)
	if os.Getenv("BRABO_UPDATE_SCREENSHOTS") != "" {
		out := filepath.Join("..", "..", "..", "docs", "screenshots")
		os.MkdirAll(out, 0o755)
		if err := os.WriteFile(filepath.Join(out, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hookRun is one `brabo hook claude pre-tool-use` waiting in the
// background, as Claude Code runs it before a Bash call.
type hookRun struct {
	done           chan struct{}
	stdout, stderr bytes.Buffer
}

func startHook(t *testing.T, cfg string, env []string, input map[string]any) *hookRun {
	t.Helper()
	in, _ := json.Marshal(input)
	cmd := exec.Command(braboBin, "hook", "claude", "pre-tool-use", "--config", cfg)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(in)
	h := &hookRun{done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &h.stdout, &h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); <-h.done })
	go func() { cmd.Wait(); close(h.done) }()
	return h
}

func (h *hookRun) wait(t *testing.T) string {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the hook did not answer within 60 s of the decision")
	}
	return h.stdout.String() + h.stderr.String()
}

// TestWebDecideWhereSent drives, in the real brabo serve, the real brabo
// hook and a real Chromium, what issue 28 asks of the web page: the link
// the hook prints and the one the webhook sends open the action's page,
// and a person approves or denies there; a risky card says so at its top,
// sorts first and takes a second key; the agent's own words stand beside
// the command, escaped; and at 390 px no page scrolls sideways while the
// end of a diff's longest line can be scrolled into view.
func TestWebDecideWhereSent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server and a browser")
	}
	ctx := browser(t)
	shots := t.TempDir()
	ap := newAgentProject(t, `{"allow": ["Terminal(ls)"]}`+"\n")
	srv, admin, project := ap.srv, ap.admin, ap.project
	receiver := &hook{}
	hooks := httptest.NewServer(receiver)
	defer hooks.Close()
	srv.must(t, "PUT", "/v1/projects/"+project+"/webhooks", admin, map[string]any{"webhooks": []map[string]any{
		{"url": hooks.URL + "/brabo", "format": "json"}}}, 200)
	ag := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "claude", "kind": "hook"}, 201)
	token := ag["token"].(string)
	cfg := filepath.Join(ap.xdg, "brabo", "hooks", "claude.json")
	b, _ := json.Marshal(agenthook.Config{Server: srv.url, Agent: "claude", WaitSeconds: 120,
		Projects: []agenthook.ProjectConfig{{ID: project, Root: ap.root, Token: token}}})
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	bash := func(id, command, description string) map[string]any {
		return map[string]any{"session_id": "s-28", "tool_use_id": id, "cwd": ap.root, "hook_event_name": "PreToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": description}}
	}
	status := func(id string) string {
		_, a, _ := srv.call("GET", "/v1/actions/"+id, admin, nil)
		s, _ := a["status"].(string)
		return s
	}
	// pendingFor finds the pending action of a command the hook proposed.
	pendingFor := func(command string) string {
		t.Helper()
		return waitFor(t, "the hook's action of "+command, func() string {
			_, list, _ := srv.call("GET", "/v1/projects/"+project+"/actions?status=pending", admin, nil)
			for _, a := range asList(list["actions"]) {
				if p, _ := a["payload"].(map[string]any); p != nil && p["command"] == command {
					return a["id"].(string)
				}
			}
			return ""
		})
	}
	propose := func(typ string, payload map[string]any, description string) string {
		t.Helper()
		a := srv.must(t, "POST", "/v1/projects/"+project+"/actions", token, map[string]any{"type": typ, "payload": payload,
			"execution": map[string]any{"mode": "external", "runner": "claude-code", "description": description}}, 201)
		if a["status"] != "pending" {
			t.Fatalf("%s %v was %v (%v), want pending", typ, payload, a["status"], a["reason"])
		}
		return a["id"].(string)
	}
	link := regexp.MustCompile(`approve or deny it at (\S+)`)
	do(t, ctx, "desktop", chromedp.EmulateViewport(1200, 900))
	webLogin(t, ctx, srv.url, admin)

	t.Run("the hook's link and the webhook's link open the action's page, which approves", func(t *testing.T) {
		h := startHook(t, cfg, ap.env(), bash("toolu_approve", "touch approved-here.txt", "Create the marker file"))
		id := pendingFor("touch approved-here.txt")
		want := srv.url + "/ui/actions/" + id
		var m notify.JSONMessage
		json.Unmarshal(receiver.forAction(t, id, 1)[0].body, &m)
		if m.Action.URL != want {
			t.Errorf("the webhook's link is %q, want the action's page %q", m.Action.URL, want)
		}
		do(t, ctx, "open the webhook's link", chromedp.Navigate(m.Action.URL), chromedp.WaitVisible(css("#card-"+id)))
		if h2 := text(t, ctx, "#card-heading"); h2 != "The card as proposed" {
			t.Errorf("the pending action's heading: %q", h2)
		}
		if words := text(t, ctx, "#card-"+id+" .agent-words"); !strings.Contains(words, "Create the marker file") {
			t.Errorf("the hook's description (tool_input.description) is not on the card: %q", words)
		}
		docShot(t, ctx, shots, "", "action-pending.png")
		do(t, ctx, "approve on the page", chromedp.Click(css("#card-"+id+" button.approve")))
		waitJS(t, ctx, "the page as decided", `!!document.getElementById("card-heading") && document.getElementById("card-heading").textContent === "The card as decided"`)
		if s := status(id); s != "approved" {
			t.Errorf("after Approve on its page the action is %s, want approved", s)
		}
		if n := get(t, ctx, "buttons", chromedp.Evaluate[int](`document.querySelectorAll("main button.approve, main button.deny").length`)); n != 0 {
			t.Errorf("the decided action's page still has %d decision buttons", n)
		}
		out := h.wait(t)
		if !strings.Contains(out, `"permissionDecision":"allow"`) {
			t.Errorf("the hook's answer after the approval: %s", out)
		}
		got := link.FindStringSubmatch(out)
		if got == nil || got[1] != want {
			t.Fatalf("the hook's link: %v, want %s (%s)", got, want, out)
		}
		do(t, ctx, "open the hook's link", chromedp.Navigate(got[1]), chromedp.WaitVisible(css("#card-"+id)))
	})

	t.Run("the action's page denies with a reason, and the agent reads it", func(t *testing.T) {
		h := startHook(t, cfg, ap.env(), bash("toolu_deny", "touch denied-here.txt", "Create another marker"))
		id := pendingFor("touch denied-here.txt")
		card := "#card-" + id
		do(t, ctx, "its page", chromedp.Navigate(srv.url+"/ui/actions/"+id), chromedp.WaitVisible(css(card+" button.deny")),
			chromedp.Click(css(card+" button.deny")), chromedp.WaitVisible(css(card+" textarea")))
		// No reason: refused on the card, which stays whole and pending.
		evalBool(t, ctx, "drop the browser's own check", fmt.Sprintf(`(document.querySelector(%q).removeAttribute("required"), true)`, card+" textarea"))
		do(t, ctx, "deny with no reason", chromedp.Click(css(card+" form button.deny")), chromedp.WaitVisible(css(card+" .refusal")))
		if s := status(id); s != "pending" {
			t.Fatalf("a deny with no reason left it %s", s)
		}
		do(t, ctx, "deny with a reason", chromedp.Click(css(card+" button.deny")), chromedp.WaitVisible(css(card+" textarea")),
			chromedp.SendKeys(css(card+" textarea"), "not on this branch"), chromedp.Click(css(card+" form button.deny")))
		waitJS(t, ctx, "the page as decided", `!!document.getElementById("card-heading") && document.getElementById("card-heading").textContent === "The card as decided"`)
		if s := status(id); s != "denied" {
			t.Errorf("after Deny on its page the action is %s", s)
		}
		if o := text(t, ctx, ".outcome"); !strings.Contains(o, "not on this branch") {
			t.Errorf("the page does not show the reason:\n%s", o)
		}
		if out := h.wait(t); !strings.Contains(out, "not on this branch") || !strings.Contains(out, `"permissionDecision":"deny"`) {
			t.Errorf("the hook's answer to the denial: %s", out)
		}
	})

	t.Run("a risky card is marked at its top, sorts first, and one a does not approve it", func(t *testing.T) {
		risky := propose("terminal", map[string]any{"command": "git push --force origin main"}, `Force-push the <b>rebased</b> branch & "fix" it`)
		plain := propose("terminal", map[string]any{"command": "touch plain.txt"}, "")
		do(t, ctx, "the queue", chromedp.Navigate(srv.url+"/"), chromedp.WaitVisible(css("#card-"+plain)), chromedp.WaitVisible(css("#card-"+risky)))
		order := get(t, ctx, "the order", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#queue article.card")).map(c => c.id)`))
		if len(order) < 2 || order[0] != "card-"+risky {
			t.Errorf("the queue's order %v: the risky (older) card is not first", order)
		}
		card := "#card-" + risky
		banner := text(t, ctx, card+" > .risk-banner")
		for _, want := range []string{"Risk", "force push", "protected branch main", "press a, then a again"} {
			if !strings.Contains(banner, want) {
				t.Errorf("the banner lacks %q:\n%s", want, banner)
			}
		}
		evalBool(t, ctx, "the banner is the card's first child", fmt.Sprintf(`document.querySelector(%q).firstElementChild.classList.contains("risk-banner")`, card))
		if c := get(t, ctx, "its colour", chromedp.Evaluate[string](fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).backgroundColor`, card+" .risk-banner"))); c != "rgb(207, 34, 46)" {
			t.Errorf("the banner's background: %s", c)
		}
		if n := get(t, ctx, "plain banner", chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, "#card-"+plain+" .risk-banner"))); n != 0 {
			t.Errorf("the plain card has a risk banner")
		}
		// The agent's words, beside the command, escaped.
		words := get(t, ctx, "the words", chromedp.Evaluate[[]string](fmt.Sprintf(`(() => { const p = document.querySelector(%q); return p ? [p.textContent, String(p.querySelectorAll("b").length), p.previousElementSibling.className] : [] })()`, card+" .agent-words")))
		if len(words) != 3 || !strings.Contains(words[0], `Force-push the <b>rebased</b> branch & "fix" it`) || !strings.Contains(words[0], "agent's own words") ||
			words[1] != "0" || !strings.Contains(words[2], "subject") {
			t.Errorf("the agent's words on the card: %q", words)
		}
		docShot(t, ctx, shots, card, "card-risky.png")
		do(t, ctx, "focus it", chromedp.Focus(css(card)))
		do(t, ctx, "a once", chromedp.KeyEvent("a"))
		time.Sleep(700 * time.Millisecond)
		if s := status(risky); s != "pending" {
			t.Fatalf("one a on a risky card made it %s", s)
		}
		do(t, ctx, "the card says press a again", chromedp.WaitVisible(css(card+" .risk-armed")))
		// Another key disarms it: an a after it asks again.
		do(t, ctx, "Escape, then a", chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(css(card+" .risk-armed")), chromedp.KeyEvent("a"),
			chromedp.WaitVisible(css(card+" .risk-armed")))
		time.Sleep(300 * time.Millisecond)
		if s := status(risky); s != "pending" {
			t.Fatalf("a after Escape approved the risky card: %s", s)
		}
		do(t, ctx, "a again", chromedp.KeyEvent("a"), chromedp.WaitNotPresent(css(card)))
		if s := waitFor(t, "approved", func() string {
			if s := status(risky); s != "pending" {
				return s
			}
			return ""
		}); s != "approved" {
			t.Errorf("the second a left it %s", s)
		}
		// A plain card still takes one key.
		do(t, ctx, "focus the plain one", chromedp.Focus(css("#card-"+plain)), chromedp.KeyEvent("a"), chromedp.WaitNotPresent(css("#card-"+plain)))
	})

	t.Run("at 390 px no page scrolls sideways and the end of the longest diff line is in reach", func(t *testing.T) {
		tail := "TAIL-END-9z"
		long := "export const routes = [" + strings.Repeat(`"/shop/catalogue/item", `, 24) + `"` + tail + `"];`
		// The longest line among the card's first 40, and 80 more below
		// it: the card and the action's page both show it.
		content := "// routes\n" + strings.Repeat("const a = 1;\n", 20) + long + "\n" + strings.Repeat("const b = 2;\n", 80)
		id := propose("write_file", map[string]any{"path": "src/routes.ts", "content": content}, "Add the shop's routes")
		cmd := propose("terminal", map[string]any{"command": "npm ci && npm run build -- --out-dir=dist/a/very/long/path/without/any/space/that/keeps/going/on/and/on && ls dist"}, "")
		do(t, ctx, "phone", chromedp.EmulateViewport(390, 844))
		defer do(t, ctx, "desktop", chromedp.EmulateViewport(1200, 900))
		pages := []struct{ name, url, ready, diff string }{
			{"queue", srv.url + "/", "#card-" + id, "#card-" + id},
			{"action", srv.url + "/ui/actions/" + id, "#card-heading", "#card-" + id},
			{"history", srv.url + "/ui/projects/" + project + "/history", "ol.history", ""},
			{"permissions", srv.url + "/ui/projects/" + project + "/permissions", "main h1", ""},
			{"command", srv.url + "/ui/actions/" + cmd, "#card-heading", ""},
		}
		for _, p := range pages {
			do(t, ctx, p.name, chromedp.Navigate(p.url), chromedp.WaitVisible(css(p.ready)))
			w := get(t, ctx, "widths", chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth, document.body.scrollWidth]`))
			if w[1] != 390 || w[0] != w[1] || w[2] > w[1] {
				t.Errorf("%s at 390 px: scroll width %d (body %d), window %d", p.name, w[0], w[2], w[1])
			}
			noOverflow(t, ctx, p.name+" at 390 px")
			if p.diff != "" {
				// The longest line: scrolled to inside its box, its last
				// characters are within the box's visible part and the window.
				got := get(t, ctx, "the longest line", chromedp.Evaluate[map[string]any](fmt.Sprintf(`(() => {
  const pre = document.querySelector(%q + " pre.diff");
  if (!pre) return {missing: true};
  const spans = Array.from(pre.querySelectorAll("span"));
  const longest = spans.reduce((a, b) => b.textContent.length > a.textContent.length ? b : a);
  longest.scrollIntoView({block: "center"});
  pre.scrollLeft = pre.scrollWidth;
  const tn = longest.firstChild;
  const r = document.createRange();
  r.setStart(tn, tn.length - 4); r.setEnd(tn, tn.length);
  const rr = r.getBoundingClientRect(), pr = pre.getBoundingClientRect();
  const hit = document.elementFromPoint(Math.floor(rr.left + 1), Math.floor((rr.top + rr.bottom) / 2));
  return {overflows: pre.scrollWidth > pre.clientWidth, last: tn.textContent.slice(-16),
    inBox: rr.left >= pr.left && rr.right <= pr.left + pre.clientWidth + 1, inWindow: rr.right <= window.innerWidth && rr.top >= 0 && rr.bottom <= window.innerHeight,
    hit: !!hit && longest.contains(hit), docWidth: document.documentElement.scrollWidth};
})()`, p.diff)))
				if got["missing"] == true || got["overflows"] != true || !strings.Contains(fmt.Sprint(got["last"]), tail) ||
					got["inBox"] != true || got["inWindow"] != true || got["hit"] != true || got["docWidth"] != float64(390) {
					t.Errorf("%s: the end of the longest diff line is not in reach: %v", p.name, got)
				}
				evalBool(t, ctx, "back to the top", `(document.querySelectorAll("pre.diff").forEach(p => { p.scrollLeft = 0; p.scrollTop = 0 }), window.scrollTo(0, 0), true)`)
			}
			docShot(t, ctx, shots, "", p.name+"-390.png")
		}
	})
}
