package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

// claudeRun runs `claude -p` in the project against a scripted Anthropic
// server playing script, and returns the server (what the model was told)
// and what claude printed.
func claudeRun(t *testing.T, ap *agentProject, claude string, script ...agenttest.Call) (*agenttest.Server, string) {
	t.Helper()
	model := agenttest.Anthropic(t, script...)
	env := ap.env("ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-brabo-test",
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1")
	out, _ := ap.runAgent(t, 90*time.Second, env, claude, "-p", "do the task", "--output-format", "json")
	return model, out
}

func bash(command string) agenttest.Call {
	return agenttest.Call{Name: "Bash", Input: map[string]any{"command": command, "description": "run it"}}
}

// toolError returns the text of the tool_result for the n-th call (from
// 1) and whether Claude Code marked it an error.
func toolResult(model *agenttest.Server, n int) (string, bool) {
	results := model.ToolResults()
	if n > len(results) {
		return "", false
	}
	r := results[n-1]
	isErr, _ := r["is_error"].(bool)
	var text string
	switch c := r["content"].(type) {
	case string:
		text = c
	case []any:
		for _, b := range c {
			if m, ok := b.(map[string]any); ok {
				s, _ := m["text"].(string)
				text += s
			}
		}
	}
	return text, isErr
}

// TestClaudeCodeAsksBrabo drives the real Claude Code binary (`claude -p`)
// with brabo install claude --project against a real brabo serve.
func TestClaudeCodeAsksBrabo(t *testing.T) {
	claude := agenttest.CLI(t, "claude")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"], "deny": ["Bash(touch:*)"]}`)
	out := ap.install(t, "claude", 8*time.Second, nil)
	for _, want := range []string{"settings.json", "PreToolUse", "CLAUDE_CODE_SHELL", "0600"} {
		if !strings.Contains(out, want) {
			t.Errorf("brabo install says nothing of %s:\n%s", want, out)
		}
	}
	settings, _ := os.ReadFile(filepath.Join(ap.root, ".claude", "settings.json"))
	if !strings.Contains(string(settings), "brabo-hook") || !strings.Contains(string(settings), `"timeout": 38`) {
		t.Fatalf("the settings do not run the slim hook with the timeout: %s", settings)
	}
	cfgs, _ := filepath.Glob(filepath.Join(ap.xdg, "brabo", "hooks", "claude-*.json"))
	if len(cfgs) != 1 {
		t.Fatalf("hook configurations: %v", cfgs)
	}
	if fi, err := os.Stat(cfgs[0]); err != nil || fi.Mode().Perm() != 0o600 || strings.HasPrefix(cfgs[0], ap.root) {
		t.Fatalf("the token file %s: %v %v", cfgs[0], fi.Mode(), err)
	}

	t.Run("allowed Bash runs and is reported as executed by the agent", func(t *testing.T) {
		model, out := claudeRun(t, ap, claude, bash("echo hello-brabo"))
		if text, isErr := toolResult(model, 1); isErr || !strings.Contains(text, "hello-brabo") {
			t.Fatalf("the model got %q (error %v)\n%s", text, isErr, out)
		}
		a := ap.action("echo hello-brabo")
		if a == nil || a["status"] != "executed" || a["execution"] == nil {
			t.Fatalf("action: %v", a)
		}
		res := a["result"].(map[string]any)
		if !strings.Contains(res["output"].(string), "hello-brabo") {
			t.Errorf("reported output %v", res)
		}
		evs := ap.events(t, a["id"].(string))
		agentID := a["actorId"].(string)
		if len(evs) != 2 || evs[1] != "action.executed by "+agentID {
			t.Errorf("events %v, want created then executed by the agent %s", evs, agentID)
		}
	})

	t.Run("denied Bash never runs and the model reads brabo's reason", func(t *testing.T) {
		model, out := claudeRun(t, ap, claude, bash("touch denied.txt"))
		text, isErr := toolResult(model, 1)
		if !isErr || !strings.Contains(text, "brabo: denied: permissions.json denies `touch denied.txt` (Bash(touch:*))") {
			t.Fatalf("the model got %q (error %v)\n%s", text, isErr, out)
		}
		if ap.exists("denied.txt") {
			t.Fatal("a denied command ran")
		}
	})

	t.Run("pending Bash waits for the approval, then runs", func(t *testing.T) {
		decided := ap.decideWhenPending(t, "mkdir pending-dir", "", 30*time.Second)
		model, out := claudeRun(t, ap, claude, bash("mkdir pending-dir"))
		if id := <-decided; id == "" {
			t.Fatalf("no pending action came\n%s", out)
		}
		if !ap.exists("pending-dir") {
			t.Fatalf("the approved command did not run\n%s", out)
		}
		if _, isErr := toolResult(model, 1); isErr {
			t.Errorf("the approved command's result is an error")
		}
		if a := ap.action("mkdir pending-dir"); a["status"] != "executed" || a["decidedBy"] == nil {
			t.Errorf("approved action: %v", a)
		}
	})

	t.Run("a human's deny reaches the model with its reason", func(t *testing.T) {
		decided := ap.decideWhenPending(t, "mkdir refused-dir", "not in this sprint", 30*time.Second)
		model, out := claudeRun(t, ap, claude, bash("mkdir refused-dir"))
		<-decided
		text, isErr := toolResult(model, 1)
		if !isErr || !strings.Contains(text, "not in this sprint") {
			t.Fatalf("the model got %q (error %v)\n%s", text, isErr, out)
		}
		if ap.exists("refused-dir") {
			t.Fatal("a denied command ran")
		}
	})

	t.Run("a Write to permissions.json is held for a maintainer", func(t *testing.T) {
		decided := ap.decideWhenPending(t, "permissions.json", "no", 30*time.Second)
		write := agenttest.Call{Name: "Write", Input: map[string]any{"file_path": filepath.Join(ap.root, "permissions.json"),
			"content": `{"allow": ["Bash(rm:*)"]}`}}
		model, out := claudeRun(t, ap, claude, write)
		id := <-decided
		if id == "" {
			t.Fatalf("the write was not held\n%s", out)
		}
		a := ap.action("permissions.json")
		dec, _ := a["decision"].(map[string]any)
		if dec["requiredRole"] != "maintainer" || a["status"] != "denied" {
			t.Errorf("the held write: %v", a)
		}
		if _, isErr := toolResult(model, 1); !isErr {
			t.Error("the denied write is not an error for the model")
		}
		if b, _ := os.ReadFile(filepath.Join(ap.root, "permissions.json")); strings.Contains(string(b), "rm:*") {
			t.Fatal("permissions.json was written")
		}
	})

	t.Run("the hook killed mid-wait", func(t *testing.T) {
		killed := ap.killHookWhenPending(t, "mkdir killed-dir", 30*time.Second)
		model, out := claudeRun(t, ap, claude, bash("mkdir killed-dir"))
		if !<-killed {
			t.Fatalf("no hook to kill\n%s", out)
		}
		text, isErr := toolResult(model, 1)
		n := 0
		for _, a := range ap.actions() {
			if p, _ := a["payload"].(map[string]any); p["command"] == "mkdir killed-dir" {
				n++
			}
		}
		t.Logf("Claude Code with its hook killed mid-wait: ran=%v, %d actions proposed, tool result %q (error %v)", ap.exists("killed-dir"), n, text, isErr)
		if ap.exists("killed-dir") {
			t.Error("the command ran after its hook was killed (README says it does not)")
		}
	})

	t.Run("the hook binary missing", func(t *testing.T) {
		hook := filepath.Join(filepath.Dir(braboBin), "brabo-hook")
		if err := os.Rename(hook, hook+".away"); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(hook+".away", hook)
		model, out := claudeRun(t, ap, claude, bash("mkdir nohook-dir"))
		text, isErr := toolResult(model, 1)
		t.Logf("Claude Code with its hook missing: ran=%v, tool result %q (error %v)", ap.exists("nohook-dir"), text, isErr)
		if ap.exists("nohook-dir") {
			t.Error("the command ran with its hook missing (README says it does not, in -p mode)")
		}
		_ = out
	})

	t.Run("a killed brabo serve makes the hook deny", func(t *testing.T) {
		ap.srv.cmd.Process.Kill()
		ap.srv.cmd.Wait()
		model, out := claudeRun(t, ap, claude, bash("echo should-not-run > killed.txt"))
		text, isErr := toolResult(model, 1)
		if !isErr || !strings.Contains(text, "cannot be reached") {
			t.Fatalf("the model got %q (error %v)\n%s", text, isErr, out)
		}
		if ap.exists("killed.txt") {
			t.Fatal("a command ran while brabo was down")
		}
	})
	_ = fmt.Sprint
}
