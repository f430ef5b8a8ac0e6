package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

// brabo install --agent-sandbox, with each real CLI: a command the agent
// runs itself (brabo's hook allows it, after a human's approval) runs in
// the agent's own sandbox, and cannot write outside the project: not in
// another temporary folder, not in the agent's HOME. What each sandbox
// gives is in the README ("What brabo protects") and docs/hooks.md.

// escapeCommand writes inside the project and in two places outside it;
// each write says whether it worked.
func escapeCommand(outside, home string) string {
	return "echo in > inside.txt && echo inside-ok; echo out > " + outside + "/escaped.txt && echo outside-ok; echo out > " + home + "/escaped.txt && echo home-ok; true"
}

// checkConfined fails unless the write inside the project happened and
// neither write outside did.
func checkConfined(t *testing.T, ap *agentProject, outside, told string) {
	t.Helper()
	if !ap.exists("inside.txt") {
		t.Fatalf("the command did not run in the project (the model got %q)", told)
	}
	for _, p := range []string{filepath.Join(outside, "escaped.txt"), filepath.Join(ap.home, "escaped.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a command the agent ran wrote %s, outside the project (the model got %q)", p, told)
		}
	}
	if strings.Contains(told, "outside-ok") || strings.Contains(told, "home-ok") {
		t.Errorf("the model read that a write outside worked: %q", told)
	}
}

// statusSandbox is what brabo install --status --json says of the agent's
// own sandbox in the project scope.
func statusSandbox(t *testing.T, ap *agentProject, agent string, env ...string) bool {
	t.Helper()
	r := runBraboEnv(t, ap.root, ap.env(env...), "install", agent, "--status", "--json", "--root", ap.root)
	var out struct {
		Status []struct {
			Scope        string `json:"scope"`
			AgentSandbox bool   `json:"agentSandbox"`
		} `json:"status"`
	}
	if err := jsonUnmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("brabo install --status --json: %v\n%s", err, r)
	}
	for _, s := range out.Status {
		if s.Scope == "project" {
			return s.AgentSandbox
		}
	}
	t.Fatalf("no project scope in %s", r.stdout)
	return false
}

func uninstallAgent(t *testing.T, ap *agentProject, agent string, env ...string) string {
	t.Helper()
	r := runBraboEnv(t, ap.root, append(ap.env(env...), "BRABO_TOKEN="+ap.admin),
		"install", agent, "--uninstall", "--url", ap.srv.url, "--project", ap.project, "--root", ap.root)
	if r.code != 0 {
		t.Fatalf("brabo install %s --uninstall: %s", agent, r)
	}
	return r.stdout
}

func TestCodexAgentSandbox(t *testing.T) {
	codex := agenttest.CLI(t, "codex")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"]}`)
	home := codexHomeFor(t, ap) // its own lines say danger-full-access
	out := ap.install(t, "codex", 8*time.Second, []string{"--codex", codex, "--agent-sandbox"}, "CODEX_HOME="+home)
	if !strings.Contains(out, "turned codex's own sandbox on") {
		t.Fatalf("brabo install codex --agent-sandbox:\n%s", out)
	}
	proj, _ := os.ReadFile(filepath.Join(ap.root, ".codex", "config.toml"))
	if !strings.HasPrefix(string(proj), codexTopMarker) || !strings.Contains(string(proj), `sandbox_mode = "workspace-write"`) {
		t.Fatalf("the project's .codex/config.toml:\n%s", proj)
	}
	if !statusSandbox(t, ap, "codex", "CODEX_HOME="+home) {
		t.Error("brabo install --status does not report the agent's sandbox")
	}
	outside := t.TempDir()
	decided := ap.decideWhenPending(t, "escaped.txt", "", 30*time.Second)
	model := agenttest.OpenAIResponses(t, execCommand(escapeCommand(outside, ap.home)))
	// TMPDIR outside /tmp: Codex refuses to set up its sandbox's helper
	// under the temporary folder, and this test's CODEX_HOME is in /tmp
	// (a user's ~/.codex is not).
	tmp := filepath.Join(ap.home, "tmp")
	os.MkdirAll(tmp, 0o755)
	env := ap.env("CODEX_HOME="+home, "FAKE_OPENAI_KEY=x", "TMPDIR="+tmp)
	run, _ := ap.runAgent(t, 90*time.Second, env, codex, "exec", "--json", "--skip-git-repo-check",
		"-c", `model_providers.fake.base_url="`+model.URL+`/v1"`, "-m", "gpt-test", "do the task")
	if <-decided == "" {
		t.Fatalf("the command was never proposed to brabo\n%s", run)
	}
	told := codexOutput(model, 1)
	t.Logf("Codex --agent-sandbox: the model got %q", told)
	checkConfined(t, ap, outside, told)

	uninstallAgent(t, ap, "codex", "CODEX_HOME="+home)
	proj, _ = os.ReadFile(filepath.Join(ap.root, ".codex", "config.toml"))
	if strings.Contains(string(proj), "sandbox_mode") {
		t.Errorf("--uninstall left the sandbox setting:\n%s", proj)
	}
}

// codexTopMarker is the first line brabo install codex --agent-sandbox
// writes.
const codexTopMarker = "# >>> brabo install codex --agent-sandbox"

func TestClaudeCodeAgentSandbox(t *testing.T) {
	claude := agenttest.CLI(t, "claude")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"]}`)
	out := ap.install(t, "claude", 8*time.Second, []string{"--agent-sandbox"})
	if !strings.Contains(out, "turned claude's own sandbox on") {
		t.Fatalf("brabo install claude --agent-sandbox:\n%s", out)
	}
	settings, _ := os.ReadFile(filepath.Join(ap.root, ".claude", "settings.json"))
	for _, want := range []string{`"enabled": true`, `"failIfUnavailable": true`, `"allowUnsandboxedCommands": false`} {
		if !strings.Contains(string(settings), want) {
			t.Fatalf("the settings have no %s:\n%s", want, settings)
		}
	}
	if !statusSandbox(t, ap, "claude") {
		t.Error("brabo install --status does not report the agent's sandbox")
	}
	outside := t.TempDir()
	decided := ap.decideWhenPending(t, "escaped.txt", "", 30*time.Second)
	model, run := claudeRun(t, ap, claude, bash(escapeCommand(outside, ap.home)))
	if <-decided == "" {
		t.Fatalf("the command was never proposed to brabo\n%s", run)
	}
	told, _ := toolResult(model, 1)
	t.Logf("Claude Code --agent-sandbox: the model got %q", told)
	checkConfined(t, ap, outside, told)

	// The model asks to leave the sandbox: allowUnsandboxedCommands false
	// ignores it.
	outside = t.TempDir()
	decided = ap.decideWhenPending(t, outside, "", 30*time.Second)
	leave := bash(escapeCommand(outside, ap.home))
	leave.Input["dangerouslyDisableSandbox"] = true
	model, run = claudeRun(t, ap, claude, leave)
	if <-decided == "" {
		t.Fatalf("the second command was never proposed to brabo\n%s", run)
	}
	told, _ = toolResult(model, 1)
	t.Logf("Claude Code --agent-sandbox, dangerouslyDisableSandbox: the model got %q", told)
	checkConfined(t, ap, outside, told)

	uninstallAgent(t, ap, "claude")
	settings, _ = os.ReadFile(filepath.Join(ap.root, ".claude", "settings.json"))
	if strings.Contains(string(settings), "sandbox") {
		t.Errorf("--uninstall left the sandbox settings:\n%s", settings)
	}
}

// TestGeminiCLIAgentSandbox: Gemini CLI 0.61.0's sandbox on Linux is a
// docker or podman container of its own image, which runs the whole CLI.
// Without that image Gemini CLI does not start: no model call, no tool
// call, nothing written. The image is named here as one that cannot be
// pulled (a local name), so the test never downloads Gemini's image; on
// a machine that has Gemini's image, the container's behaviour with
// brabo's hook is untested (docs/hooks.md says so).
func TestGeminiCLIAgentSandbox(t *testing.T) {
	gemini := agenttest.CLI(t, "gemini")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"]}`)
	home := geminiHomeFor(t, ap)
	out := ap.install(t, "gemini", 8*time.Second, []string{"--agent-sandbox"}, "GEMINI_CLI_HOME="+home)
	if !strings.Contains(out, "turned gemini's own sandbox on") || !strings.Contains(out, "does not start") {
		t.Fatalf("brabo install gemini --agent-sandbox:\n%s", out)
	}
	settings, _ := os.ReadFile(filepath.Join(ap.root, ".gemini", "settings.json"))
	if !strings.Contains(string(settings), `"sandbox": true`) {
		t.Fatalf("the settings do not turn Gemini's sandbox on:\n%s", settings)
	}
	if !statusSandbox(t, ap, "gemini", "GEMINI_CLI_HOME="+home) {
		t.Error("brabo install --status does not report the agent's sandbox")
	}
	model := agenttest.Gemini(t, shellCall("echo in > inside.txt"))
	env := ap.env("GEMINI_CLI_HOME="+home, "GOOGLE_GEMINI_BASE_URL="+model.URL, "GEMINI_API_KEY=x",
		"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_SANDBOX_IMAGE=localhost/brabo-test-no-such-image:0")
	run, err := ap.runAgent(t, 120*time.Second, env, gemini, "-p", "do the task", "--output-format", "json")
	t.Logf("Gemini CLI --agent-sandbox: %v\n%s", err, run)
	noEngine := strings.Contains(run, "failed to determine command for sandbox; install docker or podman")
	noImage := strings.Contains(run, "Sandbox image 'localhost/brabo-test-no-such-image:0' is missing or could not be pulled")
	if !noEngine && !noImage {
		t.Errorf("Gemini CLI with its sandbox on and no image did not stop as docs/hooks.md says:\n%s", run)
	}
	if len(model.Requests()) != 0 || ap.exists("inside.txt") {
		t.Errorf("Gemini CLI went on without its sandbox: %d model calls, inside.txt written=%v", len(model.Requests()), ap.exists("inside.txt"))
	}

	uninstallAgent(t, ap, "gemini", "GEMINI_CLI_HOME="+home)
	settings, _ = os.ReadFile(filepath.Join(ap.root, ".gemini", "settings.json"))
	if strings.Contains(string(settings), "sandbox") {
		t.Errorf("--uninstall left the sandbox setting:\n%s", settings)
	}
}
