package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

// codexHome writes Codex's user configuration for a scripted model server
// (a model_providers entry speaking the Responses API) and returns the
// folder (CODEX_HOME); brabo install adds its block to the same file.
func codexHomeFor(t *testing.T, ap *agentProject) string {
	t.Helper()
	home := filepath.Join(ap.home, ".codex")
	os.MkdirAll(home, 0o755)
	cfg := `model = "gpt-test"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:1/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// codexRun runs `codex exec` in the project against a scripted Responses
// server; the provider's base_url is set on the command line.
func codexRun(t *testing.T, ap *agentProject, codex, home string, script ...agenttest.Call) (*agenttest.Server, string) {
	t.Helper()
	return codexRunModel(t, ap, codex, home, "gpt-test", script...)
}

// codexRunModel is codexRun with a model name: Codex offers its tools by
// the model's metadata (apply_patch to its own models only).
func codexRunModel(t *testing.T, ap *agentProject, codex, home, modelName string, script ...agenttest.Call) (*agenttest.Server, string) {
	t.Helper()
	model := agenttest.OpenAIResponses(t, script...)
	env := ap.env("CODEX_HOME="+home, "FAKE_OPENAI_KEY=x")
	out, _ := ap.runAgent(t, 90*time.Second, env, codex, "exec", "--json", "--skip-git-repo-check",
		"-c", `model_providers.fake.base_url="`+model.URL+`/v1"`, "-m", modelName, "do the task")
	return model, out
}

func execCommand(cmd string) agenttest.Call {
	return agenttest.Call{Name: "exec_command", Input: map[string]any{"cmd": cmd}}
}

// codexOutput is what the model was told of the n-th call (from 1).
func codexOutput(model *agenttest.Server, n int) string {
	outs := model.FunctionOutputs()
	if n > len(outs) {
		return ""
	}
	switch o := outs[n-1]["output"].(type) {
	case string:
		return o
	default:
		b, _ := jsonMarshal(o)
		return string(b)
	}
}

// TestCodexAsksBrabo drives the real Codex CLI (`codex exec`) with brabo
// install codex --project, which must leave hooks Codex really runs: the
// run does not pass --dangerously-bypass-hook-trust.
func TestCodexAsksBrabo(t *testing.T) {
	codex := agenttest.CLI(t, "codex")
	ap := newAgentProject(t, `{"allow": ["Bash(echo:*)"], "deny": ["Bash(touch:*)"]}`)
	home := codexHomeFor(t, ap)
	out := ap.install(t, "codex", 8*time.Second, []string{"--codex", codex}, "CODEX_HOME="+home)
	if !strings.Contains(out, "trusts brabo's 3 hooks") {
		t.Fatalf("brabo install codex recorded no trust:\n%s", out)
	}
	// Idempotent: a second install replaces its block.
	ap.install(t, "codex", 8*time.Second, []string{"--codex", codex}, "CODEX_HOME="+home)
	user, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	if strings.Count(string(user), "trusted_hash") != 3 || !strings.Contains(string(user), `model_provider = "fake"`) {
		t.Fatalf("the user's config.toml after two installs:\n%s", user)
	}

	t.Run("allowed command runs and is reported", func(t *testing.T) {
		model, out := codexRun(t, ap, codex, home, execCommand("echo hello-codex"))
		if !strings.Contains(codexOutput(model, 1), "hello-codex") {
			t.Fatalf("the model got %q\n%s", codexOutput(model, 1), out)
		}
		a := ap.action("echo hello-codex")
		if a == nil || a["status"] != "executed" {
			t.Fatalf("the hook did not run, or did not report: %v\n%s", a, out)
		}
		res := a["result"].(map[string]any)
		if !strings.Contains(res["output"].(string), "hello-codex") {
			t.Errorf("reported %v", res)
		}
	})

	t.Run("denied command never runs and the model reads brabo's reason", func(t *testing.T) {
		model, out := codexRun(t, ap, codex, home, execCommand("touch denied.txt"))
		if got := codexOutput(model, 1); !strings.Contains(got, "brabo: denied: permissions.json denies `touch denied.txt` (Bash(touch:*))") {
			t.Fatalf("the model got %q\n%s", got, out)
		}
		if ap.exists("denied.txt") {
			t.Fatal("a denied command ran")
		}
	})

	t.Run("pending command waits for the approval, then runs", func(t *testing.T) {
		decided := ap.decideWhenPending(t, "mkdir codex-dir", "", 30*time.Second)
		_, out := codexRun(t, ap, codex, home, execCommand("mkdir codex-dir"))
		if <-decided == "" || !ap.exists("codex-dir") {
			t.Fatalf("the approved command did not run\n%s", out)
		}
	})

	t.Run("a human's deny reaches the model", func(t *testing.T) {
		decided := ap.decideWhenPending(t, "mkdir codex-refused", "use the build folder", 30*time.Second)
		model, out := codexRun(t, ap, codex, home, execCommand("mkdir codex-refused"))
		<-decided
		if got := codexOutput(model, 1); !strings.Contains(got, "use the build folder") || ap.exists("codex-refused") {
			t.Fatalf("the model got %q\n%s", got, out)
		}
	})

	t.Run("apply_patch is one write per file, every one must pass", func(t *testing.T) {
		patch := "*** Begin Patch\n*** Add File: notes/a.txt\n+hello\n*** Add File: permissions.json\n+{}\n*** End Patch\n"
		decided := ap.decideWhenPending(t, "permissions.json", "not the permissions", 30*time.Second)
		// Codex offers its freeform apply_patch tool only to the models its
		// catalog knows (fetched online); a model may also run it through
		// exec_command, which Codex intercepts: the hook sees either.
		model, out := codexRun(t, ap, codex, home, execCommand("apply_patch <<'EOF'\n"+patch+"EOF\n"))
		<-decided
		a, p := ap.action("notes/a.txt"), ap.action("permissions.json")
		t.Logf("apply_patch: notes/a.txt %v, permissions.json %v; the model got %q", a["status"], p["status"], codexOutput(model, 1))
		if a == nil || p == nil || a["type"] != "write_file" || p["type"] != "write_file" || p["status"] != "denied" {
			t.Fatalf("apply_patch was not split into writes: %v %v\n%s", a, p, out)
		}
		if ap.exists("notes/a.txt") {
			t.Fatal("a patch with a denied file was applied")
		}
	})

	// The table in docs/hooks.md ("When the hook is missing or killed")
	// says what Codex does with the hook brabo install writes: a killed or
	// missing hook blocks the command, and the model reads why. A Codex or
	// an install that changes this fails here.
	t.Run("the hook killed mid-wait blocks the command", func(t *testing.T) {
		killed := ap.killHookWhenPending(t, "mkdir codex-killed", 30*time.Second)
		model, out := codexRun(t, ap, codex, home, execCommand("mkdir codex-killed"))
		if !<-killed {
			t.Fatalf("no hook to kill\n%s", out)
		}
		got := codexOutput(model, 1)
		t.Logf("Codex with its hook killed mid-wait: ran=%v, the model got %q", ap.exists("codex-killed"), got)
		if ap.exists("codex-killed") {
			t.Error("Codex ran a command whose hook was killed: the table in docs/hooks.md says it is blocked")
		}
		if !strings.Contains(got, "brabo: the hook ended without an answer (exit 137), so this call is denied") || strings.Contains(got, "--config") {
			t.Errorf("the model got %q, want brabo's one sentence and no hook command line", got)
		}
	})

	t.Run("the hook binary missing blocks the command", func(t *testing.T) {
		hook := filepath.Join(filepath.Dir(braboBin), "brabo-hook")
		if err := os.Rename(hook, hook+".away"); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(hook+".away", hook)
		model, _ := codexRun(t, ap, codex, home, execCommand("mkdir codex-nohook"))
		got := codexOutput(model, 1)
		t.Logf("Codex with its hook missing: ran=%v, the model got %q", ap.exists("codex-nohook"), got)
		if ap.exists("codex-nohook") {
			t.Error("Codex ran a command whose hook is missing: the table in docs/hooks.md says it is blocked")
		}
		if !strings.Contains(got, "brabo: the hook ended without an answer (exit 127), so this call is denied") {
			t.Errorf("the model got %q", got)
		}
	})

	t.Run("a killed brabo serve makes the hook deny", func(t *testing.T) {
		ap.srv.cmd.Process.Kill()
		ap.srv.cmd.Wait()
		model, out := codexRun(t, ap, codex, home, execCommand("echo should-not-run > killed.txt"))
		if got := codexOutput(model, 1); !strings.Contains(got, "cannot be reached") || ap.exists("killed.txt") {
			t.Fatalf("the model got %q\n%s", got, out)
		}
	})

	t.Run("uninstall removes brabo's blocks and keeps the rest", func(t *testing.T) {
		// brabo is stopped: --keep-agent removes the files without revoking
		// the hook agent's token there.
		cmd := []string{"install", "codex", "--uninstall", "--keep-agent", "--project", ap.project, "--root", ap.root}
		if r := runBraboEnv(t, ap.root, ap.env("CODEX_HOME="+home), cmd...); r.code != 0 {
			t.Fatalf("uninstall: %s", r)
		}
		user, _ := os.ReadFile(filepath.Join(home, "config.toml"))
		proj, _ := os.ReadFile(filepath.Join(ap.root, ".codex", "config.toml"))
		if strings.Contains(string(user)+string(proj), "brabo") || !strings.Contains(string(user), `model_provider = "fake"`) {
			t.Fatalf("after uninstall:\n%s\n---\n%s", user, proj)
		}
	})
}
