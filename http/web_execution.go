package http

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/brabo-dev/brabo"
)

// The web's side of execution: the project page's Execution section
// (Activate execution, the budget, the container's state) and the global
// /containers page, whose Stop and Remove propose container_stop and
// container_remove as the member who clicks (a human's click only, never an agent). Each button posts
// to the web's own routes (session and CSRF), which call the pipeline as
// the API does.

// executionSection is what the template "project-execution" reads.
type executionSection struct {
	ProjectID   string
	CanActivate bool
	CanBudget   bool
	Budget      *brabo.BudgetView
	Container   *brabo.ProjectContainer
	Message     string
	Error       string
}

func (s *Server) executionSectionFor(ctx context.Context, p *brabo.Project, role brabo.Role, m *brabo.Member) (executionSection, error) {
	sec := executionSection{ProjectID: p.ID, CanActivate: role.AtLeast(brabo.Maintainer), CanBudget: role.AtLeast(brabo.Owner)}
	b, err := s.Execution.BudgetOf(ctx, p.ID, m)
	if err != nil {
		return sec, err
	}
	sec.Budget = b
	rows, err := s.Execution.ContainersOf(ctx, m)
	if err != nil {
		return sec, err
	}
	sec.Container = &brabo.ProjectContainer{ProjectID: p.ID, Name: brabo.ContainerName(p)}
	for _, r := range rows {
		if r.Project.ID == p.ID {
			sec.Container = r.Container
		}
	}
	return sec, nil
}

// webActivate is the project page's "Activate execution" button.
func (s *Server) webActivate(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return s.webExecutionChange(w, r, v, func(p *brabo.Project) (string, error) {
		act, err := s.Execution.ActivateExecution(r.Context(), p.ID, v.Member)
		if err != nil {
			return "", err
		}
		if !act.Changed {
			return "Execution was active already: nothing changed.", nil
		}
		return fmt.Sprintf("Execution activated: %d seeded patterns added to permissions.json; git_commit: auto_approve for %d dev agent(s).",
			len(act.Patterns), len(act.Agents)), nil
	})
}

// webSetBudget is the project page's budget form (owner).
func (s *Server) webSetBudget(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return s.webExecutionChange(w, r, v, func(p *brabo.Project) (string, error) {
		var vals [3]brabo.Money
		for i, f := range []string{"limit", "inputPricePerMTok", "outputPricePerMTok"} {
			text := strings.TrimSpace(r.PostFormValue(f))
			if text == "" && i > 0 {
				continue
			}
			m, err := brabo.ParseMoney(text)
			if err != nil {
				return "", badRequest("%s: %v", f, err)
			}
			vals[i] = m
		}
		if _, err := s.Execution.SetBudget(r.Context(), p.ID, v.Member, vals[0], vals[1], vals[2]); err != nil {
			return "", err
		}
		return "The budget is set to " + vals[0].String() + ".", nil
	})
}

// webExecutionChange runs change and renders the Execution section as it
// is after it, with change's sentence or its refusal.
func (s *Server) webExecutionChange(w http.ResponseWriter, r *http.Request, v *viewer, change func(*brabo.Project) (string, error)) error {
	p, role, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	msg, cerr := change(p)
	sec, err := s.executionSectionFor(r.Context(), p, role, v.Member)
	if err != nil {
		return err
	}
	sec.Message = msg
	if cerr != nil {
		sec.Error = s.classify(r, cerr).msg
	}
	s.render(w, http.StatusOK, "project-execution", sec)
	return nil
}

// containerRow is one row of the /containers page.
type containerRow struct {
	brabo.ContainerRow
	CanAct, CanStop, CanRemove bool
	Message, Error             string
}

func rowFor(r brabo.ContainerRow) containerRow {
	st := r.Container.State
	live := st == brabo.ContainerRunning || st == brabo.ContainerProvisioning || st == brabo.ContainerFailed
	return containerRow{ContainerRow: r, CanAct: r.Role.AtLeast(brabo.Maintainer), CanStop: live,
		CanRemove: live || st == brabo.ContainerStopped}
}

// containersPage is GET /containers.
func (s *Server) containersPage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	rows, err := s.Execution.ContainersOf(r.Context(), v.Member)
	if err != nil {
		return err
	}
	out := make([]containerRow, 0, len(rows))
	for _, row := range rows {
		out = append(out, rowFor(row))
	}
	return s.renderPage(w, r, v, "Containers — brabo", "containers", map[string]any{"Rows": out})
}

// webContainerStop and webContainerRemove propose the action as the member
// who clicked; the row says what became of it.
func (s *Server) webContainerStop(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return s.webContainerAction(w, r, v, brabo.ContainerStop)
}

func (s *Server) webContainerRemove(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return s.webContainerAction(w, r, v, brabo.ContainerRemove)
}

func (s *Server) webContainerAction(w http.ResponseWriter, r *http.Request, v *viewer, t brabo.ActionType) error {
	p, _, err := s.projectAccess(r.Context(), callerOf(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	forExecution(w, t, brabo.Payload{})
	a, perr := s.Actions.Propose(r.Context(), brabo.ProposeRequest{ProjectID: p.ID, Actor: brabo.Actor{Member: v.Member}, Type: t})
	rows, err := s.Execution.ContainersOf(r.Context(), v.Member)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if row.Project.ID != p.ID {
			continue
		}
		out := rowFor(row)
		switch {
		case perr != nil:
			out.Error = s.classify(r, perr).msg
		case a.Status == brabo.StatusPending:
			out.Message = fmt.Sprintf("%s proposed (action %s): it waits in the queue for a maintainer's decision.", t, shortID(a.ID))
		case a.Status == brabo.StatusDenied:
			out.Error = fmt.Sprintf("%s denied: %s", t, a.Reason)
		case a.Status == brabo.StatusFailed:
			out.Error = fmt.Sprintf("%s failed: %s", t, a.Result.Error)
		default:
			out.Message = fmt.Sprintf("%s %s (action %s).", t, a.Status, shortID(a.ID))
		}
		answerWithin(w)
		s.render(w, http.StatusOK, "container-row", out)
		return nil
	}
	return notFound("project " + p.ID)
}
