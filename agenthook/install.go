package agenthook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// InstallOptions is what `brabo install` was asked.
type InstallOptions struct {
	Agent string // claude, codex or gemini
	// User installs in the user's settings (every session of the user),
	// instead of the project's.
	User      bool
	Uninstall bool
	// Server is brabo's address; Token a maintainer's token (to create the
	// hook agent); ProjectID and Root the brabo project and its folder.
	Server, Token, ProjectID, Root string
	// Name is the hook agent's name in brabo (the agent's name by default).
	Name string
	// HookCommand is the hook's program and leading arguments: the slim
	// brabo-hook binary, or "brabo hook" (absolute paths).
	HookCommand []string
	// Wait is the hook's own wait for a human; the agent's hook timeout is
	// set 30 s longer.
	Wait time.Duration
	// Codex is the codex binary used to read the hook's trust hash
	// (PATH's codex by default).
	Codex string
	// Home is the user's home folder (os.UserHomeDir by default); the
	// agents' homes follow their variables (CLAUDE_CONFIG_DIR, CODEX_HOME,
	// GEMINI_CLI_HOME) as the agents do.
	Home string
	Out  io.Writer
}

// DefaultWait is the hook's wait for a human by default; the agents' hook
// timeouts are 10 minutes (Claude Code's default).
const DefaultWait = defaultWait

// Install writes (or, with Uninstall, removes) the agent's hook
// configuration, the hook's configuration and token, and for Codex the
// hook's trust; it prints each file it wrote. Re-running it replaces what
// it wrote before and keeps everything else.
func Install(ctx context.Context, o InstallOptions) error {
	if _, ok := events[o.Agent]; !ok {
		return fmt.Errorf("unknown agent %q: want claude, codex or gemini", o.Agent)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		o.Home = h
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return err
	}
	o.Root = filepath.Clean(root)
	dir, err := ConfigDir()
	if err != nil {
		return err
	}
	scope := "project"
	if o.User {
		scope = "user"
	}
	cfgPath := filepath.Join(dir, o.Agent+"-"+scope+".json")
	if !o.User {
		cfgPath = filepath.Join(dir, o.Agent+"-"+safeName(o.ProjectID)+".json")
	}
	if o.Uninstall {
		return uninstall(ctx, o, cfgPath)
	}
	if o.ProjectID == "" || o.Server == "" {
		return errors.New("brabo install needs the brabo project (--project-id or BRABO_PROJECT) and server (--server or BRABO_URL)")
	}
	cfg, err := hookConfig(ctx, o, cfgPath)
	if err != nil {
		return err
	}
	if err := writeConfig(cfgPath, cfg); err != nil {
		return fmt.Errorf("writing the hook's configuration: %w", err)
	}
	fmt.Fprintf(o.Out, "wrote %s (the hook's configuration and brabo token, 0600)\n", cfgPath)
	cmd := func(event string) string {
		return shellJoin(append(append([]string{}, o.HookCommand...), o.Agent, event, "--config", cfgPath))
	}
	timeout := o.Wait + 30*time.Second
	switch o.Agent {
	case "claude":
		return installClaude(o, cmd, timeout)
	case "gemini":
		return installGemini(o, cmd, timeout)
	}
	return installCodex(ctx, o, cmd, timeout)
}

// hookConfig reads the configuration there is, keeps a working token for
// the project, or creates the project's hook agent in brabo.
func hookConfig(ctx context.Context, o InstallOptions, path string) (*Config, error) {
	cfg := &Config{}
	if old, err := LoadConfig(path); err == nil {
		cfg = old
	}
	cfg.Server, cfg.Agent, cfg.PassUnknownFolders = o.Server, o.Agent, o.User
	cfg.WaitSeconds = int(o.Wait / time.Second)
	var keep []ProjectConfig
	token := ""
	for _, p := range cfg.Projects {
		if p.ID == o.ProjectID {
			if newClient(o.Server, p.Token).do(ctx, "GET", "/v1/me", nil, nil, 10*time.Second) == nil {
				token = p.Token // still valid: re-running install keeps it
			}
			continue
		}
		keep = append(keep, p)
	}
	if token == "" {
		if o.Token == "" {
			return nil, errors.New("brabo install needs a maintainer's token (--token or BRABO_TOKEN) to create the hook agent")
		}
		name := o.Name
		if name == "" {
			name = o.Agent
		}
		mc := newClient(o.Server, o.Token)
		var out struct {
			Token string `json:"token"`
		}
		err := mc.do(ctx, "POST", "/v1/projects/"+o.ProjectID+"/agents", map[string]any{"name": name, "kind": "hook"}, &out, 15*time.Second)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == 409 {
			name = fmt.Sprintf("%s-%d", name, time.Now().Unix()%100000)
			err = mc.do(ctx, "POST", "/v1/projects/"+o.ProjectID+"/agents", map[string]any{"name": name, "kind": "hook"}, &out, 15*time.Second)
		}
		if err != nil {
			return nil, fmt.Errorf("creating the hook agent in brabo: %w", err)
		}
		token = out.Token
		fmt.Fprintf(o.Out, "created the hook agent %q in brabo project %s\n", name, o.ProjectID)
	}
	cfg.Projects = append(keep, ProjectConfig{ID: o.ProjectID, Root: o.Root, Token: token})
	return cfg, nil
}

// uninstall removes what Install wrote for the agent; the hook agent stays
// in brabo (its actions are history), and its token in the removed file is
// gone with it (revoke it in brabo too).
func uninstall(ctx context.Context, o InstallOptions, cfgPath string) error {
	var err error
	switch o.Agent {
	case "claude":
		err = installClaude(o, nil, 0)
	case "gemini":
		err = installGemini(o, nil, 0)
	default:
		err = installCodex(ctx, o, nil, 0)
	}
	if err != nil {
		return err
	}
	if cfg, lerr := LoadConfig(cfgPath); lerr == nil && o.User && o.ProjectID != "" {
		var keep []ProjectConfig
		for _, p := range cfg.Projects {
			if p.ID != o.ProjectID {
				keep = append(keep, p)
			}
		}
		if len(keep) > 0 {
			cfg.Projects = keep
			return writeConfig(cfgPath, cfg)
		}
	}
	if rerr := os.Remove(cfgPath); rerr == nil {
		fmt.Fprintf(o.Out, "removed %s (the hook's token; the hook agent stays in brabo: revoke its token there)\n", cfgPath)
	}
	return nil
}

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
	path := filepath.Join(o.Root, ".claude", "settings.json")
	if o.User {
		dir := os.Getenv("CLAUDE_CONFIG_DIR")
		if dir == "" {
			dir = filepath.Join(o.Home, ".claude")
		}
		path = filepath.Join(dir, "settings.json")
	}
	settings, err := readJSONFile(path)
	if err != nil {
		return err
	}
	for event, name := range map[string]string{"PreToolUse": "pre-tool-use", "PermissionRequest": "permission-request",
		"PostToolUse": "post-tool-use", "PostToolUseFailure": "post-tool-use-failure"} {
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
		fmt.Fprintf(o.Out, "wrote %s: PreToolUse, PermissionRequest, PostToolUse and PostToolUseFailure run brabo's hook (timeout %s); CLAUDE_CODE_SHELL=%s\n", path, timeout, bash)
	}
	return nil
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
// hide them: the BeforeTool hook is the gate.
const brabosGeminiPolicy = `# Written by brabo install gemini; brabo install gemini --uninstall removes it.
# brabo's BeforeTool hook is the gate for these tools: this rule lets them
# run without Gemini CLI's own prompt (headless runs hide them otherwise).
# If the hook is missing or broken, these tools run unprompted.
[[rule]]
toolName = ["run_shell_command", "write_file", "replace"]
decision = "allow"
priority = 900
`

// installGemini writes (cmd nil: removes) Gemini CLI's BeforeTool and
// AfterTool hooks and brabo's policy rule.
func installGemini(o InstallOptions, cmd func(string) string, timeout time.Duration) error {
	home := geminiHome(o)
	path := filepath.Join(o.Root, ".gemini", "settings.json")
	if o.User {
		path = filepath.Join(home, ".gemini", "settings.json")
	}
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
	policy := filepath.Join(home, ".gemini", "policies", "brabo.toml")
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
	fmt.Fprintf(o.Out, "wrote %s: run_shell_command, write_file and replace run without Gemini's prompt; brabo's hook is their gate (a broken hook lets them run unprompted)\n", policy)
	return nil
}
