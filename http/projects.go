package http

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) error {
	m, err := callerOf(r).requireMember("create projects")
	if err != nil {
		return err
	}
	if !m.Admin {
		return errorf(http.StatusForbidden, brabo.CodeForbiddenRole, "only an admin member can create projects")
	}
	var in brabo.NewProject
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	// The slug rule, the workspace folder's name and the transaction are
	// the pipeline's (CreateProject); a local folder is checked here first,
	// against the disk and brabo's own folders, which the server knows.
	if err := in.Validate(); err != nil {
		return err
	}
	if in.Mode == brabo.ModeLocal {
		probe := s.DirProbe
		if probe == nil {
			return badProject("this server cannot create local projects")
		}
		if in.Root == "" {
			return badProject("root: a local project needs root, the absolute path of an existing folder (its permissions.json is read there)")
		}
		if err := s.ownOverlap(in.Root); err != nil {
			return badProject("root: %v", err)
		}
		// No two projects share a folder: they would share one
		// permissions.json and each other's scope.
		others, err := s.Projects.LocalRoots(r.Context())
		if err != nil {
			return err
		}
		taken := append(others, s.OwnPaths...)
		if err := policy.ValidateLocalRoot(in.Root, taken, probe); err != nil {
			return badProject("root: %v", err)
		}
		if err := validateResolvedRoot(in.Root, taken, probe); err != nil {
			return badProject("root: %v", err)
		}
	}
	p, err := s.Projects.CreateProject(r.Context(), m, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, p)
	return nil
}

// ownOverlap refuses a folder that is, holds or lies inside one of
// brabo's own (its data folder), as typed and with symlinks resolved,
// naming the folder and how to move it: the usual case is brabo serve
// started inside the project folder with --data there.
func (s *Server) ownOverlap(root string) error {
	if !filepath.IsAbs(root) {
		return nil // ValidateLocalRoot names it
	}
	forms := []string{filepath.Clean(root)}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != forms[0] {
		forms = append(forms, real)
	}
	for _, own := range s.OwnPaths {
		owns := []string{filepath.Clean(own)}
		if real, err := filepath.EvalSymlinks(own); err == nil && real != owns[0] {
			owns = append(owns, real)
		}
		for _, f := range forms {
			for _, o := range owns {
				if f == o || strings.HasPrefix(f, o+"/") || strings.HasPrefix(o, strings.TrimSuffix(f, "/")+"/") {
					msg := fmt.Sprintf("the project folder %q overlaps brabo's data folder %s", root, own)
					if f != forms[0] {
						msg = fmt.Sprintf("%q resolves through a symlink to %q, which overlaps brabo's data folder %s", root, f, own)
					}
					if s.OwnPathsHint != "" {
						msg += "; " + s.OwnPathsHint
					}
					return errors.New(msg)
				}
			}
		}
	}
	return nil
}

// validateResolvedRoot checks a local project's folder once its symlinks
// are resolved, as ValidateLocalRoot checked it as typed: a symlink
// (/tmp/x → /etc) must not turn a system folder, brabo's own files or
// another project's folder into a project. taken is compared resolved too.
func validateResolvedRoot(root string, taken []string, probe policy.DirProbe) error {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("the project folder %q cannot be resolved: %w", root, err)
	}
	if real == root {
		return nil
	}
	resolved := slices.Clone(taken)
	for _, t := range taken {
		if r, err := filepath.EvalSymlinks(t); err == nil && r != t {
			resolved = append(resolved, r)
		}
	}
	if err := policy.ValidateLocalRoot(real, resolved, probe); err != nil {
		return fmt.Errorf("%q resolves through a symlink to %q: %w", root, real, err)
	}
	return nil
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r)
	out, err := s.Projects.ProjectsOf(r.Context(), c.actor())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"projects": nonNil(out)})
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *Server) getProject(w http.ResponseWriter, r *http.Request) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"project": p, "role": role})
	return nil
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r)
	if c.agent != nil {
		writeJSON(w, http.StatusOK, map[string]any{"agent": c.agent})
		return nil
	}
	ms, err := s.Projects.Memberships(r.Context(), c.member.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"member": c.member, "memberships": nonNil(ms)})
	return nil
}

// memberProject is projectAccess for members only, with a minimum role.
// An agent token gets 404 on these routes, never 403, as for a project it
// cannot see: a project route that is not an agent's does not exist for it.
func (s *Server) memberProject(r *http.Request, min brabo.Role, what string) (*brabo.Project, *brabo.Member, error) {
	c := callerOf(r)
	if c.agent != nil {
		// The same answer whether the project is the agent's or not, so it
		// tells nothing; it says where an agent learns its decisions.
		return nil, nil, errorf(http.StatusNotFound, brabo.CodeNotFound,
			"project %s not found: an agent token reads only its own actions (GET /v1/actions/{id}, and /wait for the decision)", r.PathValue("project"))
	}
	m := c.member
	p, role, err := s.projectAccess(r.Context(), c, r.PathValue("project"))
	if err != nil {
		return nil, nil, err
	}
	if err := requireRole(role, min, what); err != nil {
		return nil, nil, err
	}
	return p, m, nil
}

func (s *Server) putContainer(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Maintainer, "registering the container")
	if err != nil {
		return err
	}
	var in struct {
		Running *bool `json:"running"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if in.Running == nil {
		return badProject("running: true or false is required")
	}
	if *in.Running && p.Mode != brabo.ModeContainer {
		return badProject("only a container project has a container to register running")
	}
	if err := s.Projects.SetContainerRunning(r.Context(), p.ID, *in.Running); err != nil {
		return err
	}
	p.ContainerRunning = *in.Running
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) createMember(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Owner, "adding members")
	if err != nil {
		return err
	}
	var in struct {
		Name string     `json:"name"`
		Role brabo.Role `json:"role"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	m, token, err := s.Projects.CreateMember(r.Context(), p.ID, in.Name, in.Role)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"member": m, "role": in.Role, "token": token})
	return nil
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "creating agents")
	if err != nil {
		return err
	}
	var in struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	a, token, err := s.Agents.CreateAgent(r.Context(), p.ID, m.ID, in.Name, in.Kind)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"agent": a, "token": token})
	return nil
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "listing agents")
	if err != nil {
		return err
	}
	out, err := s.Agents.Agents(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": nonNil(out)})
	return nil
}

// projectAgent loads an agent of the project in the path.
func (s *Server) projectAgent(r *http.Request, p *brabo.Project) (*brabo.Agent, error) {
	a, err := s.Agents.Agent(r.Context(), r.PathValue("agent"))
	if errors.Is(err, brabo.ErrNotFound) || (err == nil && a.ProjectID != p.ID) {
		return nil, notFound("agent " + r.PathValue("agent"))
	}
	return a, err
}

func (s *Server) getAutonomy(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "reading agent autonomy")
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	rules, err := s.Agents.Autonomy(r.Context(), a.ID)
	if err != nil {
		return err
	}
	patterns, err := s.Agents.AgentPatterns(r.Context(), a.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"autonomy": nonNil(rules), "patterns": nonNil(patterns)})
	return nil
}

// putAutonomy writes one agent_autonomy rule and records autonomy.changed
// when it changes it. The wildcard "*" with auto_approve is auto mode;
// like every autonomy rule it needs maintainer.
func (s *Server) putAutonomy(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "changing agent autonomy")
	if err != nil {
		return err
	}
	a, err := s.projectAgent(r, p)
	if err != nil {
		return err
	}
	var in struct {
		ActionType brabo.ActionType `json:"actionType"`
		Mode       brabo.Policy     `json:"mode"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if in.ActionType != brabo.AnyActionType && !in.ActionType.Valid() {
		return badRequest("actionType %q: want an action type or \"*\"", in.ActionType)
	}
	if !in.Mode.Valid() {
		return badRequest("mode %q: want auto_approve, require_approval or deny", in.Mode)
	}
	rule := brabo.AgentAutonomy{AgentID: a.ID, ActionType: in.ActionType, Mode: in.Mode}
	if _, err := s.Agents.PutAutonomy(r.Context(), p.ID, m.ID, rule, brabo.ViaAPI); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rule)
	return nil
}

func (s *Server) getPermissions(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "reading permissions.json")
	if err != nil {
		return err
	}
	f, err := s.permissionsOf(p)
	if err != nil {
		return err
	}
	data, rules, perr := f.data, f.rules, f.err
	out := map[string]any{"content": string(data), "valid": perr == nil, "warnings": nonNil(rules.Warnings())}
	var fe *policy.FileError
	if errors.As(perr, &fe) {
		out["errors"] = fe.Entries
	}
	// The file as on disk, and whether brabo decides with it (trust.go).
	st, err := s.Trust.PermissionsTrust(r.Context(), p)
	if err != nil {
		return err
	}
	out["trust"] = st
	writeJSON(w, http.StatusOK, out)
	return nil
}

// permissionsFile is a project's permissions.json as it is on disk.
type permissionsFile struct {
	scope policy.Scope
	data  []byte
	rules *policy.Rules
	err   error // the file's own error (invalid entries), not a read error
}

// permissionsOf reads and parses the project's permissions.json.
func (s *Server) permissionsOf(p *brabo.Project) (permissionsFile, error) {
	scope, err := s.Rules.ScopeRoot(p)
	if err != nil {
		return permissionsFile{}, err
	}
	data, err := s.Rules.ReadPermissions(scope.Root)
	if err != nil {
		return permissionsFile{}, err
	}
	rules, perr := policy.Parse("permissions.json", data)
	return permissionsFile{scope: scope, data: data, rules: rules, err: perr}, nil
}

// putPermissions replaces permissions.json with the request body (the file
// itself). An invalid file is refused whole, naming every bad entry, and
// the file on disk is left as it was.
func (s *Server) putPermissions(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "changing permissions.json")
	if err != nil {
		return err
	}
	data, err := s.bodyText(w, r, brabo.MaxPermissionsBytes)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		// An empty file is valid, but an empty body is more often a
		// mistake than a wish to drop every deny rule.
		return &apiError{status: http.StatusBadRequest, code: brabo.CodeInvalidPermissions,
			msg: "permissions.json: the body is empty; send {} to empty the file"}
	}
	if err := s.Trust.WritePermissions(r.Context(), p, m, data); err != nil {
		var fe *policy.FileError
		if errors.As(err, &fe) {
			return &apiError{status: http.StatusBadRequest, code: brabo.CodeInvalidPermissions, msg: fe.Error(), detail: fe}
		}
		return err
	}
	rules, _ := policy.Parse("permissions.json", data)
	writeJSON(w, http.StatusOK, map[string]any{"content": string(data), "valid": true, "warnings": nonNil(rules.Warnings())})
	return nil
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "listing pull requests")
	if err != nil {
		return err
	}
	out, err := s.Actions.PRs(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"pulls": nonNil(out)})
	return nil
}
