package agenthook

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The agents' own sandbox settings: written where the agent reads them,
// removed without touching the user's own, and never a file the agent
// cannot read.
func TestAgentSandboxSettings(t *testing.T) {
	t.Run("claude: brabo's keys on, off, the user's kept", func(t *testing.T) {
		s := map[string]any{"sandbox": map[string]any{"excludedCommands": []any{"docker"}}}
		setClaudeSandbox(s, true)
		if !claudeSandboxOn(s) || s["sandbox"].(map[string]any)["excludedCommands"] == nil {
			t.Fatalf("on: %v", s)
		}
		setClaudeSandbox(s, false)
		if claudeSandboxOn(s) || len(s["sandbox"].(map[string]any)) != 1 {
			t.Fatalf("off: %v", s)
		}
		mine := map[string]any{"sandbox": map[string]any{"enabled": true, "allowUnsandboxedCommands": true}}
		setClaudeSandbox(mine, false)
		if sb := mine["sandbox"].(map[string]any); sb["allowUnsandboxedCommands"] != true {
			t.Fatalf("the user's own value was removed: %v", mine)
		}
		empty := map[string]any{}
		setClaudeSandbox(empty, true)
		setClaudeSandbox(empty, false)
		if len(empty) != 0 {
			t.Fatalf("off after on: %v", empty)
		}
	})
	t.Run("gemini: tools.sandbox", func(t *testing.T) {
		s := map[string]any{"tools": map[string]any{"core": []any{"x"}}}
		setGeminiSandbox(s, true)
		if !geminiSandboxOn(s) {
			t.Fatalf("on: %v", s)
		}
		setGeminiSandbox(s, false)
		if geminiSandboxOn(s) || s["tools"].(map[string]any)["core"] == nil {
			t.Fatalf("off: %v", s)
		}
		if !geminiSandboxOn(map[string]any{"tools": map[string]any{"sandbox": map[string]any{"enabled": true}}}) ||
			!geminiSandboxOn(map[string]any{"tools": map[string]any{"sandbox": "podman"}}) {
			t.Error("a sandbox the user turned on is not reported")
		}
	})
	t.Run("codex: a block before every table, removed again", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.toml")
		mine := "model = \"o3\"\n\n[mcp_servers.x]\ncommand = \"x\"\n"
		os.WriteFile(path, []byte(mine), 0o644)
		if err := checkCodexSandbox(path); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if _, err := setCodexSandbox(path, true); err != nil {
				t.Fatal(err)
			}
		}
		b, _ := os.ReadFile(path)
		if !strings.HasPrefix(string(b), codexTopBegin+"\n"+codexSandbox+codexTopEnd+"\n") || strings.Count(string(b), "sandbox_mode") != 1 || !strings.HasSuffix(string(b), mine) {
			t.Fatalf("on, twice:\n%s", b)
		}
		if err := checkCodexSandbox(path); err != nil {
			t.Fatalf("brabo's own block refused: %v", err)
		}
		if _, err := setCodexSandbox(path, false); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != mine {
			t.Fatalf("off:\n%s", b)
		}
		os.WriteFile(path, []byte("sandbox_mode = \"danger-full-access\"\n"), 0o644)
		if err := checkCodexSandbox(path); err == nil || !strings.Contains(err.Error(), "sets Codex's sandbox itself") {
			t.Fatalf("a file with its own sandbox_mode: %v", err)
		}
	})
}

// TestCodexHookFailsClosed: the deciding hooks' command, as Codex runs
// it (a shell), blocks (exit 2) when the hook is missing or ends without
// an answer, and keeps the hook's allow (0) and deny (2, its reason).
func TestCodexHookFailsClosed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, script string
		code         int
		stderr       string
	}{
		{"allow", "exit 0", 0, ""},
		{"deny", "echo 'brabo: denied: no' >&2; exit 2", 2, "brabo: denied: no\n"},
		{"crash", "exit 1", 2, "brabo: the hook ended without an answer (exit 1), so this call is denied\n"},
		{"killed", "kill -9 $$", 2, "brabo: the hook ended without an answer (exit 137), so this call is denied\n"},
		{"missing", "", 2, "brabo: the hook ended without an answer (exit 127), so this call is denied\n"},
	} {
		hook := filepath.Join(dir, c.name)
		if c.script != "" {
			os.WriteFile(hook, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755)
		}
		code, stderr := runShell(t, codexFailClosedPrefix+shellJoin([]string{hook, "codex", "pre-tool-use", "--config", "/x"})+codexFailClosedSuffix)
		if code != c.code || !strings.HasSuffix(stderr, c.stderr) || strings.Contains(stderr, "Killed") {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", c.name, code, stderr, c.code, c.stderr)
		}
	}
}

// runShell runs command with bash -c, as Codex runs a hook, and returns its
// exit code and stderr.
func runShell(t *testing.T, command string) (int, string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", command)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}
