// Package agenthook makes brabo the approver of the agents people already
// run: Claude Code, Codex CLI and Gemini CLI call `brabo hook <agent>
// <event>` before (and after) each tool call; the hook maps the tool to a
// brabo action, proposes it as an action the agent runs itself (execution
// external), waits for the decision, and answers in the agent's own
// format. Install writes each agent's hook configuration.
//
// The package is the edge to the agents' hook protocols: it imports the
// root package, policy (a read inside the project folder is decided here,
// with the permissions brabo decides with, asked of the server, rather
// than proposed) and the standard library, nothing else, so that the slim
// brabo-hook binary starts fast (cmd/brabo-hook).
//
// The hook fails closed wherever the agent lets it: every error, timeout,
// unreachable server or unknown tool is an explicit deny with a reason the
// agent's model reads.
package agenthook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Config is what a hook reads at each call: where brabo is, and the
// projects it guards with their hook tokens. Install writes it, 0600, in
// a folder outside every project (ConfigDir), which the policy's
// protected-path table makes read-protected for the agents' commands.
type Config struct {
	// Server is brabo's address, http://127.0.0.1:8080.
	Server string `json:"server"`
	// Agent is claude, codex or gemini.
	Agent string `json:"agent"`
	// WaitSeconds is how long the hook waits for a human: shorter than the
	// timeout the installer gave the agent's hook, so that the hook, not
	// the agent, decides what a timeout means (a deny).
	WaitSeconds int `json:"waitSeconds"`
	// PassUnknownFolders is set by a user-level install: a session in a
	// folder that is none of Projects is left to the agent's own
	// permissions, since the hook guards the brabo projects only. A
	// project-level install denies there instead.
	PassUnknownFolders bool `json:"passUnknownFolders,omitempty"`
	// Projects are the guarded project folders with their hook tokens.
	Projects []ProjectConfig `json:"projects"`
	// AgentSandbox: brabo install --agent-sandbox turned the agent's own
	// sandbox on in its settings; --uninstall turns it off again (and
	// leaves a sandbox the user turned on alone).
	AgentSandbox bool `json:"agentSandbox,omitempty"`
}

// ProjectConfig is one guarded project.
type ProjectConfig struct {
	ID    string `json:"id"`
	Root  string `json:"root"`
	Token string `json:"token"`
	// AgentID is the hook agent the token is of (brabo install re-uses it
	// and revokes it on --uninstall).
	AgentID string `json:"agentId,omitempty"`
}

// ConfigDir is where install writes the hooks' configurations (with their
// tokens): $XDG_CONFIG_HOME/brabo/hooks, ~/.config/brabo/hooks by default.
func ConfigDir() (string, error) {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home folder for the hook's token: %w", err)
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "brabo", "hooks"), nil
}

// LoadConfig reads a hook configuration and checks it is whole.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the hook's configuration: %w", err)
	}
	c := &Config{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("the hook's configuration %s is not valid JSON: %w", path, err)
	}
	if c.Server == "" || len(c.Projects) == 0 {
		return nil, fmt.Errorf("the hook's configuration %s names no server or no project (run brabo install again)", path)
	}
	for _, p := range c.Projects {
		if p.ID == "" || p.Token == "" || !filepath.IsAbs(p.Root) {
			return nil, fmt.Errorf("the hook's configuration %s has a project without an id, a token or an absolute folder", path)
		}
	}
	return c, nil
}

// errUnknownFolder is a session in a folder no guarded project holds.
var errUnknownFolder = errors.New("not a brabo project")

// project returns the guarded project whose folder holds dir, the deepest
// one when they nest.
func (c *Config) project(dir string) (*ProjectConfig, error) {
	dir = filepath.Clean(dir)
	var best *ProjectConfig
	for i := range c.Projects {
		p := &c.Projects[i]
		root := filepath.Clean(p.Root)
		if dir == root || strings.HasPrefix(dir, root+string(filepath.Separator)) {
			if best == nil || len(root) > len(best.Root) {
				best = p
			}
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: the folder %s is in none of the projects this hook guards", errUnknownFolder, dir)
	}
	return best, nil
}

// writeConfig writes c to path, 0600, in a 0700 folder, atomically.
func writeConfig(path string, c *Config) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'), 0o600)
}

// writeAtomic replaces path with data through a temporary file in the same
// folder, so a reader never sees half a file.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
