package http

import (
	"net/http"
	"strings"

	"github.com/brabo-dev/brabo"
)

// putInfraAgent names the project's infra agent (docs/actions.md, container_handoff): a
// maintainer's decision, recorded as project.infra_agent_changed. Body
// {"agentId": "agt_…"} (an agent of the project, by id or name; "" for
// none); the answer is {"projectId", "infraAgentId"}.
func (s *Server) putInfraAgent(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "naming the infra agent")
	if err != nil {
		return err
	}
	var in struct {
		AgentID *string `json:"agentId"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if in.AgentID == nil {
		return errorf(http.StatusBadRequest, brabo.CodeInvalidAction, "agentId is required (\"\" names none)")
	}
	id := strings.TrimSpace(*in.AgentID)
	if id != "" {
		// By name too, as instruction_patch takes it.
		agents, err := s.Agents.Agents(r.Context(), p.ID)
		if err != nil {
			return err
		}
		for _, a := range agents {
			if a.Name == id {
				id = a.ID
			}
		}
	}
	if err := s.Agents.SetInfraAgent(r.Context(), p.ID, m.ID, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"projectId": p.ID, "infraAgentId": id})
	return nil
}
