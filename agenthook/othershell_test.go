package agenthook

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// The other-shell guard: brabo reads a command line as
// bash, so a line brabo approved that another shell runs is never let
// through by the hook alone. With a non-bash SHELL, an approved Bash call
// is "ask" for Claude Code (its own prompt decides), a deny for Codex
// (which cannot ask), and no allow in a permission request; Claude Code
// with CLAUDE_CODE_SHELL pinned to bash, and Gemini CLI (bash on Linux),
// are allowed. Deleting the guard in decideCall, or the shell check in
// requests, turns the first cases into allows.
func TestHookAsksWhenAnotherShellRunsTheCommand(t *testing.T) {
	fb := &fakeBrabo{statuses: map[string]brabo.ActionStatus{"ok": brabo.StatusAutoApproved}}
	srv := httptest.NewServer(fb)
	defer srv.Close()
	root := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "c.json")
	writeConfig(cfg, &Config{Server: srv.URL, WaitSeconds: 1, Projects: []ProjectConfig{{ID: "p", Root: root, Token: "t"}}})
	call := func(tool string) string {
		return `{"session_id":"s","tool_use_id":"u","cwd":"` + root + `","tool_name":"` + tool + `","tool_input":{"command":"ok"}}`
	}
	for _, shell := range []string{"/bin/zsh", "/usr/bin/fish", "/opt/not-a-shell/xsh", "/bin/sh"} {
		for _, c := range []struct {
			claudeShell string
			args        []string
			tool        string
			code        int
			out, notOut string
			stderr      string
		}{
			{"", []string{"claude", "pre-tool-use"}, "Bash", 0, `"permissionDecision":"ask"`, `"allow"`, ""},
			{"", []string{"claude", "permission-request"}, "Bash", 0, "", `"allow"`, ""},
			{"", []string{"codex", "pre-tool-use"}, "Bash", 2, "", `"allow"`, "another shell runs it"},
			{"", []string{"codex", "permission-request"}, "Bash", 0, "", `"allow"`, ""},
			{"/bin/bash", []string{"claude", "pre-tool-use"}, "Bash", 0, `"permissionDecision":"allow"`, `"ask"`, ""},
			{"/bin/bash", []string{"codex", "pre-tool-use"}, "Bash", 2, "", `"allow"`, "another shell runs it"},
			{"", []string{"gemini", "before-tool"}, "run_shell_command", 0, `"decision":"allow"`, `"ask"`, ""},
		} {
			t.Setenv("TMPDIR", t.TempDir())
			t.Setenv("SHELL", shell)
			t.Setenv("CLAUDE_CODE_SHELL", c.claudeShell)
			code, out, errOut := hookRun(t, cfg, call(c.tool), c.args...)
			if code != c.code || !strings.Contains(out, c.out) || strings.Contains(out, c.notOut) || !strings.Contains(errOut, c.stderr) {
				t.Errorf("SHELL=%s CLAUDE_CODE_SHELL=%q %v: exit %d out %q err %q", shell, c.claudeShell, c.args, code, out, errOut)
			}
		}
	}
}
