package pipeline_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/pipeline"
)

// CreateProject holds the project rules the API used to: only an admin
// creates one, the slug rule, the workspace folder named after the slug
// and the id, one slug per store, a first trusted version of the file and
// the creator as owner, all or nothing.
func TestCreateProjectRules(t *testing.T) {
	f := newDecideFixture(t, `{"allow": ["Terminal(echo)"]}`)
	p := f.project
	if !strings.HasPrefix(p.WorkspaceDir, "shop-") || p.WorkspaceDir != "shop-"+p.ID[len(p.ID)-8:] || p.Name != "shop" {
		t.Fatalf("project: workspace %q for id %q, name %q", p.WorkspaceDir, p.ID, p.Name)
	}
	if role, err := f.svc.Role(f.ctx, p.ID, f.owner.ID); err != nil || role != brabo.Owner {
		t.Fatalf("the creator's role: %q %v", role, err)
	}
	if st, err := f.svc.PermissionsTrust(f.ctx, p); err != nil || st.Status != pipeline.StatusTrusted {
		t.Fatalf("a new project's file: %+v %v", st, err)
	}
	for _, tc := range []struct {
		name string
		by   *brabo.Member
		in   brabo.NewProject
		code brabo.Code
	}{
		{"a member who is no admin", f.developer, brabo.NewProject{Slug: "other", Mode: brabo.ModeLocal, Root: t.TempDir()}, brabo.CodeForbiddenRole},
		{"an upper-case slug", f.owner, brabo.NewProject{Slug: "Shop2", Mode: brabo.ModeLocal, Root: t.TempDir()}, brabo.CodeInvalidProject},
		{"a slug starting with a dash", f.owner, brabo.NewProject{Slug: "-x", Mode: brabo.ModeLocal, Root: t.TempDir()}, brabo.CodeInvalidProject},
		{"a slug with a slash", f.owner, brabo.NewProject{Slug: "a/../b", Mode: brabo.ModeContainer}, brabo.CodeInvalidProject},
		{"a slug of 64 characters", f.owner, brabo.NewProject{Slug: strings.Repeat("a", 64), Mode: brabo.ModeContainer}, brabo.CodeInvalidProject},
		{"a local project without root", f.owner, brabo.NewProject{Slug: "noroot", Mode: brabo.ModeLocal}, brabo.CodeInvalidProject},
		{"a container project with a root", f.owner, brabo.NewProject{Slug: "boxed", Mode: brabo.ModeContainer, Root: t.TempDir()}, brabo.CodeInvalidProject},
		{"an unknown mode", f.owner, brabo.NewProject{Slug: "odd", Mode: "cloud"}, brabo.CodeInvalidProject},
		{"a slug taken", f.owner, brabo.NewProject{Slug: "shop", Mode: brabo.ModeLocal, Root: t.TempDir()}, "conflict"},
	} {
		got, err := f.svc.CreateProject(f.ctx, tc.by, tc.in)
		if brabo.ErrorCode(err) != tc.code || got != nil {
			t.Errorf("%s: %v (%v), want %s", tc.name, got, err, tc.code)
		}
	}
	ps, err := f.svc.ProjectsOf(f.ctx, brabo.Actor{Member: f.owner})
	if err != nil || len(ps) != 1 {
		t.Fatalf("after refused creations the owner sees %d projects (%v), want 1", len(ps), err)
	}
	// A container project lives under the workspaces root, in its own
	// folder.
	box, err := f.svc.CreateProject(f.ctx, f.owner, brabo.NewProject{Slug: "box", Mode: brabo.ModeContainer})
	if err != nil || box.Root != "" || box.WorkspaceDir == p.WorkspaceDir {
		t.Fatalf("a container project: %+v %v", box, err)
	}
	// The others of the service's writes refuse what the API refused.
	if _, _, err := f.svc.CreateMember(f.ctx, p.ID, " ", brabo.Developer); brabo.ErrorCode(err) != brabo.CodeInvalidAction {
		t.Errorf("a member without a name: %v", err)
	}
	if _, _, err := f.svc.CreateMember(f.ctx, p.ID, "bob", "admin"); brabo.ErrorCode(err) != brabo.CodeInvalidAction {
		t.Errorf("a member of an unknown role: %v", err)
	}
	if _, _, err := f.svc.CreateAgent(f.ctx, p.ID, f.owner.ID, "coder", ""); brabo.ErrorCode(err) != "conflict" {
		t.Errorf("a second agent named coder: %v", err)
	}
	if _, _, err := f.svc.CreateAgent(f.ctx, p.ID, f.owner.ID, "dev-shop", brabo.AgentKindHook); brabo.ErrorCode(err) != brabo.CodeInvalidAction {
		t.Errorf("a hook agent named as brabo's own: %v", err)
	}
	if _, err := f.svc.CreateTask(f.ctx, p.ID, "  ", ""); brabo.ErrorCode(err) != brabo.CodeInvalidAction {
		t.Errorf("a task without a title: %v", err)
	}
	// Revoking a token: an owner of every project the member is in may;
	// a member of no shared project is not found.
	if err := f.svc.RevokeMemberToken(f.ctx, f.developer, f.owner.ID); brabo.ErrorCode(err) != brabo.CodeForbiddenRole {
		t.Errorf("a developer revoking the admin's token: %v", err)
	}
	if err := f.svc.RevokeMemberToken(f.ctx, f.owner, "mem_nobody"); !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("revoking a member who does not exist: %v", err)
	}
	if err := f.svc.RevokeMemberToken(f.ctx, f.owner, f.developer.ID); err != nil {
		t.Errorf("the admin revoking a developer's token: %v", err)
	}
	if _, _, err := f.svc.ByTokenHash(f.ctx, f.developer.TokenHash); !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("a revoked token still finds its member: %v", err)
	}
}
