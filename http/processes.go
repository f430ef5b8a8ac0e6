package http

import (
	"net/http"
	"time"

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
	err = s.Store.Update(r.Context(), func(tx brabo.Tx) error {
		cur, err := tx.Project(r.Context(), p.ID)
		if err != nil {
			return err
		}
		if !in.agentSettings.empty() {
			// A PATCH of the agent settings alone records only their event.
			if err := in.agentSettings.apply(r.Context(), tx, cur, m.ID); err != nil {
				return err
			}
			if in.GitHooks == nil && in.MaxTimeoutSec == nil {
				*p = *cur
				return nil
			}
		}
		if in.GitHooks != nil {
			cur.GitHooks = *in.GitHooks
		}
		if in.MaxTimeoutSec != nil {
			cur.MaxTimeoutSec = *in.MaxTimeoutSec
		}
		if err := tx.SetProjectProcesses(r.Context(), p.ID, cur.GitHooks, cur.MaxTimeoutSec); err != nil {
			return err
		}
		*p = *cur
		return tx.AppendEvent(r.Context(), &brabo.Event{ProjectID: p.ID, Type: brabo.EventProjectProcesses,
			ActorID: m.ID, Payload: jsonLine(map[string]any{"gitHooks": cur.GitHooks, "maxTimeoutSec": cur.MaxTimeoutSec}),
			CreatedAt: time.Now().UTC()})
	})
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
