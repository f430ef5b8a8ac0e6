package http

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/brabo-dev/brabo"
)

// agentSettingsView is the agents page's settings box: the project's wait
// cap and its cap on parallel dev agents, with the forms that change them.
type agentSettingsView struct {
	Project string
	// WaitCapMinutes is the project's own cap, 0 for the server's.
	WaitCapMinutes int
	MaxParallel    int
	// Working is how many of its tasks are in progress now.
	Working int
	CanEdit bool
	// Note says what the last change did (a raise proposed, settings
	// saved).
	Note string
}

func (s *Server) agentSettingsFor(ctx context.Context, projectID string, role brabo.Role) (agentSettingsView, error) {
	p, err := s.Projects.Project(ctx, projectID)
	if err != nil {
		return agentSettingsView{}, err
	}
	tasks, err := s.Projects.Tasks(ctx, projectID)
	if err != nil {
		return agentSettingsView{}, err
	}
	v := agentSettingsView{Project: p.ID, WaitCapMinutes: p.WaitCapSec / 60, MaxParallel: p.MaxParallel,
		CanEdit: role.AtLeast(brabo.Maintainer)}
	for _, t := range tasks {
		if t.Status == brabo.TaskInProgress {
			v.Working++
		}
	}
	return v, nil
}

// formInt reads a whole number from a form field, naming the field when
// it is not one.
func formInt(r *http.Request, name string) (int, error) {
	v := strings.TrimSpace(r.PostFormValue(name))
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, badRequest("%s %q: want a whole number", name, v)
	}
	return n, nil
}

// webAgentSettings is the settings box's Save: a maintainer sets the
// project's wait cap (minutes, 0 for the server's default) and lowers its
// cap on parallel dev agents, as PATCH /v1/projects/{p} does (a raise is
// refused with needs_approval: the box's Raise proposes it instead).
func (s *Server) webAgentSettings(w http.ResponseWriter, r *http.Request, v *viewer) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	if err := requireRole(role, brabo.Maintainer, "changing the project's agent settings"); err != nil {
		return err
	}
	minutes, err := formInt(r, "waitCapMinutes")
	if err != nil {
		return err
	}
	maxParallel, err := formInt(r, "maxParallel")
	if err != nil {
		return err
	}
	if minutes < 0 || minutes > brabo.MaxWaitCapSec/60 {
		return badRequest("waitCapMinutes %d: want 0 (the server's default) to %d", minutes, brabo.MaxWaitCapSec/60)
	}
	secs := minutes * 60
	in := agentSettings{WaitCapSec: &secs, MaxParallel: &maxParallel}
	if err := in.check(); err != nil {
		return err
	}
	if _, err := s.Projects.UpdateProject(r.Context(), p.ID, v.Member.ID,
		brabo.ProjectUpdate{WaitCapSec: in.WaitCapSec, MaxParallel: in.MaxParallel}); err != nil {
		return err
	}
	view, err := s.agentSettingsFor(r.Context(), p.ID, role)
	if err != nil {
		return err
	}
	view.Note = "Saved."
	s.render(w, http.StatusOK, "agent-settings", view)
	return nil
}

// webRaiseParallel is the settings box's Raise: it proposes
// raise_max_parallel as the clicking member, through the pipeline like any
// proposal (the cap on it means a human approves it in the queue, which
// may be the same maintainer).
func (s *Server) webRaiseParallel(w http.ResponseWriter, r *http.Request, v *viewer) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	n, err := formInt(r, "maxParallel")
	if err != nil {
		return err
	}
	extra, _ := json.Marshal(brabo.RaiseMaxParallelRequest{MaxParallel: n, Reason: strings.TrimSpace(r.PostFormValue("reason"))})
	a, err := s.Actions.Propose(r.Context(), brabo.ProposeRequest{ProjectID: p.ID, Actor: brabo.Actor{Member: v.Member},
		Type: brabo.RaiseMaxParallel, Payload: brabo.Payload{Extra: extra}})
	if err != nil {
		return err
	}
	view, err := s.agentSettingsFor(r.Context(), p.ID, role)
	if err != nil {
		return err
	}
	view.Note = fmt.Sprintf("raise_max_parallel to %d proposed (action %s, %s): decide it in the queue.", n, shortID(a.ID), a.Status)
	if a.Status == brabo.StatusDenied {
		view.Note = fmt.Sprintf("raise_max_parallel to %d was denied: %s", n, a.Reason)
	}
	s.render(w, http.StatusOK, "agent-settings", view)
	return nil
}
