package http

import (
	"net/http"

	"github.com/brabo-dev/brabo"
)

// The Permissions page's trust section (docs/permissions-trust.md): the
// difference between the file on disk and the trusted version, and, for a
// maintainer, Accept and Restore. The buttons post to the web's own routes
// (session and CSRF), which call the pipeline exactly as the API does.

// trustSection is what the template "permissions-trust" reads.
type trustSection struct {
	*brabo.TrustState
	ProjectID string
	// CanDecide shows Accept and Restore: maintainers only.
	CanDecide bool
}

func (s *Server) trustSectionFor(r *http.Request, p *brabo.Project, role brabo.Role) (trustSection, error) {
	st, err := s.Trust.PermissionsTrust(r.Context(), p)
	if err != nil {
		return trustSection{}, err
	}
	return trustSection{TrustState: st, ProjectID: p.ID, CanDecide: role.AtLeast(brabo.Maintainer)}, nil
}

// webAcceptPermissions is the Permissions page's Accept button: the form
// carries the hash of the file the page showed.
func (s *Server) webAcceptPermissions(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return s.webTrustChange(w, r, v, "accepting permissions.json", func(p *brabo.Project, hash string) error {
		_, err := s.Trust.AcceptPermissions(r.Context(), p.ID, v.Member, hash)
		return err
	})
}

// webRestorePermissions is the Permissions page's Restore button.
func (s *Server) webRestorePermissions(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return s.webTrustChange(w, r, v, "restoring permissions.json", func(p *brabo.Project, hash string) error {
		_, err := s.Trust.RestorePermissions(r.Context(), p.ID, v.Member, hash)
		return err
	})
}

// webTrustChange checks the role, runs change with the form's hash, and
// renders the trust section as it is after it.
func (s *Server) webTrustChange(w http.ResponseWriter, r *http.Request, v *viewer, what string, change func(*brabo.Project, string) error) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	if err := requireRole(role, brabo.Maintainer, what); err != nil {
		return err
	}
	if err := change(p, r.PostFormValue("hash")); err != nil {
		return err
	}
	sec, err := s.trustSectionFor(r, p, role)
	if err != nil {
		return err
	}
	s.render(w, http.StatusOK, "permissions-trust", sec)
	return nil
}

// shortHash is a content hash as people compare it.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
