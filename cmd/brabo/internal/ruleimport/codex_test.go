package ruleimport

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/internal/agenttest"
	"github.com/brabo-dev/brabo/policy"
)

// codexNative is the native codex binary of the pinned npm package; under
// BRABO_REQUIRE_AGENT_CLIS=1 its absence fails the test.
func codexNative(t *testing.T) string {
	agenttest.CLI(t, "codex")
	for _, pattern := range []string{"@openai/codex-*/vendor/*/bin/codex", "@openai/codex/vendor/*/bin/codex"} {
		if m, _ := filepath.Glob(filepath.Join(agenttest.CLIDir(), "node_modules", pattern)); len(m) > 0 {
			return m[0]
		}
	}
	if os.Getenv("BRABO_REQUIRE_AGENT_CLIS") == "1" {
		t.Fatalf("no native codex under %s", agenttest.CLIDir())
	}
	t.Skip("no native codex (BRABO_REQUIRE_AGENT_CLIS=1 fails this)")
	return ""
}

// The meaning check refuses a rule brabo would read otherwise than Codex
// does: each Codex decision put in the wrong list, the pattern kept, is
// caught by the real codex execpolicy check.
func TestCodexMeaningCheckRefusesAMistranslation(t *testing.T) {
	codex := codexNative(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "x.rules")
	os.WriteFile(file, []byte(`prefix_rule(pattern = ["git", "push"], decision = "forbidden")`+"\n"+
		`prefix_rule(pattern = ["gh", "pr", "view"], decision = "prompt")`+"\n"+
		`prefix_rule(pattern = ["npm", "test"])`+"\n"), 0o644)
	for _, c := range []struct {
		argv       []string
		right      string
		wrongLists []string
	}{
		{[]string{"git", "push"}, "deny", []string{"allow", "ask"}},
		{[]string{"gh", "pr", "view"}, "ask", []string{"allow", "deny"}},
		{[]string{"npm", "test"}, "allow", []string{"ask", "deny"}},
	} {
		for _, list := range append([]string{c.right}, c.wrongLists...) {
			cand := candidate{list: list, argv: c.argv, pattern: "Terminal(" + quoteWords(c.argv) + ")"}
			var lists [3][]string
			for k, n := range policy.ListNames {
				if n == list {
					lists[k] = []string{cand.pattern}
				}
			}
			rules, err := policy.NewRules("permissions.json", lists[0], lists[1], lists[2])
			if err != nil {
				t.Fatal(err)
			}
			why, err := checkCandidate(context.Background(), codex, dir, []string{file}, rules, cand)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case list == c.right && why != "":
				t.Errorf("%v in %s, as Codex decides it, is refused: %s", c.argv, list, why)
			case list != c.right && !strings.Contains(why, "codex execpolicy check decides"):
				t.Errorf("%v put in %s (Codex: %s) passed the meaning check", c.argv, list, c.right)
			}
		}
	}
}
