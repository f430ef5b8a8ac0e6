package http

import (
	"net/http"

	"github.com/brabo-dev/brabo"
)

// patchProject changes a project's process settings (docs/processes.md),
// for a maintainer: gitHooks turns the repository's git hooks on or off
// for brabo's git actions (a hook is code the agent may have written, and
// it would run with brabo's git), maxTimeoutSec sets the project's ceiling
// on a terminal command's timeoutSec (0 for none of its own). A field left
// out keeps its value. The change is recorded as a project.processes_changed
// event with the member who made it. waitCapSec and maxParallel are the
// project's agent settings (agentsettings.go), with their own event.
func (s *Server) patchProject(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "changing the project's process settings")
	if err != nil {
		return err
	}
	var in struct {
		GitHooks      *bool `json:"gitHooks"`
		MaxTimeoutSec *int  `json:"maxTimeoutSec"`
		agentSettings
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if in.GitHooks == nil && in.MaxTimeoutSec == nil && in.agentSettings.empty() {
		return badProject("give gitHooks (true or false), maxTimeoutSec (seconds, 0 for none), waitCapSec (seconds, 0 for the server's default) or maxParallel (a lower cap)")
	}
	if in.MaxTimeoutSec != nil && (*in.MaxTimeoutSec < 0 || *in.MaxTimeoutSec > 7*24*3600) {
		return badProject("maxTimeoutSec %d: want 0 (none) to 604800 seconds", *in.MaxTimeoutSec)
	}
	if err := in.agentSettings.check(); err != nil {
		return err
	}
	p, err = s.Projects.UpdateProject(r.Context(), p.ID, m.ID, brabo.ProjectUpdate{GitHooks: in.GitHooks,
		MaxTimeoutSec: in.MaxTimeoutSec, WaitCapSec: in.agentSettings.WaitCapSec, MaxParallel: in.agentSettings.MaxParallel})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// healthz answers {"status": "ok"} and the server's Health fields: a probe
// reads it without a token.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"status": "ok"}
	for k, v := range s.Health {
		if k != "status" {
			out[k] = v
		}
	}
	writeJSON(w, http.StatusOK, out)
}
