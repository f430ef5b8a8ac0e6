package mock

import (
	"context"
	"time"

	"github.com/brabo-dev/brabo"
)

// ProjectService is a brabo.ProjectService whose methods call the field of their name
// with Fn appended.
type ProjectService struct {
	CreateProjectFn       func(ctx context.Context, m *brabo.Member, in brabo.NewProject) (*brabo.Project, error)
	LocalRootsFn          func(ctx context.Context) ([]string, error)
	ProjectFn             func(ctx context.Context, id string) (*brabo.Project, error)
	ProjectAccessFn       func(ctx context.Context, by brabo.Actor, projectID string) (*brabo.Project, brabo.Role, error)
	RoleFn                func(ctx context.Context, projectID, memberID string) (brabo.Role, error)
	MembershipsFn         func(ctx context.Context, memberID string) ([]brabo.Membership, error)
	ProjectsOfFn          func(ctx context.Context, by brabo.Actor) ([]*brabo.Project, error)
	MemberFn              func(ctx context.Context, id string) (*brabo.Member, error)
	BootstrapFn           func(ctx context.Context, name string) (string, error)
	CreateMemberFn        func(ctx context.Context, projectID, name string, role brabo.Role) (*brabo.Member, string, error)
	SetContainerRunningFn func(ctx context.Context, projectID string, running bool) error
	UpdateProjectFn       func(ctx context.Context, projectID, memberID string, u brabo.ProjectUpdate) (*brabo.Project, error)
	SetMcpToolsFn         func(ctx context.Context, projectID, memberID string, tools []string) error
	CreateTaskFn          func(ctx context.Context, projectID, title, description string) (*brabo.Task, error)
	TaskFn                func(ctx context.Context, id string) (*brabo.Task, error)
	TasksFn               func(ctx context.Context, projectID string) ([]*brabo.Task, error)
	WebhooksFn            func(ctx context.Context, projectID string) ([]*brabo.Webhook, bool, error)
	SetWebhooksFn         func(ctx context.Context, projectID string, m *brabo.Member, in []brabo.WebhookInput) ([]*brabo.Webhook, string, error)
	RotateWebhookSecretFn func(ctx context.Context, projectID string, m *brabo.Member) (string, error)
	ByTokenHashFn         func(ctx context.Context, hash string) (*brabo.Member, *brabo.Agent, error)
	OpenSessionFn         func(ctx context.Context, m *brabo.Member, userAgent string, ttl time.Duration) (string, *brabo.Session, error)
	LiveSessionFn         func(ctx context.Context, hash string, now time.Time) (*brabo.Session, *brabo.Member, error)
	SessionsFn            func(ctx context.Context, memberID string) ([]*brabo.Session, error)
	RevokeSessionFn       func(ctx context.Context, memberID, sessionID string) (bool, error)
	RevokeMemberTokenFn   func(ctx context.Context, me *brabo.Member, targetID string) error
}

var _ brabo.ProjectService = (*ProjectService)(nil)

// CreateProject calls CreateProjectFn.
func (s *ProjectService) CreateProject(ctx context.Context, m *brabo.Member, in brabo.NewProject) (*brabo.Project, error) {
	if s.CreateProjectFn == nil {
		panic("mock: ProjectService.CreateProject called, but CreateProjectFn is not set")
	}
	return s.CreateProjectFn(ctx, m, in)
}

// LocalRoots calls LocalRootsFn.
func (s *ProjectService) LocalRoots(ctx context.Context) ([]string, error) {
	if s.LocalRootsFn == nil {
		panic("mock: ProjectService.LocalRoots called, but LocalRootsFn is not set")
	}
	return s.LocalRootsFn(ctx)
}

// Project calls ProjectFn.
func (s *ProjectService) Project(ctx context.Context, id string) (*brabo.Project, error) {
	if s.ProjectFn == nil {
		panic("mock: ProjectService.Project called, but ProjectFn is not set")
	}
	return s.ProjectFn(ctx, id)
}

// ProjectAccess calls ProjectAccessFn.
func (s *ProjectService) ProjectAccess(ctx context.Context, by brabo.Actor, projectID string) (*brabo.Project, brabo.Role, error) {
	if s.ProjectAccessFn == nil {
		panic("mock: ProjectService.ProjectAccess called, but ProjectAccessFn is not set")
	}
	return s.ProjectAccessFn(ctx, by, projectID)
}

// Role calls RoleFn.
func (s *ProjectService) Role(ctx context.Context, projectID, memberID string) (brabo.Role, error) {
	if s.RoleFn == nil {
		panic("mock: ProjectService.Role called, but RoleFn is not set")
	}
	return s.RoleFn(ctx, projectID, memberID)
}

// Memberships calls MembershipsFn.
func (s *ProjectService) Memberships(ctx context.Context, memberID string) ([]brabo.Membership, error) {
	if s.MembershipsFn == nil {
		panic("mock: ProjectService.Memberships called, but MembershipsFn is not set")
	}
	return s.MembershipsFn(ctx, memberID)
}

// ProjectsOf calls ProjectsOfFn.
func (s *ProjectService) ProjectsOf(ctx context.Context, by brabo.Actor) ([]*brabo.Project, error) {
	if s.ProjectsOfFn == nil {
		panic("mock: ProjectService.ProjectsOf called, but ProjectsOfFn is not set")
	}
	return s.ProjectsOfFn(ctx, by)
}

// Member calls MemberFn.
func (s *ProjectService) Member(ctx context.Context, id string) (*brabo.Member, error) {
	if s.MemberFn == nil {
		panic("mock: ProjectService.Member called, but MemberFn is not set")
	}
	return s.MemberFn(ctx, id)
}

// Bootstrap calls BootstrapFn.
func (s *ProjectService) Bootstrap(ctx context.Context, name string) (string, error) {
	if s.BootstrapFn == nil {
		panic("mock: ProjectService.Bootstrap called, but BootstrapFn is not set")
	}
	return s.BootstrapFn(ctx, name)
}

// CreateMember calls CreateMemberFn.
func (s *ProjectService) CreateMember(ctx context.Context, projectID, name string, role brabo.Role) (*brabo.Member, string, error) {
	if s.CreateMemberFn == nil {
		panic("mock: ProjectService.CreateMember called, but CreateMemberFn is not set")
	}
	return s.CreateMemberFn(ctx, projectID, name, role)
}

// SetContainerRunning calls SetContainerRunningFn.
func (s *ProjectService) SetContainerRunning(ctx context.Context, projectID string, running bool) error {
	if s.SetContainerRunningFn == nil {
		panic("mock: ProjectService.SetContainerRunning called, but SetContainerRunningFn is not set")
	}
	return s.SetContainerRunningFn(ctx, projectID, running)
}

// UpdateProject calls UpdateProjectFn.
func (s *ProjectService) UpdateProject(ctx context.Context, projectID, memberID string, u brabo.ProjectUpdate) (*brabo.Project, error) {
	if s.UpdateProjectFn == nil {
		panic("mock: ProjectService.UpdateProject called, but UpdateProjectFn is not set")
	}
	return s.UpdateProjectFn(ctx, projectID, memberID, u)
}

// SetMcpTools calls SetMcpToolsFn.
func (s *ProjectService) SetMcpTools(ctx context.Context, projectID, memberID string, tools []string) error {
	if s.SetMcpToolsFn == nil {
		panic("mock: ProjectService.SetMcpTools called, but SetMcpToolsFn is not set")
	}
	return s.SetMcpToolsFn(ctx, projectID, memberID, tools)
}

// CreateTask calls CreateTaskFn.
func (s *ProjectService) CreateTask(ctx context.Context, projectID, title, description string) (*brabo.Task, error) {
	if s.CreateTaskFn == nil {
		panic("mock: ProjectService.CreateTask called, but CreateTaskFn is not set")
	}
	return s.CreateTaskFn(ctx, projectID, title, description)
}

// Task calls TaskFn.
func (s *ProjectService) Task(ctx context.Context, id string) (*brabo.Task, error) {
	if s.TaskFn == nil {
		panic("mock: ProjectService.Task called, but TaskFn is not set")
	}
	return s.TaskFn(ctx, id)
}

// Tasks calls TasksFn.
func (s *ProjectService) Tasks(ctx context.Context, projectID string) ([]*brabo.Task, error) {
	if s.TasksFn == nil {
		panic("mock: ProjectService.Tasks called, but TasksFn is not set")
	}
	return s.TasksFn(ctx, projectID)
}

// Webhooks calls WebhooksFn.
func (s *ProjectService) Webhooks(ctx context.Context, projectID string) ([]*brabo.Webhook, bool, error) {
	if s.WebhooksFn == nil {
		panic("mock: ProjectService.Webhooks called, but WebhooksFn is not set")
	}
	return s.WebhooksFn(ctx, projectID)
}

// SetWebhooks calls SetWebhooksFn.
func (s *ProjectService) SetWebhooks(ctx context.Context, projectID string, m *brabo.Member, in []brabo.WebhookInput) ([]*brabo.Webhook, string, error) {
	if s.SetWebhooksFn == nil {
		panic("mock: ProjectService.SetWebhooks called, but SetWebhooksFn is not set")
	}
	return s.SetWebhooksFn(ctx, projectID, m, in)
}

// RotateWebhookSecret calls RotateWebhookSecretFn.
func (s *ProjectService) RotateWebhookSecret(ctx context.Context, projectID string, m *brabo.Member) (string, error) {
	if s.RotateWebhookSecretFn == nil {
		panic("mock: ProjectService.RotateWebhookSecret called, but RotateWebhookSecretFn is not set")
	}
	return s.RotateWebhookSecretFn(ctx, projectID, m)
}

// ByTokenHash calls ByTokenHashFn.
func (s *ProjectService) ByTokenHash(ctx context.Context, hash string) (*brabo.Member, *brabo.Agent, error) {
	if s.ByTokenHashFn == nil {
		panic("mock: ProjectService.ByTokenHash called, but ByTokenHashFn is not set")
	}
	return s.ByTokenHashFn(ctx, hash)
}

// OpenSession calls OpenSessionFn.
func (s *ProjectService) OpenSession(ctx context.Context, m *brabo.Member, userAgent string, ttl time.Duration) (string, *brabo.Session, error) {
	if s.OpenSessionFn == nil {
		panic("mock: ProjectService.OpenSession called, but OpenSessionFn is not set")
	}
	return s.OpenSessionFn(ctx, m, userAgent, ttl)
}

// LiveSession calls LiveSessionFn.
func (s *ProjectService) LiveSession(ctx context.Context, hash string, now time.Time) (*brabo.Session, *brabo.Member, error) {
	if s.LiveSessionFn == nil {
		panic("mock: ProjectService.LiveSession called, but LiveSessionFn is not set")
	}
	return s.LiveSessionFn(ctx, hash, now)
}

// Sessions calls SessionsFn.
func (s *ProjectService) Sessions(ctx context.Context, memberID string) ([]*brabo.Session, error) {
	if s.SessionsFn == nil {
		panic("mock: ProjectService.Sessions called, but SessionsFn is not set")
	}
	return s.SessionsFn(ctx, memberID)
}

// RevokeSession calls RevokeSessionFn.
func (s *ProjectService) RevokeSession(ctx context.Context, memberID, sessionID string) (bool, error) {
	if s.RevokeSessionFn == nil {
		panic("mock: ProjectService.RevokeSession called, but RevokeSessionFn is not set")
	}
	return s.RevokeSessionFn(ctx, memberID, sessionID)
}

// RevokeMemberToken calls RevokeMemberTokenFn.
func (s *ProjectService) RevokeMemberToken(ctx context.Context, me *brabo.Member, targetID string) error {
	if s.RevokeMemberTokenFn == nil {
		panic("mock: ProjectService.RevokeMemberToken called, but RevokeMemberTokenFn is not set")
	}
	return s.RevokeMemberTokenFn(ctx, me, targetID)
}
