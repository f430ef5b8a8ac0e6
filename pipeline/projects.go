package pipeline

import (
	"context"
	"errors"
	"strings"

	"github.com/brabo-dev/brabo"
)

// Projects, members, tasks and credentials: the writes the API and the web
// page ask for, each validated and done in one transaction here, and the
// reads they show, each from one snapshot.

var _ interface {
	brabo.ActionService
	brabo.EventService
	brabo.ProjectService
	brabo.AgentService
	brabo.TrustService
	brabo.ExecutionService
} = (*Service)(nil)

// view runs f in a read transaction and returns what it read.
func view[T any](ctx context.Context, s *Service, f func(tx brabo.Tx) (T, error)) (T, error) {
	var out T
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		out, err = f(tx)
		return err
	})
	return out, err
}

// CreateProject creates a project of the admin m, who becomes its owner,
// with the file as it is now as its first trusted version, in one
// transaction. The slug is checked here (NewProject.Validate), the name
// defaults to it, and the workspace folder is named slug-<the id's last
// eight characters>, so two projects never share one. A local project's
// root is checked against the disk by the caller, which holds the probe
// (http's createProject); here it is only required.
func (s *Service) CreateProject(ctx context.Context, m *brabo.Member, in brabo.NewProject) (*brabo.Project, error) {
	if !m.Admin {
		return nil, forbidden("only an admin member can create projects")
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Name) == "" {
		in.Name = in.Slug
	}
	id := brabo.NewID("prj")
	p := &brabo.Project{ID: id, Slug: in.Slug, Name: in.Name, Mode: in.Mode, OwnerID: m.ID,
		WorkspaceDir: in.Slug + "-" + id[len(id)-8:], CreatedAt: s.now()}
	switch in.Mode {
	case brabo.ModeLocal:
		if in.Root == "" {
			return nil, badProject("root: a local project needs root, the absolute path of an existing folder (its permissions.json is read there)")
		}
		// The typed root is kept: Decide compares paths with it as typed,
		// and the executor accepts it and its resolved form alike.
		p.Root = in.Root
	case brabo.ModeContainer, brabo.ModeRunner:
		if in.Root != "" {
			return nil, badProject("root: a %s project lives under the workspaces root; give no root", in.Mode)
		}
		if _, err := s.ScopeRoot(p); err != nil {
			return nil, badProject("mode %s: %v", in.Mode, err)
		}
	default:
		return nil, badProject("mode %q: want local (with root, an existing absolute folder), container or runner", in.Mode)
	}
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateProject(ctx, p); err != nil {
			return err
		}
		// The file as it is now is the project's first trusted version.
		if err := s.trustAtCreation(ctx, tx, p, m.ID); err != nil {
			return err
		}
		return tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: m.ID, Role: brabo.Owner})
	})
	if errors.Is(err, brabo.ErrConflict) {
		return nil, brabo.Errorf(brabo.CodeConflict, "a project with the slug %q exists", in.Slug)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

func badProject(format string, a ...any) error {
	return brabo.Errorf(brabo.CodeInvalidProject, format, a...)
}

// LocalRoots lists the folders of the local projects: no two projects
// share one, as they would share one permissions.json.
func (s *Service) LocalRoots(ctx context.Context) ([]string, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]string, error) {
		var roots []string
		ps, err := tx.Projects(ctx)
		for _, p := range ps {
			if p.Mode == brabo.ModeLocal {
				roots = append(roots, p.Root)
			}
		}
		return roots, err
	})
}

// Project reads one project.
func (s *Service) Project(ctx context.Context, id string) (*brabo.Project, error) {
	return view(ctx, s, func(tx brabo.Tx) (*brabo.Project, error) { return tx.Project(ctx, id) })
}

// ProjectAccess reads the project and the actor's role in it. A project
// the actor cannot see is brabo.ErrNotFound, never forbidden: no
// cross-project reads, not even of existence. An agent sees only its own
// project, with no role.
func (s *Service) ProjectAccess(ctx context.Context, by brabo.Actor, projectID string) (*brabo.Project, brabo.Role, error) {
	var p *brabo.Project
	var role brabo.Role
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if p, err = tx.Project(ctx, projectID); err != nil {
			return err
		}
		if by.Agent != nil {
			if by.Agent.ProjectID != p.ID {
				return brabo.ErrNotFound
			}
			return nil
		}
		if by.Member == nil {
			return brabo.ErrNotFound
		}
		role, err = tx.Role(ctx, p.ID, by.Member.ID)
		if err == nil && role == "" {
			return brabo.ErrNotFound
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return p, role, nil
}

// Role reads the member's role in the project, "" for none.
func (s *Service) Role(ctx context.Context, projectID, memberID string) (brabo.Role, error) {
	return view(ctx, s, func(tx brabo.Tx) (brabo.Role, error) { return tx.Role(ctx, projectID, memberID) })
}

// Memberships lists the member's roles.
func (s *Service) Memberships(ctx context.Context, memberID string) ([]brabo.Membership, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]brabo.Membership, error) { return tx.Memberships(ctx, memberID) })
}

// ProjectsOf lists the projects the actor sees, from one snapshot: an
// agent its own, a member each it has a role in.
func (s *Service) ProjectsOf(ctx context.Context, by brabo.Actor) ([]*brabo.Project, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]*brabo.Project, error) {
		var out []*brabo.Project
		if by.Agent != nil {
			p, err := tx.Project(ctx, by.Agent.ProjectID)
			return append(out, p), err
		}
		ms, err := tx.Memberships(ctx, by.Member.ID)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			p, err := tx.Project(ctx, m.ProjectID)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	})
}

// Member reads one member.
func (s *Service) Member(ctx context.Context, id string) (*brabo.Member, error) {
	return view(ctx, s, func(tx brabo.Tx) (*brabo.Member, error) { return tx.Member(ctx, id) })
}

// Bootstrap creates the first member, an admin who may create projects,
// when the store has none, and returns its token (shown once). It returns
// "" when members exist already.
func (s *Service) Bootstrap(ctx context.Context, name string) (string, error) {
	token := ""
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		n, err := tx.CountMembers(ctx)
		if err != nil || n > 0 {
			return err
		}
		token = brabo.NewToken()
		return tx.CreateMember(ctx, &brabo.Member{ID: brabo.NewID("mem"), Name: name, Admin: true,
			TokenHash: brabo.HashToken(token), CreatedAt: s.now()})
	})
	return token, err
}

// CreateMember creates a member with a role in the project, in one
// transaction, and returns its token (shown once; only its hash is kept).
func (s *Service) CreateMember(ctx context.Context, projectID, name string, role brabo.Role) (*brabo.Member, string, error) {
	if strings.TrimSpace(name) == "" {
		return nil, "", invalid("name is required")
	}
	if !role.Valid() {
		return nil, "", invalid("role %q: want developer, maintainer or owner", role)
	}
	token := brabo.NewToken()
	m := &brabo.Member{ID: brabo.NewID("mem"), Name: name, TokenHash: brabo.HashToken(token), CreatedAt: s.now()}
	if err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, m); err != nil {
			return err
		}
		return tx.SetRole(ctx, brabo.Membership{ProjectID: projectID, MemberID: m.ID, Role: role})
	}); err != nil {
		return nil, "", err
	}
	return m, token, nil
}

// SetContainerRunning records whether the project's container runs; only
// a container project has one to register running.
func (s *Service) SetContainerRunning(ctx context.Context, projectID string, running bool) error {
	return s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.SetContainerRunning(ctx, projectID, running) })
}

// UpdateProject writes the settings u sets, in one transaction, and
// returns the project as it is after. The agent settings (WaitCapSec,
// MaxParallel) record project.agents_changed; a raise of MaxParallel is
// spending more, which a human decides through raise_max_parallel, so it
// is refused with needs_approval, writing nothing. The process settings
// (GitHooks, MaxTimeoutSec) record project.processes_changed.
func (s *Service) UpdateProject(ctx context.Context, projectID, memberID string, u brabo.ProjectUpdate) (*brabo.Project, error) {
	var out *brabo.Project
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		cur, err := tx.Project(ctx, projectID)
		if err != nil {
			return err
		}
		out = cur
		if u.WaitCapSec != nil || u.MaxParallel != nil {
			// A change of the agent settings alone records only their event.
			if err := s.setAgentSettings(ctx, tx, cur, memberID, u.WaitCapSec, u.MaxParallel); err != nil {
				return err
			}
		}
		if u.GitHooks == nil && u.MaxTimeoutSec == nil {
			return nil
		}
		if u.GitHooks != nil {
			cur.GitHooks = *u.GitHooks
		}
		if u.MaxTimeoutSec != nil {
			cur.MaxTimeoutSec = *u.MaxTimeoutSec
		}
		if err := tx.SetProjectProcesses(ctx, cur.ID, cur.GitHooks, cur.MaxTimeoutSec); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: cur.ID, Type: brabo.EventProjectProcesses,
			ActorID: memberID, Payload: mustJSON(map[string]any{"gitHooks": cur.GitHooks, "maxTimeoutSec": cur.MaxTimeoutSec}),
			CreatedAt: s.now()})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// setAgentSettings writes the agent settings to cur inside tx, with a
// project.agents_changed event by the member; a raise of the cap is
// refused, writing nothing.
func (s *Service) setAgentSettings(ctx context.Context, tx brabo.Tx, cur *brabo.Project, memberID string, waitCapSec, maxParallelIn *int) error {
	waitCap, maxParallel := cur.WaitCapSec, cur.MaxParallel
	if waitCapSec != nil {
		waitCap = *waitCapSec
	}
	if maxParallelIn != nil {
		if *maxParallelIn > cur.MaxParallel {
			return brabo.Errorf(brabo.CodeNeedsApproval, "maxParallel %d is above the project's cap of %d: raising it is spending more, which a human decides; "+
				"propose raise_max_parallel {\"maxParallel\": %d} (POST /v1/projects/%s/actions)", *maxParallelIn, cur.MaxParallel, *maxParallelIn, cur.ID)
		}
		maxParallel = *maxParallelIn
	}
	if err := tx.SetProjectAgents(ctx, cur.ID, maxParallel, waitCap); err != nil {
		return err
	}
	cur.WaitCapSec, cur.MaxParallel = waitCap, maxParallel
	return tx.AppendEvent(ctx, &brabo.Event{ProjectID: cur.ID, Type: brabo.EventProjectAgents, ActorID: memberID,
		Payload: mustJSON(map[string]any{"waitCapSec": waitCap, "maxParallel": maxParallel}), CreatedAt: s.now()})
}

// SetMcpTools replaces the project's mapped MCP tools, with
// project.mcp_tools_changed by the member, in one transaction.
func (s *Service) SetMcpTools(ctx context.Context, projectID, memberID string, tools []string) error {
	return s.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.SetProjectMcpTools(ctx, projectID, tools); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: projectID, Type: brabo.EventProjectMcpTools,
			ActorID: memberID, Payload: mustJSON(map[string]any{"tools": tools}), CreatedAt: s.now()})
	})
}

// CreateTask puts a task in the project's backlog for its dev agent.
func (s *Service) CreateTask(ctx context.Context, projectID, title, description string) (*brabo.Task, error) {
	if strings.TrimSpace(title) == "" {
		return nil, invalid("title is required")
	}
	now := s.now()
	t := &brabo.Task{ID: brabo.NewID("task"), ProjectID: projectID, Title: title, Description: description,
		Status: brabo.TaskTodo, CreatedAt: now, UpdatedAt: now}
	if err := s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateTask(ctx, t) }); err != nil {
		return nil, err
	}
	return t, nil
}

// Task reads one task.
func (s *Service) Task(ctx context.Context, id string) (*brabo.Task, error) {
	return view(ctx, s, func(tx brabo.Tx) (*brabo.Task, error) { return tx.Task(ctx, id) })
}

// Tasks lists the project's tasks.
func (s *Service) Tasks(ctx context.Context, projectID string) ([]*brabo.Task, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]*brabo.Task, error) { return tx.Tasks(ctx, projectID) })
}

// Webhooks lists the project's notification webhooks and whether a
// signing secret is set (never the secret), from one snapshot.
func (s *Service) Webhooks(ctx context.Context, projectID string) ([]*brabo.Webhook, bool, error) {
	var hooks []*brabo.Webhook
	secretSet := false
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if hooks, err = tx.Webhooks(ctx, projectID); err != nil {
			return err
		}
		_, err = tx.WebhookSecret(ctx, projectID)
		secretSet = err == nil
		if errors.Is(err, brabo.ErrNotFound) {
			err = nil
		}
		return err
	})
	return hooks, secretSet, err
}
