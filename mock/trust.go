package mock

import (
	"context"

	"github.com/brabo-dev/brabo"
)

// TrustService is a brabo.TrustService whose methods call the field of their name
// with Fn appended.
type TrustService struct {
	PermissionsTrustFn    func(ctx context.Context, p *brabo.Project) (*brabo.TrustState, error)
	DecidingPermissionsFn func(ctx context.Context, p *brabo.Project) (*brabo.TrustState, []byte, error)
	TrustedContentFn      func(ctx context.Context, projectID, hash string) ([]byte, error)
	WritePermissionsFn    func(ctx context.Context, p *brabo.Project, m *brabo.Member, content []byte) error
	AcceptPermissionsFn   func(ctx context.Context, projectID string, m *brabo.Member, hash string) (*brabo.TrustState, error)
	RestorePermissionsFn  func(ctx context.Context, projectID string, m *brabo.Member, hash string) (*brabo.TrustState, error)
}

var _ brabo.TrustService = (*TrustService)(nil)

// PermissionsTrust calls PermissionsTrustFn.
func (s *TrustService) PermissionsTrust(ctx context.Context, p *brabo.Project) (*brabo.TrustState, error) {
	if s.PermissionsTrustFn == nil {
		panic("mock: TrustService.PermissionsTrust called, but PermissionsTrustFn is not set")
	}
	return s.PermissionsTrustFn(ctx, p)
}

// DecidingPermissions calls DecidingPermissionsFn.
func (s *TrustService) DecidingPermissions(ctx context.Context, p *brabo.Project) (*brabo.TrustState, []byte, error) {
	if s.DecidingPermissionsFn == nil {
		panic("mock: TrustService.DecidingPermissions called, but DecidingPermissionsFn is not set")
	}
	return s.DecidingPermissionsFn(ctx, p)
}

// TrustedContent calls TrustedContentFn.
func (s *TrustService) TrustedContent(ctx context.Context, projectID, hash string) ([]byte, error) {
	if s.TrustedContentFn == nil {
		panic("mock: TrustService.TrustedContent called, but TrustedContentFn is not set")
	}
	return s.TrustedContentFn(ctx, projectID, hash)
}

// WritePermissions calls WritePermissionsFn.
func (s *TrustService) WritePermissions(ctx context.Context, p *brabo.Project, m *brabo.Member, content []byte) error {
	if s.WritePermissionsFn == nil {
		panic("mock: TrustService.WritePermissions called, but WritePermissionsFn is not set")
	}
	return s.WritePermissionsFn(ctx, p, m, content)
}

// AcceptPermissions calls AcceptPermissionsFn.
func (s *TrustService) AcceptPermissions(ctx context.Context, projectID string, m *brabo.Member, hash string) (*brabo.TrustState, error) {
	if s.AcceptPermissionsFn == nil {
		panic("mock: TrustService.AcceptPermissions called, but AcceptPermissionsFn is not set")
	}
	return s.AcceptPermissionsFn(ctx, projectID, m, hash)
}

// RestorePermissions calls RestorePermissionsFn.
func (s *TrustService) RestorePermissions(ctx context.Context, projectID string, m *brabo.Member, hash string) (*brabo.TrustState, error) {
	if s.RestorePermissionsFn == nil {
		panic("mock: TrustService.RestorePermissions called, but RestorePermissionsFn is not set")
	}
	return s.RestorePermissionsFn(ctx, projectID, m, hash)
}
