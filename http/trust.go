package http

import (
	"net/http"

	"github.com/brabo-dev/brabo"
)

// Trusted policy (docs/permissions-trust.md): the state of a project's
// permissions.json against its trusted version, and a maintainer's Accept
// and Restore of a file on disk that waits.

// trustAnswer is a trust state with the trusted version's content, so the
// caller can see both sides of the difference.
type trustAnswer struct {
	*brabo.TrustState
	TrustedContent string `json:"trustedContent"`
}

// writeTrust answers a trust operation's result (st, or its error err)
// with the trusted version's content.
func (s *Server) writeTrust(w http.ResponseWriter, r *http.Request, projectID string, st *brabo.TrustState, err error) error {
	if err != nil {
		return err
	}
	content, err := s.Trust.TrustedContent(r.Context(), projectID, st.TrustedHash)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, trustAnswer{TrustState: st, TrustedContent: string(content)})
	return nil
}

// getTrust answers the trust state of the project's permissions.json: the
// trusted version, the file on disk, which one decisions use, and the
// difference (any member).
func (s *Server) getTrust(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "reading permissions.json")
	if err != nil {
		return err
	}
	st, err := s.Trust.PermissionsTrust(r.Context(), p)
	return s.writeTrust(w, r, p.ID, st, err)
}

// getEffectivePermissions answers the content brabo decides the project's
// actions with now: the file on disk when it is trusted or tightens, the
// trusted version while it waits for a maintainer. A member of the project
// or one of its agents (the hook decides a read inside the project with
// it).
func (s *Server) getEffectivePermissions(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r)
	p, role, err := s.projectAccess(r.Context(), c, r.PathValue("project"))
	if err != nil {
		return err
	}
	if c.agent == nil {
		if err := requireRole(role, brabo.Developer, "reading permissions.json"); err != nil {
			return err
		}
	}
	st, content, err := s.Trust.DecidingPermissions(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"hash": st.DecidedWith, "content": string(content), "status": st.Status})
	return nil
}

// acceptPermissions makes the file on disk the trusted version
// (maintainer). The body names the hash of the version the caller saw: a
// file that changed since is 409 permissions_changed.
func (s *Server) acceptPermissions(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "accepting permissions.json")
	if err != nil {
		return err
	}
	var in struct {
		Hash string `json:"hash"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if in.Hash == "" {
		return badRequest("hash: the hash of the version on disk you accept is required (diskHash of GET …/permissions/trust)")
	}
	st, err := s.Trust.AcceptPermissions(r.Context(), p.ID, m, in.Hash)
	return s.writeTrust(w, r, p.ID, st, err)
}

// restorePermissions writes the trusted version back over the file on disk
// (maintainer). An optional hash names the version on disk the caller saw.
func (s *Server) restorePermissions(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "restoring permissions.json")
	if err != nil {
		return err
	}
	var in struct {
		Hash string `json:"hash"`
	}
	if r.ContentLength != 0 {
		if err := s.decode(w, r, &in); err != nil {
			return err
		}
	}
	st, err := s.Trust.RestorePermissions(r.Context(), p.ID, m, in.Hash)
	return s.writeTrust(w, r, p.ID, st, err)
}
