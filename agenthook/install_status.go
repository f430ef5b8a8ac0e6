package agenthook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
)

// InstallStatus is what `brabo install --status` says of one agent CLI in
// one scope: whether brabo's hook is installed in the agent's settings,
// whether what the hook needs is on disk, and whether it reaches brabo.
type InstallStatus struct {
	Agent string `json:"agent"` // claude|codex|gemini
	Scope string `json:"scope"` // project|user
	// Settings is the agent's settings file read.
	Settings string `json:"settings"`
	// Installed: the settings run brabo's hook before each tool call.
	Installed bool `json:"installed"`
	// Program and Config are what the hook's command names.
	Program string `json:"program"`
	Config  string `json:"config"`
	// OnDisk: the program is an executable file and the configuration is
	// readable and guards the folder.
	OnDisk bool `json:"onDisk"`
	// Reaches: brabo answered the configuration's token as a hook agent's.
	Reaches bool `json:"reaches"`
	// Detail says what is wrong, or who the hook is in brabo.
	Detail string `json:"detail"`
	// AgentSandbox: the agent's own command sandbox is on in the settings
	// (brabo install --agent-sandbox).
	AgentSandbox bool `json:"agentSandbox"`
}

// OK reports whether the hook is installed and works, or is not installed
// at all (nothing to fix).
func (s InstallStatus) OK() bool { return !s.Installed || s.OnDisk && s.Reaches }

// Status checks, for each agent (all three when agent is ""), the project
// installation in o.Root and the user's installation. Only o.Root, o.Home
// and o.Agent of the options are read.
func Status(ctx context.Context, o InstallOptions) []InstallStatus {
	agents := Agents
	if o.Agent != "" {
		agents = []string{o.Agent}
	}
	var out []InstallStatus
	for _, agent := range agents {
		for _, user := range []bool{false, true} {
			p := o
			p.Agent, p.User = agent, user
			if p.Home == "" {
				p.Home, _ = os.UserHomeDir()
			}
			if abs, err := filepath.Abs(p.Root); err == nil {
				p.Root = abs
			}
			out = append(out, status(ctx, p))
		}
	}
	return out
}

func status(ctx context.Context, o InstallOptions) InstallStatus {
	s := InstallStatus{Agent: o.Agent, Scope: map[bool]string{false: "project", true: "user"}[o.User], AgentSandbox: agentSandboxStatus(o)}
	var command string
	switch o.Agent {
	case "claude", "gemini":
		event := map[string]string{"claude": "PreToolUse", "gemini": "BeforeTool"}[o.Agent]
		s.Settings = claudeSettings(o)
		if o.Agent == "gemini" {
			s.Settings = geminiSettings(o)
		}
		settings, err := readJSONFile(s.Settings)
		if err != nil {
			s.Detail = err.Error()
			return s
		}
		command = jsonHookCommand(settings, o.Agent, event)
	default:
		hooks, user := codexFiles(o)
		s.Settings = hooks
		command = codexHookCommand(hooks)
		if command != "" {
			if n := strings.Count(blockOf(user), "trusted_hash"); n < 3 {
				s.Installed = true
				s.Detail = fmt.Sprintf("Codex trusts %d of brabo's 3 hooks (%s): run brabo install codex again", n, user)
				return s
			}
		}
	}
	if command == "" {
		return s
	}
	s.Installed = true
	words := shellSplit(strings.TrimPrefix(command, codexFailClosedPrefix))
	if len(words) > 0 {
		s.Program = words[0]
	}
	for i, w := range words {
		if w == "--config" && i+1 < len(words) {
			s.Config = words[i+1]
		}
	}
	if fi, err := os.Stat(s.Program); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		s.Detail = fmt.Sprintf("the hook %s is not an executable file", s.Program)
		return s
	}
	cfg, err := LoadConfig(s.Config)
	if err != nil {
		s.Detail = err.Error()
		return s
	}
	proj, err := cfg.project(o.Root)
	if err != nil && !o.User {
		s.Detail = err.Error()
		return s
	}
	s.OnDisk = true
	if proj == nil {
		s.Reaches = true
		s.Detail = fmt.Sprintf("%s is in none of the %d projects it guards", o.Root, len(cfg.Projects))
		return s
	}
	me, err := newClient(cfg.Server, proj.Token).Me(ctx)
	switch {
	case client.StatusOf(err) == http.StatusUnauthorized:
		s.Detail = fmt.Sprintf("brabo at %s refuses the hook's token (revoked or rotated): run brabo install %s again", cfg.Server, o.Agent)
	case err != nil:
		s.Detail = err.Error()
	case me.Agent == nil || me.Agent.Kind != brabo.AgentKindHook:
		s.Detail = "the hook's token is not a hook agent's"
	default:
		s.Reaches = true
		s.Detail = fmt.Sprintf("reaches brabo at %s as the hook agent %q (%s) of project %s", cfg.Server, me.Agent.Name, me.Agent.ID, proj.ID)
	}
	return s
}

// WriteStatus prints the statuses, one line each, and returns whether all
// are OK.
func WriteStatus(w io.Writer, list []InstallStatus) bool {
	ok := true
	for _, s := range list {
		ok = ok && s.OK()
		yes := map[bool]string{true: "yes", false: "no"}
		sb := map[bool]string{true: "; agent's own sandbox: on", false: ""}[s.AgentSandbox]
		if !s.Installed {
			fmt.Fprintf(w, "%-6s %-7s installed: no  (%s)%s%s\n", s.Agent, s.Scope, s.Settings, map[bool]string{true: "", false: ": " + s.Detail}[s.Detail == ""], sb)
			continue
		}
		fmt.Fprintf(w, "%-6s %-7s installed: yes (%s); on disk: %s; reaches brabo: %s: %s%s\n", s.Agent, s.Scope, s.Settings,
			yes[s.OnDisk], yes[s.Reaches], s.Detail, sb)
	}
	return ok
}

// jsonHookCommand is the command of brabo's hook for event in Claude
// Code's or Gemini CLI's settings, "" when there is none.
func jsonHookCommand(settings map[string]any, agent, event string) string {
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		list, _ := gm["hooks"].([]any)
		for _, h := range list {
			hm, _ := h.(map[string]any)
			if c, _ := hm["command"].(string); isOurs(c, agent) {
				return c
			}
		}
	}
	return ""
}

// blockOf is brabo's block of a Codex config.toml, "" when there is none.
func blockOf(path string) string {
	b, _ := os.ReadFile(path)
	text := string(b)
	i := strings.Index(text, codexBegin)
	if i < 0 {
		return ""
	}
	j := strings.Index(text[i:], codexEnd)
	if j < 0 {
		return ""
	}
	return text[i : i+j]
}

// codexHookCommand is the command of brabo's PreToolUse hook in brabo's
// block of a Codex config.toml, "" when there is none.
func codexHookCommand(path string) string {
	in := false
	for _, line := range strings.Split(blockOf(path), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[[hooks.") {
			in = strings.HasPrefix(line, "[[hooks.PreToolUse")
		}
		if v, ok := strings.CutPrefix(line, "command = "); ok && in {
			if c, err := strconv.Unquote(v); err == nil && isOurs(c, "codex") {
				return c
			}
		}
	}
	return ""
}

// shellSplit splits a command shellJoin wrote into its words.
func shellSplit(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
