package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

// geminiHomeFor writes Gemini CLI's user settings (an API key login, so a
// headless run does not exit 41) under a temporary GEMINI_CLI_HOME.
func geminiHomeFor(t *testing.T, ap *agentProject) string {
	t.Helper()
	home := filepath.Join(ap.home, "gemini-home")
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	settings := `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

func geminiRun(t *testing.T, ap *agentProject, gemini, home string, script ...agenttest.Call) (*agenttest.Server, string) {
	t.Helper()
	model := agenttest.Gemini(t, script...)
	env := ap.env("GEMINI_CLI_HOME="+home, "GOOGLE_GEMINI_BASE_URL="+model.URL, "GEMINI_API_KEY=x",
		"GEMINI_CLI_TRUST_WORKSPACE=true")
	out, _ := ap.runAgent(t, 120*time.Second, env, gemini, "-p", "do the task", "--output-format", "json")
	return model, out
}

func shellCall(cmd string) agenttest.Call {
	return agenttest.Call{Name: "run_shell_command", Input: map[string]any{"command": cmd, "description": "run it"}}
}

// geminiResponse is what the model was told of the n-th call (from 1).
func geminiResponse(model *agenttest.Server, n int) string {
	rs := model.FunctionResponses()
	if n > len(rs) {
		return ""
	}
	b, _ := jsonMarshal(rs[n-1]["response"])
	return string(b)
}

// TestGeminiCLIAsksBrabo drives the real Gemini CLI (`gemini -p`) with
// brabo install gemini --project.
func TestGeminiCLIAsksBrabo(t *testing.T) {
	gemini := agenttest.CLI(t, "gemini")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"], "deny": ["Bash(touch:*)"]}`)
	home := geminiHomeFor(t, ap)
	out := ap.install(t, "gemini", 8*time.Second, nil, "GEMINI_CLI_HOME="+home)
	if !strings.Contains(out, "brabo.toml") {
		t.Fatalf("brabo install gemini wrote no policy:\n%s", out)
	}

	t.Run("allowed command runs and is reported", func(t *testing.T) {
		model, out := geminiRun(t, ap, gemini, home, shellCall("echo hello-gemini"))
		if got := geminiResponse(model, 1); !strings.Contains(got, "hello-gemini") {
			t.Fatalf("the model got %q\n%s", got, out)
		}
		a := ap.action("echo hello-gemini")
		if a == nil || a["status"] != "executed" {
			t.Fatalf("the action: %v\n%s", a, out)
		}
	})

	t.Run("denied command never runs and the model reads brabo's reason", func(t *testing.T) {
		model, out := geminiRun(t, ap, gemini, home, shellCall("touch denied.txt"))
		if got := geminiResponse(model, 1); !strings.Contains(got, "brabo: denied: permissions.json denies `touch denied.txt` (Bash(touch:*))") {
			t.Fatalf("the model got %q\n%s", got, out)
		}
		if ap.exists("denied.txt") {
			t.Fatal("a denied command ran")
		}
	})

	t.Run("pending command waits for the approval, then runs", func(t *testing.T) {
		decided := ap.decideWhenPending(t, "mkdir gemini-dir", "", 60*time.Second)
		_, out := geminiRun(t, ap, gemini, home, shellCall("mkdir gemini-dir"))
		if <-decided == "" || !ap.exists("gemini-dir") {
			t.Fatalf("the approved command did not run\n%s", out)
		}
	})

	t.Run("a human's deny reaches the model", func(t *testing.T) {
		decided := ap.decideWhenPending(t, "mkdir gemini-refused", "ask the lead first", 60*time.Second)
		model, out := geminiRun(t, ap, gemini, home, shellCall("mkdir gemini-refused"))
		<-decided
		if got := geminiResponse(model, 1); !strings.Contains(got, "ask the lead first") || ap.exists("gemini-refused") {
			t.Fatalf("the model got %q\n%s", got, out)
		}
	})

	t.Run("the hook killed mid-wait", func(t *testing.T) {
		killed := ap.killHookWhenPending(t, "mkdir gemini-killed", 60*time.Second)
		model, out := geminiRun(t, ap, gemini, home, shellCall("mkdir gemini-killed"))
		if !<-killed {
			t.Fatalf("no hook to kill\n%s", out)
		}
		t.Logf("Gemini CLI with its hook killed mid-wait: ran=%v, the model got %q", ap.exists("gemini-killed"), geminiResponse(model, 1))
		// The README's table ("When the hook is missing or killed") says
		// the command runs: a Gemini CLI that changes this changes the table.
		if !ap.exists("gemini-killed") {
			t.Error("Gemini CLI no longer runs a command whose hook was killed: update the README's table")
		}
	})

	t.Run("the hook binary missing", func(t *testing.T) {
		hook := filepath.Join(filepath.Dir(braboBin), "brabo-hook")
		if err := os.Rename(hook, hook+".away"); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(hook+".away", hook)
		model, _ := geminiRun(t, ap, gemini, home, shellCall("mkdir gemini-nohook"))
		t.Logf("Gemini CLI with its hook missing: ran=%v, the model got %q", ap.exists("gemini-nohook"), geminiResponse(model, 1))
		// Blocked, with the hook's error as the tool's (the README's table).
		if got := geminiResponse(model, 1); ap.exists("gemini-nohook") || !strings.Contains(got, "No such file or directory") {
			t.Errorf("Gemini CLI with its hook missing: ran=%v, the model got %q; the README's table says blocked, with the hook's error",
				ap.exists("gemini-nohook"), got)
		}
	})

	t.Run("a killed brabo serve makes the hook deny", func(t *testing.T) {
		ap.srv.cmd.Process.Kill()
		ap.srv.cmd.Wait()
		model, out := geminiRun(t, ap, gemini, home, shellCall("echo should-not-run > killed.txt"))
		if got := geminiResponse(model, 1); !strings.Contains(got, "cannot be reached") || ap.exists("killed.txt") {
			t.Fatalf("the model got %q\n%s", got, out)
		}
	})
}
