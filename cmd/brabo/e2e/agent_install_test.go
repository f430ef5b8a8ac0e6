package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/agenthook"
	"github.com/brabo-dev/brabo/internal/agenttest"
)

// hookAgents lists the project's hook agents: name → whether its token is
// live.
func (ap *agentProject) hookAgents(t *testing.T) map[string]bool {
	t.Helper()
	out := ap.srv.must(t, "GET", "/v1/projects/"+ap.project+"/agents", ap.admin, nil, 200)
	agents := map[string]bool{}
	for _, a := range out["agents"].([]any) {
		m := a.(map[string]any)
		if m["kind"] == "hook" {
			agents[m["name"].(string)] = m["revokedAt"] == nil
		}
	}
	return agents
}

// hookToken reads the token the project's hook configuration holds.
func (ap *agentProject) hookToken(t *testing.T, agent string) (token, agentID string) {
	t.Helper()
	cfg, err := agenthook.LoadConfig(filepath.Join(ap.xdg, "brabo", "hooks", agent+"-"+ap.project+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Projects[0].Token, cfg.Projects[0].AgentID
}

// installCmd is brabo install's command for the project, unstarted.
func (ap *agentProject) installCmd(agent string, extra []string, env ...string) *exec.Cmd {
	args := append([]string{"install", agent, "--url", ap.srv.url, "--project", ap.project, "--root", ap.root,
		"--wait", "8s"}, extra...)
	cmd := exec.Command(braboBin, args...)
	cmd.Env = append(ap.env(env...), "BRABO_TOKEN="+ap.admin)
	return cmd
}

// TestInstallIsIdempotentAndAtomic installs Claude Code's hook twice in a
// row and three times at once against a real brabo serve: the project
// has one hook agent, whose earlier tokens are revoked, and the real
// Claude Code still runs its hook. A settings file brabo cannot rewrite
// fails the install before anything changed; --status says what works;
// --uninstall revokes the agent's token.
func TestInstallIsIdempotentAndAtomic(t *testing.T) {
	claude := agenttest.CLI(t, "claude")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"]}`)
	works := func(t *testing.T, word string) {
		t.Helper()
		model, out := claudeRun(t, ap, claude, bash("echo "+word))
		if text, isErr := toolResult(model, 1); isErr || !strings.Contains(text, word) {
			t.Fatalf("the model got %q (error %v)\n%s", text, isErr, out)
		}
		if a := ap.action("echo " + word); a == nil || a["status"] != "executed" {
			t.Fatalf("the hook did not decide the call: %v", a)
		}
	}
	status := func(t *testing.T) (int, string) {
		t.Helper()
		r := runBraboEnv(t, ap.root, ap.env(), "install", "claude", "--status")
		return r.code, r.stdout + r.stderr
	}
	if code, out := status(t); code != 0 || !strings.Contains(out, "claude project installed: no") {
		t.Errorf("--status before any install: exit %d\n%s", code, out)
	}

	ap.install(t, "claude", 8*time.Second, nil)
	first, firstID := ap.hookToken(t, "claude")
	out := ap.install(t, "claude", 8*time.Second, nil)
	second, secondID := ap.hookToken(t, "claude")
	if !strings.Contains(out, "re-used the hook agent") || firstID == "" || secondID != firstID || second == first {
		t.Fatalf("the second install: agent %s then %s, token rotated %v\n%s", firstID, secondID, second != first, out)
	}
	if st, _, _ := ap.srv.call("GET", "/v1/me", first, nil); st != 401 {
		t.Errorf("the first install's token answers %d after the re-install, want 401", st)
	}
	if agents := ap.hookAgents(t); len(agents) != 1 || !agents["claude"] {
		t.Fatalf("hook agents after two installs: %v", agents)
	}
	works(t, "after-two")

	t.Run("three installs at once", func(t *testing.T) {
		var wg sync.WaitGroup
		outs := make([]string, 3)
		errs := make([]error, 3)
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := ap.installCmd("claude", nil).CombinedOutput()
				outs[i], errs[i] = string(b), err
			}()
		}
		wg.Wait()
		for i := range 3 {
			if errs[i] != nil {
				t.Fatalf("install %d: %v\n%s", i, errs[i], outs[i])
			}
		}
		if agents := ap.hookAgents(t); len(agents) != 1 || !agents["claude"] {
			t.Fatalf("hook agents after three installs at once: %v", agents)
		}
		settings, _ := os.ReadFile(filepath.Join(ap.root, ".claude", "settings.json"))
		// One per event: PreToolUse, PermissionRequest, PostToolUse,
		// PostToolUseFailure, PostToolBatch.
		if n := strings.Count(string(settings), "brabo-hook"); n != 5 {
			t.Fatalf("%d hook commands in the settings, want 5 (one per event):\n%s", n, settings)
		}
		works(t, "after-parallel")
	})

	t.Run("a failed install leaves the previous one working", func(t *testing.T) {
		token, _ := ap.hookToken(t, "claude")
		// A file brabo cannot rewrite: the user's own local settings
		// stay, and a broken settings.json stops the install at once.
		path := filepath.Join(ap.root, ".claude", "settings.json")
		good, _ := os.ReadFile(path)
		os.WriteFile(path, append([]byte("{oops"), good...), 0o644)
		b, err := ap.installCmd("claude", nil).CombinedOutput()
		if err == nil || !strings.Contains(string(b), "not a JSON object") {
			t.Fatalf("the install over a broken settings file: %v\n%s", err, b)
		}
		if now, _ := ap.hookToken(t, "claude"); now != token {
			t.Fatal("a failed install changed the hook's token")
		}
		if st, _, _ := ap.srv.call("GET", "/v1/me", token, nil); st != 200 {
			t.Fatalf("the hook's token answers %d after a failed install", st)
		}
		os.WriteFile(path, good, 0o644)
		works(t, "after-failure")
	})

	t.Run("--status says it is installed and reaches brabo", func(t *testing.T) {
		code, out := status(t)
		if code != 0 || !strings.Contains(out, "claude project installed: yes") || !strings.Contains(out, "reaches brabo: yes") ||
			!strings.Contains(out, `as the hook agent "claude"`) {
			t.Fatalf("--status: exit %d\n%s", code, out)
		}
		hook := filepath.Join(filepath.Dir(braboBin), "brabo-hook")
		os.Rename(hook, hook+".away")
		code, out = status(t)
		os.Rename(hook+".away", hook)
		if code != 1 || !strings.Contains(out, "on disk: no") {
			t.Fatalf("--status with the hook binary missing: exit %d\n%s", code, out)
		}
	})

	t.Run("--uninstall revokes the hook agent's token", func(t *testing.T) {
		token, _ := ap.hookToken(t, "claude")
		r := runBraboEnv(t, ap.root, ap.env(), "install", "claude", "--uninstall", "--url", ap.srv.url,
			"--project", ap.project, "--root", ap.root)
		if r.code == 0 || !strings.Contains(r.stderr, "needs a maintainer's token") {
			t.Fatalf("uninstall without a token: %s", r)
		}
		if _, err := os.Stat(filepath.Join(ap.xdg, "brabo", "hooks", "claude-"+ap.project+".json")); err != nil {
			t.Fatal("an uninstall that failed removed the configuration")
		}
		r = runBraboEnv(t, ap.root, ap.env("BRABO_TOKEN="+ap.admin), "install", "claude", "--uninstall", "--url", ap.srv.url,
			"--project", ap.project, "--root", ap.root)
		if r.code != 0 {
			t.Fatalf("uninstall: %s", r)
		}
		if st, _, _ := ap.srv.call("GET", "/v1/me", token, nil); st != 401 {
			t.Errorf("the hook's token answers %d after --uninstall, want 401", st)
		}
		if agents := ap.hookAgents(t); len(agents) != 1 || agents["claude"] {
			t.Errorf("hook agents after --uninstall: %v (want one, revoked)", agents)
		}
		settings, _ := os.ReadFile(filepath.Join(ap.root, ".claude", "settings.json"))
		if strings.Contains(string(settings), "brabo") {
			t.Errorf("the settings keep brabo's hooks: %s", settings)
		}
		// A re-install re-uses the agent, with a live token again.
		ap.install(t, "claude", 8*time.Second, nil)
		if agents := ap.hookAgents(t); len(agents) != 1 || !agents["claude"] {
			t.Fatalf("hook agents after a re-install: %v", agents)
		}
		works(t, "after-reinstall")
	})
}

// TestCodexInstallFailureKeepsTheHooks makes brabo install codex fail
// after it gave the hook agent a new token (the codex that reports the
// trust hashes fails): every file is put back, and the real Codex still
// runs the previous installation's hooks, with the new token.
func TestCodexInstallFailureKeepsTheHooks(t *testing.T) {
	codex := agenttest.CLI(t, "codex")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"]}`)
	home := codexHomeFor(t, ap)
	ap.install(t, "codex", 8*time.Second, []string{"--codex", codex}, "CODEX_HOME="+home)
	before, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	broken := filepath.Join(t.TempDir(), "codex")
	os.WriteFile(broken, []byte("#!/bin/sh\necho broken >&2\nexit 1\n"), 0o755)
	// A longer wait changes the hooks' timeout, so their trust hashes.
	b, err := ap.installCmd("codex", []string{"--codex", broken, "--wait", "20s"}, "CODEX_HOME="+home).CombinedOutput()
	if err == nil {
		t.Fatalf("the install with a broken codex succeeded:\n%s", b)
	}
	t.Logf("the failed install: %s", b)
	after, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	if string(after) != string(before) {
		t.Fatalf("the user's config.toml changed:\n%s\n---\n%s", before, after)
	}
	if agents := ap.hookAgents(t); len(agents) != 1 || !agents["codex"] {
		t.Fatalf("hook agents: %v", agents)
	}
	model, out := codexRun(t, ap, codex, home, execCommand("echo still-guarded"))
	if a := ap.action("echo still-guarded"); a == nil || a["status"] != "executed" || !strings.Contains(codexOutput(model, 1), "still-guarded") {
		t.Fatalf("the previous hooks no longer decide: %v\n%s", a, out)
	}
	var cfg agenthook.Config
	raw, _ := os.ReadFile(filepath.Join(ap.xdg, "brabo", "hooks", "codex-"+ap.project+".json"))
	json.Unmarshal(raw, &cfg)
	if cfg.WaitSeconds != 8 {
		t.Errorf("the hook's configuration says a wait of %d s: the failed install's", cfg.WaitSeconds)
	}
}
