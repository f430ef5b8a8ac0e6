package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

// modelNoise is what the model must never read in a refusal: the hook's
// command line, its configuration's path, the wait banner, the
// permissions file's warnings.
func modelNoise(ap *agentProject, text string) string {
	for _, bad := range []string{"--config", ap.xdg, "brabo-hook", "waits for a human", "read as", "hooks/"} {
		if strings.Contains(text, bad) {
			return bad
		}
	}
	return ""
}

// TestTheModelReadsOneSentence drives each real CLI through a denial by
// permissions.json and a human's denial after a wait, with a
// permissions.json whose Bash(…) entries brabo warns about: what the
// model reads is brabo's one sentence, with no hook command line, no
// configuration path, no wait banner and no warning.
func TestTheModelReadsOneSentence(t *testing.T) {
	const perms = `{"allow": ["Bash(echo:*)"], "deny": ["Bash(touch:*)"]}`
	type run func(t *testing.T, ap *agentProject, call string) string
	cases := []struct {
		agent string
		setup func(t *testing.T, ap *agentProject) run
	}{
		{"claude", func(t *testing.T, ap *agentProject) run {
			claude := agenttest.CLI(t, "claude")
			ap.install(t, "claude", 8*time.Second, nil)
			return func(t *testing.T, ap *agentProject, call string) string {
				model, _ := claudeRun(t, ap, claude, bash(call))
				text, _ := toolResult(model, 1)
				return text
			}
		}},
		{"codex", func(t *testing.T, ap *agentProject) run {
			codex := agenttest.CLI(t, "codex")
			home := codexHomeFor(t, ap)
			ap.install(t, "codex", 8*time.Second, []string{"--codex", codex}, "CODEX_HOME="+home)
			return func(t *testing.T, ap *agentProject, call string) string {
				model, _ := codexRun(t, ap, codex, home, execCommand(call))
				return codexOutput(model, 1)
			}
		}},
		{"gemini", func(t *testing.T, ap *agentProject) run {
			gemini := agenttest.CLI(t, "gemini")
			home := geminiHomeFor(t, ap)
			ap.install(t, "gemini", 8*time.Second, nil, "GEMINI_CLI_HOME="+home)
			return func(t *testing.T, ap *agentProject, call string) string {
				model, _ := geminiRun(t, ap, gemini, home, shellCall(call))
				return geminiResponse(model, 1)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.agent, func(t *testing.T) {
			ap := newAgentProject(t, perms)
			do := c.setup(t, ap)
			text := do(t, ap, "touch by-rule.txt")
			t.Logf("%s, denied by a rule: %q", c.agent, text)
			if !strings.Contains(text, "brabo: denied: permissions.json denies `touch by-rule.txt` (Bash(touch:*))") {
				t.Errorf("the model did not read brabo's reason: %q", text)
			}
			if bad := modelNoise(ap, text); bad != "" {
				t.Errorf("the model read %q in %q", bad, text)
			}
			decided := ap.decideWhenPending(t, "mkdir by-human", "not today", 30*time.Second)
			text = do(t, ap, "mkdir by-human")
			<-decided
			t.Logf("%s, denied by a human: %q", c.agent, text)
			if !strings.Contains(text, "brabo: denied by owner: not today") {
				t.Errorf("the model did not read the human's reason: %q", text)
			}
			if bad := modelNoise(ap, text); bad != "" {
				t.Errorf("the model read %q in %q", bad, text)
			}
		})
	}
}
