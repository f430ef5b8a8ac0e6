package policy

import (
	"path"

	"github.com/brabo-dev/brabo"
)

// Situation is everything a decision reads besides the action itself: who
// the proposal acts for, the rules in force, the project's state and where
// a command would run. The five places that ask "what would brabo decide"
// (a proposal, a pending card's current reason, the web check page, the
// agents' hook and brabo check) each fill one Situation from what they
// know and build the Input with NewInput, so that none of them maps an
// action onto the Input its own way and forgets a fact.
type Situation struct {
	// Role is the principal's role: the human the proposal acts for.
	Role brabo.Role
	// Autonomy is the proposing agent's agent_autonomy for the type.
	Autonomy Autonomy
	// Rules is the permissions.json brabo decides with (nil: the empty file).
	Rules *Rules
	// AgentAllow is the proposing agent's own allow patterns, compiled
	// (AgentRules); nil is none.
	AgentAllow *Rules
	// Scope is the project folder; a Root of "" asks a human for anything
	// that needs it.
	Scope Scope
	// ContainerRunning is true when the action gets the container floor.
	ContainerRunning bool
	// ExtraProtected are the project's protected branches beyond the
	// built-in ones (a git_merge's merge cap).
	ExtraProtected []string
	// Protect is the home folder and brabo's own paths, for the protected
	// table.
	Protect Protect
	// McpTools are the MCP tools a maintainer mapped (brabo.Project.McpTools).
	McpTools []string
	// Resolve, when set, says what each program name of a terminal command
	// resolves to where it runs: cwd is the absolute folder the command
	// starts in. nil leaves Input.Programs nil (a program named by its path
	// then matches an allow pattern only as written).
	Resolve func(names []string, cwd string) map[string]Program
}

// NewInput is the one builder of Decide's Input: the action's type and
// payload mapped onto the fields Decide reads, with the situation it is
// decided in. Every field Decide reads is set here, so a caller that knows
// a fact cannot forget to pass it, and two callers with the same facts
// build the same Input.
func NewInput(t brabo.ActionType, p brabo.Payload, s Situation) Input {
	in := Input{
		Type: t, Command: p.Command, Cwd: p.Cwd, Path: p.Path, Tool: p.Tool, TargetBranch: p.TargetBranch,
		Role: s.Role, Autonomy: s.Autonomy, Rules: s.Rules, AgentAllow: s.AgentAllow, Scope: s.Scope,
		ContainerRunning: s.ContainerRunning, ExtraProtected: s.ExtraProtected, Protect: s.Protect,
		McpMapped: McpToolMapped(s.McpTools, p.Tool),
	}
	if t == brabo.Terminal && s.Resolve != nil && s.Scope.Root != "" {
		in.Programs = s.Resolve(ProgramNames(p.Command), StartDir(s.Scope.Root, p.Cwd))
	}
	return in
}

// StartDir is the absolute folder a terminal command starts in: cwd made
// absolute from the scope root, the root itself when cwd is empty.
func StartDir(root, cwd string) string {
	switch {
	case cwd == "":
		return root
	case !path.IsAbs(cwd):
		return path.Join(root, cwd)
	}
	return cwd
}

// AgentRules compiles an agent's own allow patterns (brabo.AgentPattern).
// A pattern that no longer compiles (the grammar grew stricter since it
// was recorded) is left out and returned in bad, so the caller can say so;
// the others still apply. nil for no patterns.
func AgentRules(patterns []string) (r *Rules, bad []string) {
	if len(patterns) == 0 {
		return nil, nil
	}
	const name = "agent patterns"
	if r, err := NewRules(name, patterns, nil, nil); err == nil {
		return r, nil
	}
	var good []string
	for _, p := range patterns {
		if _, err := NewRules(name, []string{p}, nil, nil); err != nil {
			bad = append(bad, p)
		} else {
			good = append(good, p)
		}
	}
	r, _ = NewRules(name, good, nil, nil)
	return r, bad
}
