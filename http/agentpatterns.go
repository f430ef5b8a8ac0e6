package http

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/brabo-dev/brabo"
)

// An agent's own allow patterns (docs/agent-patterns.md): what always-allow
// clicks on a module dev agent's terminal actions recorded. Every member
// reads them; a maintainer removes one, which records autonomy.changed.

// listAgentPatterns is GET …/agents/{agent}/patterns.
func (s *Server) listAgentPatterns(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "reading an agent's patterns")
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	out, err := s.Agents.AgentPatterns(r.Context(), a.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"patterns": nonNil(out)})
	return nil
}

// deleteAgentPattern is DELETE …/agents/{agent}/patterns?pattern=…: the
// pattern, exactly as listed. A pattern the agent does not have is 404.
func (s *Server) deleteAgentPattern(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "removing an agent's pattern")
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	pattern := r.URL.Query().Get("pattern")
	if strings.TrimSpace(pattern) == "" {
		return badRequest("name the pattern to remove: ?pattern=Terminal(…), as listed")
	}
	if err := s.removeAgentPattern(r, p, m, a, pattern, brabo.ViaAPI); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) removeAgentPattern(r *http.Request, p *brabo.Project, m *brabo.Member, a *brabo.Agent, pattern, via string) error {
	ok, err := s.Agents.RemoveAgentPattern(r.Context(), p.ID, m.ID, a.ID, pattern, via)
	if err == nil && !ok {
		return notFound("pattern " + pattern + " of agent " + a.Name)
	}
	return err
}

// webRemovePattern is the agent card's Remove button next to one of the
// agent's patterns: maintainer only, as DELETE …/patterns. It answers with
// the card as it is after.
func (s *Server) webRemovePattern(w http.ResponseWriter, r *http.Request, v *viewer) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	if err := requireRole(role, brabo.Maintainer, "removing an agent's pattern"); err != nil {
		return err
	}
	pattern := r.PostFormValue("pattern")
	if strings.TrimSpace(pattern) == "" {
		return badRequest("no pattern to remove")
	}
	// Removing one that is gone already (a second click) is no error:
	// the card shows what is left.
	return s.updateAgentCard(w, r, p, role, a, func() error {
		_, err := s.Agents.RemoveAgentPattern(r.Context(), p.ID, v.Member.ID, a.ID, pattern, brabo.ViaWeb)
		return err
	})
}

// autonomySentence is what the session log says of autonomy.changed.
func autonomySentence(raw []byte) string {
	var c brabo.AutonomyChange
	_ = json.Unmarshal(raw, &c)
	var parts []string
	switch {
	case c.ActionType != "" && c.Mode == "":
		parts = append(parts, fmt.Sprintf("agent_autonomy %s: %s removed", c.ActionType, c.PreviousMode))
	case c.ActionType != "" && c.PreviousMode == "":
		parts = append(parts, fmt.Sprintf("agent_autonomy %s: %s set", c.ActionType, c.Mode))
	case c.ActionType != "":
		parts = append(parts, fmt.Sprintf("agent_autonomy %s: %s → %s", c.ActionType, c.PreviousMode, c.Mode))
	}
	if len(c.Added) > 0 {
		parts = append(parts, "the agent's own patterns gained "+strings.Join(c.Added, ", "))
	}
	if len(c.Removed) > 0 {
		parts = append(parts, "the agent's own patterns lost "+strings.Join(c.Removed, ", "))
	}
	out := strings.Join(parts, "; ")
	if c.Via != "" {
		out += " (" + strings.ReplaceAll(c.Via, "_", " ") + ")"
	}
	return out
}
