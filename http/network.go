package http

import (
	"net/http"
	"strings"
)

// allowNetwork is POST /v1/actions/{action}/allow-network: the
// always-allow of the connections an action's sandboxed run was refused
// (the egress proxy), which adds Network(host) to permissions.json.
func (s *Server) allowNetwork(w http.ResponseWriter, r *http.Request) error {
	m, err := s.decider(r)
	if err != nil {
		return err
	}
	d, err := s.Actions.AllowNetwork(r.Context(), r.PathValue("action"), m)
	if err != nil {
		return err
	}
	d.Patterns = nonNil(d.Patterns)
	writeJSON(w, http.StatusOK, d)
	return nil
}

// webAllowNetwork is the card's "Always allow Network(host)" button: the
// maintainer's always-allow of the action's refused connections.
func (s *Server) webAllowNetwork(w http.ResponseWriter, r *http.Request, v *viewer) error {
	d, err := s.Actions.AllowNetwork(r.Context(), r.PathValue("action"), v.Member)
	if err != nil {
		return s.refused(w, r, v, err)
	}
	what := "nothing new (already in permissions.json)"
	if len(d.Patterns) > 0 {
		what = strings.Join(d.Patterns, ", ")
	}
	s.decided(w, r, d.Action, "Always allowed the network: recorded "+what+" in permissions.json; the next run reaches it.")
	return nil
}
