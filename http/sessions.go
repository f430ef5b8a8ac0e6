package http

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/brabo-dev/brabo"
)

// Web sessions and revocation. Logging in to the web page opens a session
// of its own: a random secret in the cookie, stored hashed, with an
// expiry; logging out revokes it. The member token that logged in never
// travels in a cookie, and a session secret is no API token. Member and
// agent tokens can be revoked; a revoked token or session is refused on
// every instance as soon as the store's AuthSignal reaches it.

// DefaultSessionTTL is how long a web login lasts when Server.SessionTTL is
// not set: a working day, so a forgotten browser does not stay logged in
// for good.
const DefaultSessionTTL = 12 * time.Hour

func (s *Server) sessionTTL() time.Duration {
	if s.SessionTTL > 0 {
		return s.SessionTTL
	}
	return DefaultSessionTTL
}

// openSession stores a new session of m and returns its secret
// (brabo.NewSessionSecret: its prefix is not an API token's).
func (s *Server) openSession(ctx context.Context, m *brabo.Member, userAgent string) (string, *brabo.Session, error) {
	return s.Projects.OpenSession(ctx, m, clip(brabo.Printable(userAgent), 200), s.sessionTTL())
}

// lookupSession resolves a session cookie's secret to its member, through
// the same cache as tokens (under another key); brabo.ErrNotFound when it
// is nobody's, expired or revoked.
func (s *Server) lookupSession(ctx context.Context, secret string) (caller, error) {
	key := "s:" + HashToken(secret)
	gen := s.tokens.fresh(s.authSignal)
	if c, ok := s.tokens.get(key); ok {
		return c, nil
	}
	var c caller
	now := time.Now()
	sess, m, err := s.Projects.LiveSession(ctx, key[2:], now)
	if err != nil {
		return caller{}, err
	}
	c = caller{member: m, session: sess}
	// An entry never outlives the session it names.
	expires := now.Add(tokenTTL)
	if c.session.ExpiresAt.Before(expires) {
		expires = c.session.ExpiresAt
	}
	s.tokens.put(key, c, gen, expires)
	return c, nil
}

// listSessions lists the caller's live web sessions.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	m, err := callerOf(r).requireMember("list web sessions (agents have none)")
	if err != nil {
		return err
	}
	out, err := s.Projects.Sessions(r.Context(), m.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": nonNil(out)})
	return nil
}

// revokeSession ends one of the caller's live sessions; another member's,
// an ended one and a missing one are alike not found.
func (s *Server) revokeSession(w http.ResponseWriter, r *http.Request) error {
	m, err := callerOf(r).requireMember("revoke web sessions (agents have none)")
	if err != nil {
		return err
	}
	id := r.PathValue("session")
	ok, err := s.Projects.RevokeSession(r.Context(), m.ID, id)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("live session " + id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// revokeMemberToken revokes a member's token and ends the member's web
// sessions. Allowed for the member itself, an admin, and a member who owns
// every project the member has a role in: an owner of one project cannot
// cut someone off from a project it does not own. An admin's token needs
// an admin (or the admin itself). A member the caller shares no project
// with is not found, as everywhere.
func (s *Server) revokeMemberToken(w http.ResponseWriter, r *http.Request) error {
	me, err := callerOf(r).requireMember("revoke tokens")
	if err != nil {
		return err
	}
	id := r.PathValue("member")
	err = s.Projects.RevokeMemberToken(r.Context(), me, id)
	if errors.Is(err, brabo.ErrNotFound) {
		return notFound("member " + id)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// revokeAgentToken revokes an agent's token: maintainer, as creating the
// agent. The agent stays, with its actions; its token opens nothing.
func (s *Server) revokeAgentToken(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Maintainer, "revoking an agent's token")
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	if err := s.Agents.RevokeAgentToken(r.Context(), a.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// rotateAgentToken gives an agent a new token, which replaces the old one
// and lifts a revocation: maintainer, as creating the agent. brabo install
// re-uses its hook agent this way, so a re-install leaves one agent with
// one live token.
func (s *Server) rotateAgentToken(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Maintainer, "rotating an agent's token")
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	token, err := s.Agents.RotateAgentToken(r.Context(), a.ID)
	if err != nil {
		return err
	}
	a.RevokedAt = time.Time{}
	writeJSON(w, http.StatusOK, map[string]any{"agent": a, "token": token})
	return nil
}
