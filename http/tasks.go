package http

import (
	"errors"
	"net/http"

	"github.com/brabo-dev/brabo"
)

// createTask puts a task in the project's backlog for its dev agent.
func (s *Server) createTask(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "creating tasks")
	if err != nil {
		return err
	}
	var in struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	t, err := s.Projects.CreateTask(r.Context(), p.ID, in.Title, in.Description)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, t)
	return nil
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	out, err := s.Projects.Tasks(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": nonNil(out)})
	return nil
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, _, _, err := s.visibleTask(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// visibleTask loads the task the request names, with its project and the
// caller's role there. A task of a project the caller cannot see is 404,
// like a task that does not exist.
func (s *Server) visibleTask(r *http.Request) (*brabo.Task, *brabo.Project, brabo.Role, error) {
	t, err := s.Projects.Task(r.Context(), r.PathValue("task"))
	if errors.Is(err, brabo.ErrNotFound) {
		return nil, nil, "", notFound("task " + r.PathValue("task"))
	}
	if err != nil {
		return nil, nil, "", err
	}
	p, role, err := s.projectAccess(r.Context(), callerOf(r), t.ProjectID)
	var ae *apiError
	if errors.As(err, &ae) && ae.code == brabo.CodeNotFound {
		return nil, nil, "", notFound("task " + r.PathValue("task"))
	}
	return t, p, role, err
}
