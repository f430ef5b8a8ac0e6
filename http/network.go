package http

import "net/http"

// allowNetwork is POST /v1/actions/{action}/allow-network: the
// always-allow of the connections an action's sandboxed run was refused
// (issue 24), which adds Network(host) to permissions.json.
func (s *Server) allowNetwork(w http.ResponseWriter, r *http.Request) error {
	m, err := s.decider(r)
	if err != nil {
		return err
	}
	d, err := s.Pipeline.AllowNetwork(r.Context(), r.PathValue("action"), m)
	if err != nil {
		return err
	}
	d.Patterns = nonNil(d.Patterns)
	writeJSON(w, http.StatusOK, d)
	return nil
}
