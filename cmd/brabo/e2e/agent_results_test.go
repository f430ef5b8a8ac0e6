package e2e

// Every tool call an agent ran has its result in brabo's log (issue 29,
// 5): Claude Code's Read, Edit and MCP results with their output, Codex's
// apply_patch through exec_command per file and its MCP results, Gemini
// CLI's edits, and a call the agent refused itself after brabo allowed
// it recorded not_run with the agent's reason, never auto_approved for
// good. Real CLIs, a real brabo serve, a real stdio MCP server (the test
// binary itself, agenttest.ServeMCPEchoIfAsked).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

func init() { agenttest.ServeMCPEchoIfAsked() }

// mcpEcho is the command and environment that start the echo MCP server.
func mcpEcho(t *testing.T) (string, map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, map[string]string{agenttest.MCPEchoEnv: "1"}
}

// settled waits until the newest action holding text has left the
// decided-but-unreported state (the hooks report after the tool), and
// returns it.
func (ap *agentProject) settled(t *testing.T, text string, limit time.Duration) map[string]any {
	t.Helper()
	var a map[string]any
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		a = ap.action(text)
		if a != nil && a["status"] != "auto_approved" && a["status"] != "approved" && a["status"] != "pending" {
			return a
		}
	}
	t.Fatalf("the action of %q is still %v after %s: its result never reached the log", text, a["status"], limit)
	return nil
}

// wantResult checks an action executed by its agent with an output that
// starts with prefix (the tool's own text, not a JSON of its response)
// and holds want.
func wantResult(t *testing.T, what string, a map[string]any, prefix, want string) {
	t.Helper()
	res, _ := a["result"].(map[string]any)
	out, _ := res["output"].(string)
	if a["status"] != "executed" || !strings.HasPrefix(out, prefix) || !strings.Contains(out, want) {
		t.Errorf("%s: status %v, output %q; want executed with %q… holding %q", what, a["status"], out, prefix, want)
	}
}

// wantNotRun checks an action its agent refused itself after brabo
// allowed it: not_run, with the agent's reason, recorded by the agent.
func wantNotRun(t *testing.T, ap *agentProject, what string, a map[string]any, reason string) {
	t.Helper()
	res, _ := a["result"].(map[string]any)
	msg, _ := res["error"].(string)
	if a["status"] != "not_run" || res["code"] != "not_run" || !strings.Contains(msg, reason) {
		t.Fatalf("%s: status %v, result %v; want not_run with %q", what, a["status"], res, reason)
	}
	if _, has := res["exitCode"]; has {
		t.Errorf("%s: a call that did not run has an exit code: %v", what, res)
	}
	evs := ap.events(t, a["id"].(string))
	if len(evs) != 2 || evs[1] != "action.not_run by "+a["actorId"].(string) {
		t.Errorf("%s: events %v, want created then action.not_run by the agent", what, evs)
	}
}

// TestClaudeCodeResultsInTheLog: Read, Edit and an MCP tool report their
// output; a Bash call Claude Code's own deny refused after brabo allowed
// it is not_run with Claude Code's reason (its PostToolBatch).
func TestClaudeCodeResultsInTheLog(t *testing.T) {
	claude := agenttest.CLI(t, "claude")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)", "WriteFile(notes/**)", "McpTool(echo__say)"]}`)
	ap.install(t, "claude", 20*time.Second, nil)
	os.MkdirAll(filepath.Join(ap.root, "notes"), 0o755)
	os.WriteFile(filepath.Join(ap.root, "notes", "e.txt"), []byte("one two\n"), 0o644)
	outside := filepath.Join(filepath.Dir(ap.root), "outside.txt")
	os.WriteFile(outside, []byte("outside-content\n"), 0o644)
	// The user's own Claude Code rule, which brabo's allow does not lift.
	os.MkdirAll(filepath.Join(ap.home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(ap.home, ".claude", "settings.json"), []byte(`{"permissions":{"deny":["Bash(echo refused-by-claude:*)"]}}`), 0o644)
	exe, env := mcpEcho(t)
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"echo": map[string]any{"command": exe, "args": []string{}, "env": env}}})

	decided := ap.decideWhenPending(t, "outside.txt", "", 60*time.Second)
	model := agenttest.Anthropic(t,
		agenttest.Call{Name: "Read", Input: map[string]any{"file_path": outside}},
		agenttest.Call{Name: "Edit", Input: map[string]any{"file_path": filepath.Join(ap.root, "notes", "e.txt"), "old_string": "two", "new_string": "three"}},
		agenttest.Call{Name: "mcp__echo__say", Input: map[string]any{"text": "hi from claude"}},
		bash("echo refused-by-claude now"),
	)
	out, _ := ap.runAgent(t, 120*time.Second, ap.env("ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-brabo-test",
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1"),
		claude, "-p", "do the task", "--output-format", "json", "--mcp-config", string(mcpJSON), "--strict-mcp-config")
	if <-decided == "" {
		t.Fatalf("the read outside the project was never asked\n%s", out)
	}
	if text, isErr := toolResult(model, 4); !isErr || !strings.Contains(text, "has been denied") {
		t.Fatalf("Claude Code did not refuse the call itself: the model got %q (error %v)\n%s", text, isErr, out)
	}
	wantResult(t, "Read", ap.settled(t, "outside.txt", 10*time.Second), "outside-content\n", "")
	wantResult(t, "Edit", ap.settled(t, "notes/e.txt", 10*time.Second), "--- ", "\n-one two\n+one three\n")
	wantResult(t, "MCP", ap.settled(t, "echo__say", 10*time.Second), agenttest.MCPEchoPrefix+"hi from claude", "")
	wantNotRun(t, ap, "Bash refused by Claude Code", ap.settled(t, "echo refused-by-claude", 10*time.Second),
		"Permission to use Bash with command echo refused-by-claude now has been denied")
}

// TestCodexResultsInTheLog: an apply_patch through exec_command (which
// Codex applies itself, with no PostToolUse) is reported per file from
// Codex's transcript; an MCP tool reports its output; a command Codex's
// own policy forbids after brabo allowed it is not_run with its reason.
func TestCodexResultsInTheLog(t *testing.T) {
	codex := agenttest.CLI(t, "codex")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)", "WriteFile(notes/**)", "McpTool(echo__say)"]}`)
	home := codexHomeFor(t, ap)
	exe, env := mcpEcho(t)
	f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n[mcp_servers.echo]\ncommand = \"" + exe + "\"\nenv = { " + agenttest.MCPEchoEnv + " = \"" + env[agenttest.MCPEchoEnv] + "\" }\n")
	f.Close()
	// The user's own Codex rule, which brabo's allow does not lift.
	os.MkdirAll(filepath.Join(home, "rules"), 0o755)
	os.WriteFile(filepath.Join(home, "rules", "default.rules"), []byte(`prefix_rule(pattern=["echo", "refused-by-codex"], decision="forbidden")`+"\n"), 0o644)
	ap.install(t, "codex", 20*time.Second, []string{"--codex", codex}, "CODEX_HOME="+home)

	patch := "*** Begin Patch\n*** Add File: notes/a.txt\n+hello\n*** Add File: notes/b.txt\n+world\n*** End Patch\n"
	model, out := codexRun(t, ap, codex, home, execCommand("apply_patch <<'EOF'\n"+patch+"EOF\n"),
		agenttest.Call{Name: "mcp__echo__say", Input: map[string]any{"text": "hi from codex"}},
		execCommand("echo refused-by-codex now"))
	if !ap.exists("notes/a.txt") || !ap.exists("notes/b.txt") {
		t.Fatalf("the patch was not applied; the model got %q\n%s", codexOutput(model, 1), out)
	}
	if got := codexOutput(model, 3); !strings.Contains(got, "policy forbids") {
		t.Fatalf("Codex did not refuse the call itself: the model got %q\n%s", got, out)
	}
	for _, file := range []string{"notes/a.txt", "notes/b.txt"} {
		a := ap.settled(t, file, 20*time.Second)
		wantResult(t, "apply_patch of "+file, a, "", "Success. Updated the following files:\nA notes/a.txt\nA notes/b.txt")
		if res := a["result"].(map[string]any); res["exitCode"] != 0.0 {
			t.Errorf("apply_patch of %s: exit code %v", file, res["exitCode"])
		}
	}
	wantResult(t, "MCP", ap.settled(t, "echo__say", 20*time.Second), agenttest.MCPEchoPrefix+"hi from codex", "")
	wantNotRun(t, ap, "a command Codex's policy forbids", ap.settled(t, "echo refused-by-codex", 20*time.Second),
		"policy forbids commands starting with `echo refused-by-codex`")
}

// TestGeminiCLIResultsInTheLog: Gemini CLI's replace and write_file report
// their output (AfterTool's llmContent). Its MCP results are checked in
// TestGeminiCLIMcpToolsReachBrabo.
func TestGeminiCLIResultsInTheLog(t *testing.T) {
	gemini := agenttest.CLI(t, "gemini")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)", "WriteFile(notes/**)"]}`)
	home := geminiHomeFor(t, ap)
	ap.install(t, "gemini", 20*time.Second, nil, "GEMINI_CLI_HOME="+home)
	os.MkdirAll(filepath.Join(ap.root, "notes"), 0o755)
	os.WriteFile(filepath.Join(ap.root, "notes", "e.txt"), []byte("one two\n"), 0o644)
	model, out := geminiRun(t, ap, gemini, home,
		agenttest.Call{Name: "replace", Input: map[string]any{"file_path": filepath.Join(ap.root, "notes", "e.txt"),
			"old_string": "two", "new_string": "three", "instruction": "say three"}},
		agenttest.Call{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(ap.root, "notes", "new.txt"), "content": "fresh\n"}})
	if b, _ := os.ReadFile(filepath.Join(ap.root, "notes", "new.txt")); string(b) != "fresh\n" {
		t.Fatalf("the write did not run; the model got %q\n%s", geminiResponse(model, 2), out)
	}
	wantResult(t, "replace", ap.settled(t, "notes/e.txt", 10*time.Second), "Successfully modified file", "")
	wantResult(t, "write_file", ap.settled(t, "notes/new.txt", 10*time.Second), "Successfully", "notes/new.txt")
}
