package http

import (
	"net/http"

	"github.com/brabo-dev/brabo"
)

// getWebhooks lists the project's notification webhooks, for a
// maintainer, and whether a signing secret is set (never the secret).
func (s *Server) getWebhooks(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Maintainer, "reading the project's webhooks")
	if err != nil {
		return err
	}
	hooks, secretSet, err := s.Projects.Webhooks(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": nonNil(hooks), "secretSet": secretSet})
	return nil
}

// putWebhooks replaces the project's webhooks, for a maintainer. The
// answer carries the signing secret once, when this change created it (the
// first json webhook).
func (s *Server) putWebhooks(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "changing the project's webhooks")
	if err != nil {
		return err
	}
	var in struct {
		Webhooks []brabo.WebhookInput `json:"webhooks"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	hooks, secret, err := s.Projects.SetWebhooks(r.Context(), p.ID, m, in.Webhooks)
	if err != nil {
		return err
	}
	out := map[string]any{"webhooks": nonNil(hooks)}
	if secret != "" {
		out["secret"] = secret
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// rotateWebhookSecret gives the project a new signing secret and answers
// it, once.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "changing the project's webhook secret")
	if err != nil {
		return err
	}
	secret, err := s.Projects.RotateWebhookSecret(r.Context(), p.ID, m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"secret": secret})
	return nil
}
