package e2e

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// reasonKind is one way an action is decided, proposed through the real
// server: the reason Decide stores and the sentence people read.
type reasonKind struct {
	name   string
	status string
	reason string // as policy.Decide stores it (or the human's, for a denial)
	text   string // brabo.ReasonText, as the API's reasonText gives it
}

// decideEachKind proposes (and, for a human's decision, decides) one action
// of each kind and returns the answers, in the order of reasonKinds.
func decideEachKind(t *testing.T, e *env) []map[string]any {
	e.setPermissions(`{"allow": ["Terminal(ls)", "GitPush()", "WriteFile(.claude/*)"], "deny": ["Terminal(touch:*)"]}`)
	var out []map[string]any
	add := func(a map[string]any) { out = append(out, a) }
	add(e.terminal("ls"))
	add(e.terminal("pnpm build"))
	add(e.propose(e.agent, "git_push", map[string]any{"branch": "main"}))
	add(e.terminal("git push --force origin main"))
	add(e.propose(e.agent, "write_file", map[string]any{"path": ".claude/settings.json", "content": "{}\n"}))
	add(e.terminal("touch x"))
	denied := e.terminal("pnpm lint")["id"].(string)
	d := e.ok("POST", "/v1/actions/"+denied+"/deny", e.maintainer, map[string]any{"reason": "Makefile must not pipe curl into sh"}, 200)
	add(d["action"].(map[string]any))
	approved := e.terminal("echo approved-by-a-human")["id"].(string)
	ap := e.ok("POST", "/v1/actions/"+approved+"/approve", e.maintainer, nil, 200)
	add(ap["action"].(map[string]any))
	// Approve and deny answer with the same shape: the action and what the
	// decision did.
	if d["outcome"] != "denied" || ap["outcome"] != "approved" {
		t.Errorf("deny's outcome %v, approve's %v", d["outcome"], ap["outcome"])
	}
	return out
}

var reasonKinds = []reasonKind{
	{"auto-approved by a rule", "executed", "permissions.json allow: Terminal(ls)",
		"auto-approved: permissions.json allows it (Terminal(ls))"},
	{"asks by default", "pending", "default: no rule approves it",
		"asks a human: nothing in permissions.json allows `pnpm build`. A developer or above may approve it"},
	{"asks by a cap", "pending", "cap: git_push leaves the machine; a human approves every one",
		"pushing main to origin asks a human: a git_push leaves the machine, and a human approves every one. A maintainer or above may approve it"},
	{"a force push", "pending", "default: no rule approves it",
		"asks a human: a force push rewrites the remote branch main; nothing in permissions.json allows `git push --force origin main`. A maintainer or above may approve it; a developer or above may deny it"},
	{"a protected write", "pending", "protected: writes .claude/settings.json: Claude Code's settings (hooks and permissions) (a maintainer decides)",
		"writing .claude/settings.json asks a human: it writes .claude/settings.json, a protected file (Claude Code's settings (hooks and permissions)), which a maintainer decides. A maintainer or above may approve it; a developer or above may deny it"},
	{"denied by a rule", "denied", "permissions.json deny: Terminal(touch:*)",
		"denied: permissions.json denies `touch x` (Terminal(touch:*))"},
	{"denied by a human", "denied", "Makefile must not pipe curl into sh",
		"denied by mia: Makefile must not pipe curl into sh"},
	{"approved by a human", "executed", "default: no rule approves it",
		"approved by mia"},
}

// TestTheSentenceOfEachDecisionKind is the table of display sentences: one
// action of each kind through the real server, its reasonText in the
// API's answer and when read back, and the same sentence on its web card.
func TestTheSentenceOfEachDecisionKind(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		got := decideEachKind(t, e)
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		for i, k := range reasonKinds {
			a := got[i]
			id := a["id"].(string)
			if a["status"] != k.status {
				t.Errorf("%s: status %v, want %s", k.name, a["status"], k.status)
			}
			if a["reasonText"] != k.text {
				t.Errorf("%s: reasonText\n got %q\nwant %q", k.name, a["reasonText"], k.text)
			}
			if back := e.ok("GET", "/v1/actions/"+id, e.admin, nil, 200); back["reasonText"] != k.text {
				t.Errorf("%s: read back, reasonText %q", k.name, back["reasonText"])
			}
			_, page := w.do("GET", "/ui/cards/"+id, nil, nil)
			m := regexp.MustCompile(`(?s)<p class="reason">(.*?)(?: · <a |</p>)`).FindStringSubmatch(page)
			if m == nil || html.UnescapeString(m[1]) != k.text {
				t.Errorf("%s: the card's sentence %q, want %q", k.name, m, k.text)
			}
		}
		// The action's page says it on its card and on the denial's line of
		// its log (which names the actor): the same words.
		_, page := w.do("GET", "/ui/actions/"+got[6]["id"].(string), nil, nil)
		if n := strings.Count(html.UnescapeString(page), "denied by mia: Makefile must not pipe curl into sh"); n < 2 {
			t.Errorf("the denied action's page says the human's denial %d times, want on the card and in the log", n)
		}
		// The queue from the API says it too, and the agent's card counts
		// what waits: the default, the cap, the force push, the protected
		// write.
		q := e.ok("GET", "/v1/queue", e.admin, nil, 200)["actions"].([]any)
		for _, x := range q {
			if x.(map[string]any)["reasonText"] == "" {
				t.Errorf("a queued action without reasonText: %v", x)
			}
		}
		_, agents := w.do("GET", "/ui/projects/"+e.project+"/agents", nil, nil)
		state := regexp.MustCompile(`(?s)id="agent-` + e.agentID + `".*?<p class="state"[^>]*>(.*?)</p>`).FindStringSubmatch(agents)
		if state == nil || !strings.Contains(state[1], "waiting on 4 approvals") {
			t.Errorf("the agent's state: %q, want waiting on 4 approvals", state)
		}
	})
}

// TestStoredReasonsAreDecidesOwn stands beside the sentences: what is
// stored (the action's reason, its decision's reason, the created event's
// reason) is exactly what policy.Decide wrote, for every kind; only a
// human's denial replaces the action's reason with theirs, and keeps the
// rule's in the decision.
func TestStoredReasonsAreDecidesOwn(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		got := decideEachKind(t, e)
		for i, k := range reasonKinds {
			a := got[i]
			id := a["id"].(string)
			stored := e.ok("GET", "/v1/actions/"+id, e.admin, nil, 200)
			if stored["reason"] != k.reason {
				t.Errorf("%s: the stored reason %q, want %q", k.name, stored["reason"], k.reason)
			}
			rule := k.reason
			if k.name == "denied by a human" {
				rule = "default: no rule approves it"
			}
			if r := str(stored, "decision", "reason"); r != rule {
				t.Errorf("%s: the decision's reason %q, want %q", k.name, r, rule)
			}
			created := e.eventsOf(id, "proposed_action.created")
			if len(created) != 1 || payloadOf(created[0])["reason"] != rule {
				t.Errorf("%s: %d created events (%v), want one with reason %q", k.name, len(created), payloadsOf(created), rule)
			}
		}
	})
}

func payloadsOf(evs []brabo.Event) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		out = append(out, payloadOf(e))
	}
	return out
}
