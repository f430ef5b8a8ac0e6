package agenthook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// brabo install --agent-sandbox: the agent's own command sandbox, on top
// of brabo's hook. The commands these agents run themselves run in their
// own processes, outside brabo's sandbox; the agent's sandbox keeps them
// inside the project (README, "What brabo protects"). What each pinned
// version offers, and what the tests saw (docs/hooks.md, "The agent's own
// sandbox"):
//
//   - Claude Code 2.1.332: settings.json's sandbox (bubblewrap on Linux):
//     enabled, failIfUnavailable (no start without it) and
//     allowUnsandboxedCommands false (the model cannot ask to leave it).
//   - Codex 0.171.0: sandbox_mode = "workspace-write", with /tmp and
//     $TMPDIR left out of its writable folders.
//   - Gemini CLI 0.61.0: tools.sandbox, which on Linux runs the whole CLI
//     in a docker or podman container of an image it pulls.

// The keys brabo writes in Claude Code's settings' sandbox object.
var claudeSandbox = map[string]any{"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false}

// setClaudeSandbox writes (on) or removes brabo's keys of settings'
// sandbox object; a key the user set to another value is left alone.
func setClaudeSandbox(settings map[string]any, on bool) {
	sb, _ := settings["sandbox"].(map[string]any)
	if sb == nil {
		if !on {
			return
		}
		sb = map[string]any{}
	}
	for k, v := range claudeSandbox {
		if on {
			sb[k] = v
		} else if cur, ok := sb[k]; ok && cur == v {
			delete(sb, k)
		}
	}
	if len(sb) == 0 {
		delete(settings, "sandbox")
	} else {
		settings["sandbox"] = sb
	}
}

// claudeSandboxOn reports whether settings hold brabo's sandbox keys.
func claudeSandboxOn(settings map[string]any) bool {
	sb, _ := settings["sandbox"].(map[string]any)
	for k, v := range claudeSandbox {
		if sb[k] != v {
			return false
		}
	}
	return sb != nil
}

// geminiSandboxOn reports whether Gemini CLI's settings turn its sandbox
// on (tools.sandbox true, a command, or an object enabled).
func geminiSandboxOn(settings map[string]any) bool {
	tools, _ := settings["tools"].(map[string]any)
	switch v := tools["sandbox"].(type) {
	case bool:
		return v
	case string:
		return v != "" && v != "false" && v != "0"
	case map[string]any:
		return v["enabled"] == true
	}
	return false
}

// setGeminiSandbox writes (on) or removes tools.sandbox = true.
func setGeminiSandbox(settings map[string]any, on bool) {
	tools, _ := settings["tools"].(map[string]any)
	if on {
		if tools == nil {
			tools = map[string]any{}
		}
		tools["sandbox"] = true
		settings["tools"] = tools
		return
	}
	if tools == nil || tools["sandbox"] != true {
		return
	}
	delete(tools, "sandbox")
	if len(tools) == 0 {
		delete(settings, "tools")
	}
}

// Codex's sandbox settings are top-level keys, which TOML wants before the
// first table: brabo writes them in a block of their own at the top of
// the file its hooks are in.
const (
	codexTopBegin = "# >>> brabo install codex --agent-sandbox: written by brabo, removed by --uninstall >>>"
	codexTopEnd   = "# <<< brabo install codex --agent-sandbox <<<"
	codexSandbox  = "sandbox_mode = \"workspace-write\"\n" +
		"sandbox_workspace_write.exclude_slash_tmp = true\n" +
		"sandbox_workspace_write.exclude_tmpdir_env_var = true\n"
)

// withoutBlock is text without the block between begin and end.
func withoutBlock(text, begin, end string) string {
	if i := strings.Index(text, begin); i >= 0 {
		if j := strings.Index(text[i:], end); j >= 0 {
			k := i + j + len(end)
			if k < len(text) && text[k] == '\n' {
				k++
			}
			return text[:i] + text[k:]
		}
	}
	return text
}

// checkCodexSandbox refuses a config.toml whose own lines set Codex's
// sandbox already: a second sandbox_mode would make the file invalid.
func checkCodexSandbox(path string) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	text := withoutBlock(withoutBlock(string(b), codexTopBegin, codexTopEnd), codexBegin, codexEnd)
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "sandbox_mode") || strings.Contains(l, "sandbox_workspace_write") {
			return fmt.Errorf("%s sets Codex's sandbox itself (%q): remove that line for --agent-sandbox, or install without it", path, l)
		}
	}
	return nil
}

// setCodexSandbox writes (on) or removes brabo's top block.
func setCodexSandbox(path string, on bool) (changed bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return false, err
	}
	text := withoutBlock(string(b), codexTopBegin, codexTopEnd)
	if on {
		text = codexTopBegin + "\n" + codexSandbox + codexTopEnd + "\n" + text
	}
	if text == string(b) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return true, writeAtomic(path, []byte(text), mode)
}

// setAgentSandbox turns the agent's own sandbox on or off in the files
// Install writes, and says what it did.
func setAgentSandbox(o InstallOptions, on bool) error {
	switch o.Agent {
	case "claude", "gemini":
		path := claudeSettings(o)
		set, isOn := setClaudeSandbox, claudeSandboxOn
		if o.Agent == "gemini" {
			path, set, isOn = geminiSettings(o), setGeminiSandbox, geminiSandboxOn
		}
		settings, err := readJSONFile(path)
		if err != nil {
			return err
		}
		was := isOn(settings)
		set(settings, on)
		if was == isOn(settings) {
			return nil
		}
		if _, err := os.Stat(path); os.IsNotExist(err) && !on {
			return nil
		}
		if err := writeJSONFile(path, settings); err != nil {
			return err
		}
	default:
		hooks, _ := codexFiles(o)
		changed, err := setCodexSandbox(hooks, on)
		if err != nil || !changed {
			return err
		}
	}
	if !on {
		fmt.Fprintf(o.Out, "turned %s's own sandbox off (brabo install --agent-sandbox had turned it on)\n", o.Agent)
		return nil
	}
	fmt.Fprintf(o.Out, "turned %s's own sandbox on: %s\n", o.Agent, AgentSandboxes[o.Agent])
	return nil
}

// AgentSandboxes says, per agent, what --agent-sandbox writes and gives.
var AgentSandboxes = map[string]string{
	"claude": `sandbox {"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false}: Claude Code 2.1.332 runs each Bash command in bubblewrap, writing only in the project folder, and does not start without it`,
	"codex":  `sandbox_mode = "workspace-write", without /tmp and $TMPDIR: Codex 0.171.0 runs each command in its sandbox, writing only in the project folder`,
	"gemini": `tools.sandbox = true: Gemini CLI 0.61.0 runs itself in a docker or podman container of the image us-docker.pkg.dev/gemini-code-dev/gemini-cli/sandbox:0.61.0, which it pulls; without docker or podman and that image Gemini CLI does not start, and brabo's hook is not in that container (docs/hooks.md)`,
}

// agentSandboxStatus says whether the agent's own sandbox is on in the
// settings brabo writes.
func agentSandboxStatus(o InstallOptions) bool {
	switch o.Agent {
	case "claude", "gemini":
		path, isOn := claudeSettings(o), claudeSandboxOn
		if o.Agent == "gemini" {
			path, isOn = geminiSettings(o), geminiSandboxOn
		}
		settings, err := readJSONFile(path)
		return err == nil && isOn(settings)
	}
	hooks, _ := codexFiles(o)
	b, _ := os.ReadFile(hooks)
	return strings.Contains(string(b), codexTopBegin)
}
