package http

import (
	"net/http"
	"slices"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// The routes of execution: activating execution, the budget, the module
// map, the protected branches, an agent's stored instructions, and every
// project's container. Each calls the pipeline, which checks the role.

// activateExecution is POST …/activate (maintainer).
func (s *Server) activateExecution(w http.ResponseWriter, r *http.Request) error {
	m, err := s.projectMember(r, "activate execution")
	if err != nil {
		return err
	}
	act, err := s.Execution.ActivateExecution(r.Context(), r.PathValue("project"), m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, act)
	return nil
}

func (s *Server) getBudget(w http.ResponseWriter, r *http.Request) error {
	m, err := s.projectMember(r, "read the budget")
	if err != nil {
		return err
	}
	v, err := s.Execution.BudgetOf(r.Context(), r.PathValue("project"), m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// budgetInput is PUT …/budget's body: decimals as strings ("50.00").
type budgetInput struct {
	Limit       *brabo.Money `json:"limit"`
	InputPrice  brabo.Money  `json:"inputPricePerMTok"`
	OutputPrice brabo.Money  `json:"outputPricePerMTok"`
}

func (s *Server) putBudget(w http.ResponseWriter, r *http.Request) error {
	m, err := s.projectMember(r, "set the budget")
	if err != nil {
		return err
	}
	var in budgetInput
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if in.Limit == nil {
		return badRequest("limit is required: the budget's amount, a decimal such as \"50.00\"")
	}
	v, err := s.Execution.SetBudget(r.Context(), r.PathValue("project"), m, *in.Limit, in.InputPrice, in.OutputPrice)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) getModules(w http.ResponseWriter, r *http.Request) error {
	m, err := s.projectMember(r, "read the module map")
	if err != nil {
		return err
	}
	mm, err := s.Execution.ModuleMapOf(r.Context(), r.PathValue("project"), m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"modules": nonNil(mm.Modules), "minimum": mm.MinResources()})
	return nil
}

func (s *Server) putModules(w http.ResponseWriter, r *http.Request) error {
	m, err := s.projectMember(r, "set the module map")
	if err != nil {
		return err
	}
	var in struct {
		Modules []brabo.Module `json:"modules"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if in.Modules == nil {
		return badRequest("modules is required: a list of {name, resources: {cpus, memoryMb}} (an empty list clears the map)")
	}
	mm, err := s.Execution.SetModuleMap(r.Context(), r.PathValue("project"), m, in.Modules)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"modules": nonNil(mm.Modules), "minimum": mm.MinResources()})
	return nil
}

func (s *Server) listProtectedBranches(w http.ResponseWriter, r *http.Request) error {
	m, err := s.projectMember(r, "read the protected branches")
	if err != nil {
		return err
	}
	added, err := s.Execution.ProtectedBranchesOf(r.Context(), r.PathValue("project"), m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"builtIn": slices.Clone(policy.ProtectedBranches), "added": nonNil(added)})
	return nil
}

func (s *Server) getInstructions(w http.ResponseWriter, r *http.Request) error {
	m, err := s.projectMember(r, "read an agent's instructions")
	if err != nil {
		return err
	}
	in, err := s.Agents.AgentInstructionsOf(r.Context(), r.PathValue("project"), r.PathValue("agent"), m)
	if err != nil {
		return err
	}
	if in == nil {
		in = &brabo.AgentInstructions{AgentID: r.PathValue("agent")}
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

// listContainers is GET /v1/containers: the container of every project the
// member has a role in, with its lifecycle state.
func (s *Server) listContainers(w http.ResponseWriter, r *http.Request) error {
	m, err := callerOf(r).requireMember("list the projects' containers")
	if err != nil {
		return err
	}
	rows, err := s.Execution.ContainersOf(r.Context(), m)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"containers": rows})
	return nil
}

// projectMember is the calling member on a project route, checked before
// the body is read: an agent, or a member with no role in the project,
// gets 404, as on every route that is not theirs. The pipeline checks the
// role the operation needs.
func (s *Server) projectMember(r *http.Request, what string) (*brabo.Member, error) {
	_, m, err := s.memberProject(r, brabo.Developer, what)
	return m, err
}
