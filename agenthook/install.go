package agenthook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// InstallOptions is what `brabo install` was asked.
type InstallOptions struct {
	Agent string // claude, codex or gemini
	// User installs in the user's settings (every session of the user),
	// instead of the project's.
	User      bool
	Uninstall bool
	// KeepAgent, with Uninstall, removes the files only and leaves the
	// hook agent's token live in brabo (when brabo cannot be reached).
	KeepAgent bool
	// Server is brabo's address; Token a maintainer's token (to create the
	// hook agent, rotate its token, revoke it); ProjectID and Root the
	// brabo project and its folder.
	Server, Token, ProjectID, Root string
	// Name is the hook agent's name in brabo: by default the agent's
	// (claude), with -user for a --user installation (claude-user).
	Name string
	// HookCommand is the hook's program and leading arguments: the slim
	// brabo-hook binary, or "brabo hook" (absolute paths).
	HookCommand []string
	// Wait is the hook's own wait for a human; the agent's hook timeout is
	// set 30 s longer.
	Wait time.Duration
	// AgentSandbox also turns on the agent's own command sandbox
	// (agentsandbox.go): commands the agent runs itself are outside
	// brabo's sandbox. A re-install without it leaves it as it is;
	// --uninstall turns it off.
	AgentSandbox bool
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
// hook's trust; it prints each file it wrote.
//
// It is idempotent and atomic: there is one hook agent per (project,
// agent, scope), which a re-install re-uses with a new token; the agent's
// hooks are written only once the hook agent and its configuration
// exist, and a failure puts back every file as it was, so the previous
// installation keeps working. Installs run one at a time (a lock in
// ConfigDir), so concurrent ones are safe.
func Install(ctx context.Context, o InstallOptions) error {
	o, cfgPath, err := o.resolve()
	if err != nil {
		return err
	}
	unlock, err := lockInstalls(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if o.Uninstall {
		return uninstall(ctx, o, cfgPath)
	}
	if o.ProjectID == "" || o.Server == "" {
		return errors.New("brabo install needs the brabo project (--project or BRABO_PROJECT) and server (--url or BRABO_URL)")
	}
	if o.Token == "" {
		return errors.New("brabo install needs a maintainer's token (BRABO_TOKEN or --token-file): it creates the hook agent, or gives it a new token")
	}
	// The files are read before brabo is asked anything: a settings file
	// brabo cannot rewrite fails here, with nothing changed anywhere.
	if err := preflight(o); err != nil {
		return err
	}
	snap, err := takeSnapshot(append(o.files(), cfgPath))
	if err != nil {
		return err
	}
	old, _ := LoadConfig(cfgPath)
	ag, err := hookAgent(ctx, o)
	if err != nil {
		return err
	}
	undo := func(cause error) error {
		rerr := snap.restore()
		if rerr == nil && !ag.created && old != nil {
			// The old configuration's token is revoked now: it is put back
			// with the new one, which keeps the previous hooks (they name
			// the same file) working.
			rerr = writeConfig(cfgPath, withToken(old, o.ProjectID, ag))
		}
		if rerr != nil {
			cause = fmt.Errorf("%w; and putting the files back failed: %v", cause, rerr)
		}
		if ag.created {
			// Nothing uses the new agent's token: revoke it. The agent stays,
			// and the next install re-uses it.
			ag.revoke(ctx, o)
		}
		return cause
	}
	cfg := newConfig(old, o, ag)
	if err := writeConfig(cfgPath, cfg); err != nil {
		return undo(fmt.Errorf("writing the hook's configuration: %w", err))
	}
	fmt.Fprintf(o.Out, "wrote %s (the hook's configuration and brabo token, 0600)\n", cfgPath)
	cmd := func(event string) string {
		return shellJoin(append(append([]string{}, o.HookCommand...), o.Agent, event, "--config", cfgPath))
	}
	timeout := o.Wait + 30*time.Second
	switch o.Agent {
	case "claude":
		err = installClaude(o, cmd, timeout)
	case "gemini":
		err = installGemini(o, cmd, timeout)
	default:
		err = installCodex(ctx, o, cmd, timeout)
	}
	if err == nil && o.AgentSandbox {
		err = setAgentSandbox(o, true)
	}
	if err != nil {
		return undo(err)
	}
	retireOld(ctx, o, old, ag)
	return nil
}

// resolve fills the options' defaults and returns the hook configuration's
// path.
func (o InstallOptions) resolve() (InstallOptions, string, error) {
	if _, ok := events[o.Agent]; !ok {
		return o, "", fmt.Errorf("unknown agent %q: want claude, codex or gemini", o.Agent)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return o, "", err
		}
		o.Home = h
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.Name == "" {
		o.Name = o.Agent
		if o.User {
			o.Name += "-user"
		}
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return o, "", err
	}
	o.Root = filepath.Clean(root)
	dir, err := ConfigDir()
	if err != nil {
		return o, "", err
	}
	if o.User {
		return o, filepath.Join(dir, o.Agent+"-user.json"), nil
	}
	return o, filepath.Join(dir, o.Agent+"-"+safeName(o.ProjectID)+".json"), nil
}

// files are the agent's files Install writes.
func (o InstallOptions) files() []string {
	switch o.Agent {
	case "claude":
		return []string{claudeSettings(o)}
	case "gemini":
		return []string{geminiSettings(o), geminiPolicy(o)}
	}
	hooks, user := codexFiles(o)
	return []string{hooks, user}
}

// preflight reads what Install will rewrite, and finds codex, so that a
// file it cannot rewrite fails before anything changed.
func preflight(o InstallOptions) error {
	switch o.Agent {
	case "claude":
		_, err := readJSONFile(claudeSettings(o))
		return err
	case "gemini":
		_, err := readJSONFile(geminiSettings(o))
		return err
	}
	hooks, user := codexFiles(o)
	for _, f := range []string{hooks, user} {
		if err := checkBlock(f); err != nil {
			return err
		}
	}
	if o.AgentSandbox {
		if err := checkCodexSandbox(hooks); err != nil {
			return err
		}
	}
	if _, err := codexBinary(o); err != nil {
		return fmt.Errorf("recording the hooks' trust (Codex skips an untrusted hook): %w; run brabo install codex --codex <path of codex>", err)
	}
	return nil
}

// newConfig is the hook configuration with the project's new token,
// keeping the other projects of a --user configuration.
func newConfig(old *Config, o InstallOptions, ag *installedAgent) *Config {
	cfg := &Config{}
	if old != nil {
		c := *old
		cfg = &c
	}
	cfg.Server, cfg.Agent, cfg.PassUnknownFolders = o.Server, o.Agent, o.User
	cfg.WaitSeconds = int(o.Wait / time.Second)
	cfg.AgentSandbox = cfg.AgentSandbox || o.AgentSandbox
	var keep []ProjectConfig
	for _, p := range cfg.Projects {
		if p.ID != o.ProjectID {
			keep = append(keep, p)
		}
	}
	cfg.Projects = append(keep, ProjectConfig{ID: o.ProjectID, Root: o.Root, Token: ag.token, AgentID: ag.id})
	return cfg
}

// withToken is a copy of cfg whose entry for the project holds the
// agent's token.
func withToken(cfg *Config, project string, ag *installedAgent) *Config {
	c := *cfg
	c.Projects = append([]ProjectConfig(nil), cfg.Projects...)
	for i := range c.Projects {
		if c.Projects[i].ID == project {
			c.Projects[i].Token, c.Projects[i].AgentID = ag.token, ag.id
		}
	}
	return &c
}

// uninstall removes what Install wrote for the agent and revokes the hook
// agent's token in brabo (the agent stays, with its actions: they are
// history; a later install re-uses it). The token is revoked first: when
// brabo cannot be reached nothing is removed, unless KeepAgent.
func uninstall(ctx context.Context, o InstallOptions, cfgPath string) error {
	cfg, _ := LoadConfig(cfgPath)
	var entry *ProjectConfig
	if cfg != nil {
		for i := range cfg.Projects {
			if cfg.Projects[i].ID == o.ProjectID || (!o.User && o.ProjectID == "") {
				entry = &cfg.Projects[i]
				break
			}
		}
	}
	if entry != nil && !o.KeepAgent {
		if o.Token == "" {
			return fmt.Errorf("brabo install --uninstall needs a maintainer's token (BRABO_TOKEN or --token-file) to revoke the hook agent's token; nothing was removed (--keep-agent removes the files and leaves the token live)")
		}
		ag := &installedAgent{id: entry.AgentID, token: entry.Token}
		if err := ag.revoke(ctx, InstallOptions{Server: firstOf(o.Server, cfg.Server), Token: o.Token, ProjectID: entry.ID}); err != nil {
			return fmt.Errorf("revoking the hook agent's token: %w; nothing was removed (--keep-agent removes the files and leaves the token live)", err)
		}
		fmt.Fprintf(o.Out, "revoked the token of the hook agent %s in brabo (the agent stays, with its actions)\n", ag.id)
	}
	var err error
	switch o.Agent {
	case "claude":
		err = installClaude(o, nil, 0)
	case "gemini":
		err = installGemini(o, nil, 0)
	default:
		err = installCodex(ctx, o, nil, 0)
	}
	if err == nil && (o.Agent == "codex" || cfg != nil && cfg.AgentSandbox) {
		// Codex's block is brabo's by its marker lines.
		err = setAgentSandbox(o, false)
	}
	if err != nil {
		return err
	}
	if cfg != nil && o.User && o.ProjectID != "" {
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
		fmt.Fprintf(o.Out, "removed %s (the hook's configuration and token)\n", cfgPath)
	}
	return nil
}
