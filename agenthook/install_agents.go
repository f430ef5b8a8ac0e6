package agenthook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The agents' own settings files: where each agent reads its hooks, and
// how brabo's entries are written there and removed, keeping the rest.

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// shellJoin quotes each word for a POSIX shell, which the agents run a
// hook's command with.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:+@,") == "" {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// isOurs reports whether a hook command is one brabo install wrote for
// agent: its words end "<agent> <event> --config <file>" after brabo hook
// or brabo-hook.
func isOurs(command, agent string) bool {
	return (strings.Contains(command, "brabo-hook ") || strings.Contains(command, " hook "+agent+" ")) &&
		strings.Contains(command, " "+agent+" ") && strings.Contains(command, "--config")
}

// readJSONFile reads a settings file as a JSON object; a missing file is
// an empty one.
func readJSONFile(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if len(strings.TrimSpace(string(b))) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object (fix it, or move it away, and run brabo install again): %w", path, err)
	}
	return m, nil
}

func writeJSONFile(path string, m map[string]any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return writeAtomic(path, append(b, '\n'), mode)
}

// setHooks replaces brabo's entries of settings.hooks[event] with one
// group running command (none when command is ""), keeping the others.
func setHooks(settings map[string]any, agent, event, matcher, command string, timeout any) {
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	groups, _ := hooks[event].([]any)
	var keep []any
	for _, g := range groups {
		gm, ok := g.(map[string]any)
		if !ok {
			keep = append(keep, g)
			continue
		}
		list, _ := gm["hooks"].([]any)
		var rest []any
		for _, h := range list {
			if hm, ok := h.(map[string]any); ok {
				if c, _ := hm["command"].(string); isOurs(c, agent) {
					continue
				}
			}
			rest = append(rest, h)
		}
		if len(rest) > 0 || len(list) == 0 {
			gm["hooks"] = rest
			keep = append(keep, gm)
		}
	}
	if command != "" {
		keep = append(keep, map[string]any{"matcher": matcher,
			"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": timeout}}})
	}
	if len(keep) == 0 {
		delete(hooks, event)
	} else {
		hooks[event] = keep
	}
	if len(hooks) == 0 {
		delete(settings, "hooks")
	} else {
		settings["hooks"] = hooks
	}
}

// installClaude writes (cmd nil: removes) the hooks of Claude Code's
// settings, and pins its shell to bash: brabo's analysis is bash's.
func installClaude(o InstallOptions, cmd func(string) string, timeout time.Duration) error {
	path := claudeSettings(o)
	settings, err := readJSONFile(path)
	if err != nil {
		return err
	}
	for event, name := range map[string]string{"PreToolUse": "pre-tool-use", "PermissionRequest": "permission-request",
		"PostToolUse": "post-tool-use", "PostToolUseFailure": "post-tool-use-failure", "PostToolBatch": "post-tool-batch"} {
		command := ""
		if cmd != nil {
			command = cmd(name)
		}
		setHooks(settings, "claude", event, "*", command, int(timeout/time.Second))
	}
	env, _ := settings["env"].(map[string]any)
	bash, _ := exec.LookPath("bash")
	if cmd != nil && bash != "" {
		if env == nil {
			env = map[string]any{}
		}
		env["CLAUDE_CODE_SHELL"] = bash
		settings["env"] = env
	} else if cmd == nil && env != nil {
		if s, _ := env["CLAUDE_CODE_SHELL"].(string); s != "" && filepath.Base(s) == "bash" {
			delete(env, "CLAUDE_CODE_SHELL")
		}
		if len(env) == 0 {
			delete(settings, "env")
		}
	}
	if err := writeJSONFile(path, settings); err != nil {
		return err
	}
	if cmd == nil {
		fmt.Fprintf(o.Out, "removed brabo's hooks from %s\n", path)
	} else {
		fmt.Fprintf(o.Out, "wrote %s: PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure and PostToolBatch run brabo's hook (timeout %s); CLAUDE_CODE_SHELL=%s\n", path, timeout, bash)
	}
	return nil
}

// claudeSettings is the settings file brabo install claude writes.
func claudeSettings(o InstallOptions) string {
	if !o.User {
		return filepath.Join(o.Root, ".claude", "settings.json")
	}
	dir := os.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(o.Home, ".claude")
	}
	return filepath.Join(dir, "settings.json")
}

// geminiSettings is the settings file brabo install gemini writes.
func geminiSettings(o InstallOptions) string {
	if !o.User {
		return filepath.Join(o.Root, ".gemini", "settings.json")
	}
	return filepath.Join(geminiHome(o), ".gemini", "settings.json")
}

// geminiPolicy is brabo's policy rule for Gemini CLI, the user's.
func geminiPolicy(o InstallOptions) string {
	return filepath.Join(geminiHome(o), ".gemini", "policies", "brabo.toml")
}

// geminiHome is the folder holding Gemini CLI's .gemini of the user.
func geminiHome(o InstallOptions) string {
	if h := os.Getenv("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	return o.Home
}

// brabosGeminiPolicy lets Gemini CLI run the tools brabo's hook gates
// without its own prompt, in headless runs too, where it would otherwise
// hide them: the BeforeTool hook is the gate. Gemini CLI 0.61.0 runs the
// hook before its policy check, but takes a tool its policy denies out of
// the model's tool list, and with no rule a headless run denies every MCP
// tool ("Tool \"mcp_server_tool\" not found"), so the hook never sees one.
// The second rule covers every MCP server's tools: "mcp_*" is Gemini's
// wildcard for them (it matches only a call with a server). Its priority
// is the lowest of the user tier (4.001), so every rule the user wrote
// (priority 2 and up), Gemini's mcp.excluded, tools.exclude and tools.core
// settings (4.24–4.9) and the admin tier still win over it.
const brabosGeminiPolicy = `# Written by brabo install gemini; brabo install gemini --uninstall removes it.
# brabo's BeforeTool hook is the gate for these tools: these rules let them
# run without Gemini CLI's own prompt (headless runs hide them otherwise).
# If the hook is missing or broken, these tools run unprompted. Both rules
# are at the user tier's lowest priority: any rule of yours (priority 2 and
# up), Gemini's mcp and tools settings and admin policies win over them.
[[rule]]
toolName = ["run_shell_command", "write_file", "replace"]
decision = "allow"
priority = 1

# Every MCP server's tools.
[[rule]]
toolName = "mcp_*"
decision = "allow"
priority = 1
`

// installGemini writes (cmd nil: removes) Gemini CLI's BeforeTool and
// AfterTool hooks and brabo's policy rule.
func installGemini(o InstallOptions, cmd func(string) string, timeout time.Duration) error {
	path, policy := geminiSettings(o), geminiPolicy(o)
	settings, err := readJSONFile(path)
	if err != nil {
		return err
	}
	for event, name := range map[string]string{"BeforeTool": "before-tool", "AfterTool": "after-tool"} {
		command := ""
		if cmd != nil {
			command = cmd(name)
		}
		setHooks(settings, "gemini", event, ".*", command, int(timeout/time.Millisecond))
	}
	if err := writeJSONFile(path, settings); err != nil {
		return err
	}
	if cmd == nil {
		fmt.Fprintf(o.Out, "removed brabo's hooks from %s\n", path)
		if os.Remove(policy) == nil {
			fmt.Fprintf(o.Out, "removed %s\n", policy)
		}
		return nil
	}
	fmt.Fprintf(o.Out, "wrote %s: BeforeTool and AfterTool run brabo's hook (timeout %s)\n", path, timeout)
	if err := os.MkdirAll(filepath.Dir(policy), 0o755); err != nil {
		return err
	}
	if err := writeAtomic(policy, []byte(brabosGeminiPolicy), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s: run_shell_command, write_file, replace and MCP tools run without Gemini's prompt; brabo's hook is their gate (a broken hook lets them run unprompted)\n", policy)
	return nil
}
