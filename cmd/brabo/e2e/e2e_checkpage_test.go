package e2e

import (
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// checkPageDecision is the decision the web check page shows: its policy
// and its reason.
var checkPageDecision = regexp.MustCompile(`data-policy="([^"]+)"><strong>[^<]*</strong>: ([^<]*)</p>`)

// The web check page decides a command as a real proposal of it is decided
// through the real server on a real SQLite file, the
// page and the proposal agree, policy and reason, on writes to protected
// paths (permissions.json, .git/config, the home folder commands run with,
// brabo's own files), on a program named by its path and on the agent's
// own patterns. Before one builder of the policy input, the page passed
// no home folder, no server paths, no programs and no agent patterns, and
// disagreed on all but the first two.
func TestWebCheckAgreesWithProposal(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	// A project that is its user's home folder (a dotfiles repository),
	// with brabo's binary built inside it: the home's rows and brabo's own
	// paths then lie in the project folder, where only the protected table
	// stops a write.
	home := e.root
	own := filepath.Join(e.root, "bin", "brabo")
	e.svc.Protect = policy.Protect{Home: home, ServerPaths: []string{own}}
	e.setPermissions(`{"allow": ["Terminal(echo *)", "Terminal(printf *)", "Terminal(./tool)", "Terminal(git diff --stat)"]}`)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	if git, err = filepath.EvalSymlinks(git); err != nil {
		t.Fatal(err)
	}
	// A program of the agent's own, inside the project: the rule names
	// ./tool, and what it runs is the agent's to change.
	if err := os.WriteFile(filepath.Join(e.root, "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The agent's own pattern, as an always-allow click records it.
	err = s.Update(t.Context(), func(tx brabo.Tx) error {
		_, err := tx.AddAgentPattern(t.Context(), &brabo.AgentPattern{AgentID: e.agentID, Pattern: "Terminal(git status)",
			CreatedBy: brabo.SystemActor, CreatedAt: time.Now()})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	w := newWebClient(t, e.srv.URL)
	w.login(e.admin)
	page := func(command, agent string) (string, string) {
		t.Helper()
		q := url.Values{"command": {command}, "cwd": {"."}}
		if agent != "" {
			q.Set("agent", agent)
		}
		resp, body := w.do("GET", "/ui/projects/"+e.project+"/check?"+q.Encode(), nil, nil)
		m := checkPageDecision.FindStringSubmatch(body)
		if resp.StatusCode != 200 || m == nil {
			t.Fatalf("the check page for %q: %d\n%s", command, resp.StatusCode, body)
		}
		return m[1], html.UnescapeString(m[2])
	}
	for _, tc := range []struct {
		command string
		want    brabo.Policy
	}{
		{"echo '{}' > permissions.json", brabo.RequireApproval},
		{"printf x >> .git/config", brabo.RequireApproval},
		{"echo x >> " + filepath.Join(home, ".bashrc"), brabo.RequireApproval},
		{"echo x > " + own, brabo.RequireApproval},
		{"./tool", brabo.RequireApproval},
		// git named by its path is the git the rule's name resolves to.
		{git + " diff --stat", brabo.AutoApprove},
		{"git status", brabo.AutoApprove}, // the agent's own pattern
		{"echo hello", brabo.AutoApprove},
	} {
		a := e.propose(e.agent, "terminal", map[string]any{"command": tc.command})
		d := a["decision"].(map[string]any)
		if d["policy"] != string(tc.want) {
			t.Errorf("the proposal of %q: %v, want %s", tc.command, d, tc.want)
		}
		pol, reason := page(tc.command, "coder")
		if pol != d["policy"] || reason != d["reason"] {
			t.Errorf("%q: the check page says %s: %q; the proposal %s: %q", tc.command, pol, reason, d["policy"], d["reason"])
		}
	}
	// The agent's own patterns are that agent's: the page without an
	// agent decides as a developer's agent that has none.
	if pol, reason := page("git status", ""); pol != string(brabo.RequireApproval) {
		t.Errorf("git status with no agent named: %s: %q, want require_approval", pol, reason)
	}
	// An agent the project does not have is refused, not decided as none.
	if resp, _ := w.do("GET", "/ui/projects/"+e.project+"/check?"+url.Values{"command": {"ls"}, "agent": {"nobody"}}.Encode(), nil, nil); resp.StatusCode != 400 {
		t.Errorf("an unknown agent: %d, want 400", resp.StatusCode)
	}
}
