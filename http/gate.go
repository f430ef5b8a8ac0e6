package http

import (
	"net/http"

	"github.com/brabo-dev/brabo"
)

// triggerGate starts the QA gate area on a task (DESIGN §7.4, through
// s.Gates) and answers 202 at once: the area runs in the background, and
// its progress is in the project's event log (delegation.started,
// delegation.awaiting_approval, delegation.completed, gate.completed).
//
// Who: members with the role developer and up, as for putting a task in
// the backlog. Triggering spends model calls but grants nothing: every
// action a QA sub-agent proposes goes through the pipeline for the
// sub-agent's principal, and what needs a human still waits for one.
// Agents may not trigger it (an agent token never administers; a dev
// agent does not get to run its own QA).
func (s *Server) triggerGate(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r)
	if _, err := c.requireMember("trigger a gate"); err != nil {
		return err
	}
	t, _, role, err := s.visibleTask(r)
	if err != nil {
		return err
	}
	if err := requireRole(role, brabo.Developer, "triggering a gate"); err != nil {
		return err
	}
	if s.Gates == nil {
		return notConfigured("the QA gate")
	}
	start, err := s.Gates.Trigger(r.Context(), t.ID)
	if err != nil {
		return leadError(err)
	}
	writeJSON(w, http.StatusAccepted, start)
	return nil
}
