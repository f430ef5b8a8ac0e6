package http

import (
	"errors"
	"net/http"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/pipeline"
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
	if trimmed(in.Title) == "" {
		return badRequest("title is required")
	}
	now := time.Now().UTC()
	t := &brabo.Task{ID: pipeline.NewID("task"), ProjectID: p.ID, Title: in.Title, Description: in.Description,
		Status: brabo.TaskTodo, CreatedAt: now, UpdatedAt: now}
	if err := s.Store.Update(r.Context(), func(tx brabo.Tx) error { return tx.CreateTask(r.Context(), t) }); err != nil {
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
	var out []*brabo.Task
	err = s.Store.View(r.Context(), func(tx brabo.Tx) error {
		out, err = tx.Tasks(r.Context(), p.ID)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": nonNil(out)})
	return nil
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	var t *brabo.Task
	err := s.Store.View(r.Context(), func(tx brabo.Tx) error {
		var err error
		t, err = tx.Task(r.Context(), r.PathValue("task"))
		return err
	})
	if errors.Is(err, brabo.ErrNotFound) {
		return notFound("task " + r.PathValue("task"))
	}
	if err != nil {
		return err
	}
	if _, _, err := s.projectAccess(r.Context(), callerOf(r), t.ProjectID); err != nil {
		return notFound("task " + r.PathValue("task"))
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}
