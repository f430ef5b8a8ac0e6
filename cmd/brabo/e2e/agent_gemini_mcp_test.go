package e2e

// Gemini CLI's MCP tools reach brabo's hook after brabo install gemini
// (issue 29, 6): in -p, Gemini CLI denies a tool no policy rule allows
// before any BeforeTool hook runs, so without brabo's rule for MCP tools
// the hook never sees them. Real Gemini CLI, real brabo serve, a real
// stdio MCP server (the test binary, agenttest.ServeMCPEchoIfAsked).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

// geminiMCPServers adds MCP servers, each the echo server under its own
// name, to the project's .gemini/settings.json (which brabo install
// wrote), and returns the file each server logs the texts it said to.
func geminiMCPServers(t *testing.T, ap *agentProject, names ...string) string {
	t.Helper()
	exe, env := mcpEcho(t)
	log := filepath.Join(filepath.Dir(ap.root), "mcp-calls.log")
	env[agenttest.MCPEchoLogEnv] = log
	path := filepath.Join(ap.root, ".gemini", "settings.json")
	settings := map[string]any{}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = map[string]any{"command": exe, "args": []string{}, "env": env}
	}
	settings["mcpServers"] = servers
	if b, err = json.Marshal(settings); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestGeminiCLIMcpToolsReachBrabo: after brabo install gemini, an MCP
// tool allowed in permissions.json runs, with its output in brabo's log;
// one permissions.json denies never reaches its server, and the model
// reads brabo's reason; Gemini CLI reports no warning about brabo's
// policy file.
func TestGeminiCLIMcpToolsReachBrabo(t *testing.T) {
	gemini := agenttest.CLI(t, "gemini")
	ap := newAgentProject(t, `{"allow": ["McpTool(echo__say)"], "deny": ["McpTool(blocked__say)"]}`)
	home := geminiHomeFor(t, ap)
	ap.install(t, "gemini", 20*time.Second, nil, "GEMINI_CLI_HOME="+home)
	log := geminiMCPServers(t, ap, "echo", "blocked")

	model, out := geminiRun(t, ap, gemini, home,
		agenttest.Call{Name: "mcp_echo_say", Input: map[string]any{"text": "hi from gemini"}},
		agenttest.Call{Name: "mcp_blocked_say", Input: map[string]any{"text": "never said"}})
	// Gemini names a policy file it rejects or warns about, and a settings file
	// that fails its schema ("Invalid configuration in …").
	if strings.Contains(out, "brabo.toml") || strings.Contains(out, "Policy file") || strings.Contains(out, "Invalid configuration") {
		t.Errorf("Gemini CLI warned about a file brabo install wrote:\n%s", out)
	}
	if got := geminiResponse(model, 1); !strings.Contains(got, agenttest.MCPEchoPrefix+"hi from gemini") {
		t.Fatalf("the allowed MCP call: the model got %q\n%s", got, out)
	}
	wantResult(t, "MCP", ap.settled(t, "echo__say", 10*time.Second), agenttest.MCPEchoPrefix+"hi from gemini", "")

	if got := geminiResponse(model, 2); !strings.Contains(got, "brabo: denied") || !strings.Contains(got, "McpTool(blocked__say)") {
		t.Errorf("the denied MCP call: the model got %q\n%s", got, out)
	}
	if a := ap.action("blocked__say"); a == nil || a["status"] != "denied" {
		t.Errorf("the denied MCP call is not brabo's denial: %v", a)
	}
	said, _ := os.ReadFile(log)
	if !strings.Contains(string(said), "hi from gemini") || strings.Contains(string(said), "never said") {
		t.Errorf("the MCP servers said %q; want the allowed call only", said)
	}
}

// TestGeminiCLIOwnPolicyRefusal: a command Gemini CLI's own policy denies
// after brabo's hook allowed it never runs, and is recorded not_run with
// Gemini's message: Gemini CLI 0.61.0 runs BeforeTool before its policy
// check and AfterTool only for a tool it ran, so the hook's watcher finds
// the refusal in Gemini's chat recording (watch_gemini.go).
func TestGeminiCLIOwnPolicyRefusal(t *testing.T) {
	gemini := agenttest.CLI(t, "gemini")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"]}`)
	home := geminiHomeFor(t, ap)
	ap.install(t, "gemini", 20*time.Second, nil, "GEMINI_CLI_HOME="+home)
	// The user's own rule, at an ordinary priority: above brabo's (1).
	rule := "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"echo refused-by-gemini\"\ndecision = \"deny\"\npriority = 500\n"
	if err := os.WriteFile(filepath.Join(home, ".gemini", "policies", "mine.toml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	model, out := geminiRun(t, ap, gemini, home, shellCall("echo refused-by-gemini > refused.txt"), shellCall("echo ran-by-gemini"))
	if got := geminiResponse(model, 1); !strings.Contains(got, "denied by policy") || ap.exists("refused.txt") {
		t.Fatalf("Gemini CLI's own deny: ran=%v, the model got %q\n%s", ap.exists("refused.txt"), got, out)
	}
	wantNotRun(t, ap, "a command Gemini CLI's policy denied", ap.settled(t, "echo refused-by-gemini", 20*time.Second),
		"Gemini CLI did not run it: Tool execution denied by policy.")
	// A command it ran is still AfterTool's, reported once.
	wantResult(t, "a command Gemini CLI ran", ap.settled(t, "echo ran-by-gemini", 10*time.Second), "", "ran-by-gemini")
}
