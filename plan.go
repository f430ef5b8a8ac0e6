package brabo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The payloads of the action types about parallel dev agents, carried in
// Payload.Extra (docs/engine.md): propose_execution_plan (the dev lead's
// plan: agents per module), parallelize (more agents on one module) and
// raise_max_parallel (a higher cap on dev agents working at once).

// ExecutionPlan is a propose_execution_plan's payload: how many dev agents
// work on each module, and why.
type ExecutionPlan struct {
	Plan string `json:"plan"`
	// Agents is how many agents per module the plan asks for.
	Agents map[string]int `json:"agents"`
}

// ParallelizeRequest is a parallelize's payload: Module should have Agents
// dev agents, which may take the project above its cap on parallel dev
// agents (the cap is raised by as much when a human approves).
type ParallelizeRequest struct {
	Module string `json:"module"`
	Agents int    `json:"agents"`
	Reason string `json:"reason,omitempty"`
}

// RaiseMaxParallelRequest is a raise_max_parallel's payload: the project's
// new cap on dev agents working at once, above the current one.
type RaiseMaxParallelRequest struct {
	MaxParallel int    `json:"maxParallel"`
	Reason      string `json:"reason,omitempty"`
}

// moduleRE is what a module name may be: lowercase letters, digits and
// dashes, not ending in -<number> (that suffix names a module's further
// agents: dev-api, dev-api-2, dev-api-3).
var moduleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$`) })

// CheckModule refuses a module name that cannot name dev agents.
func CheckModule(m string) error {
	if !moduleRE().MatchString(m) || strings.Contains(m, "--") {
		return fmt.Errorf("module %q: use lowercase letters, digits and dashes (at most 42)", m)
	}
	if i := strings.LastIndexByte(m, '-'); i >= 0 {
		if _, err := strconv.Atoi(m[i+1:]); err == nil {
			return fmt.Errorf("module %q: a module name may not end in -<number>, which names a module's further agents (dev-api-2)", m)
		}
	}
	return nil
}

// ModuleDevName is the name of a module's n-th dev agent: dev-<module> for
// the first, dev-<module>-<n> for the next ones.
func ModuleDevName(module string, n int) string {
	if n <= 1 {
		return "dev-" + module
	}
	return "dev-" + module + "-" + strconv.Itoa(n)
}

// decodeExtra decodes an action's Extra strictly into v: one JSON object
// with no field v does not name.
func decodeExtra(t ActionType, extra json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(extra)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("a %s action needs its fields in extra, a JSON object", t)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the extra of a %s action: %v", t, err)
	}
	if dec.More() {
		return fmt.Errorf("the extra of a %s action holds more than one JSON value", t)
	}
	return nil
}

// ParseExecutionPlan reads and checks a propose_execution_plan's Extra.
func ParseExecutionPlan(extra json.RawMessage) (ExecutionPlan, error) {
	var p ExecutionPlan
	if err := decodeExtra(ProposeExecutionPlan, extra, &p); err != nil {
		return p, err
	}
	if strings.TrimSpace(p.Plan) == "" {
		return p, fmt.Errorf("a propose_execution_plan action needs a plan (its reasons)")
	}
	if len(p.Agents) == 0 {
		return p, fmt.Errorf("a propose_execution_plan action needs agents: at least one module with its number of agents")
	}
	total := 0
	for _, m := range p.Modules() {
		if err := CheckModule(m); err != nil {
			return p, err
		}
		if n := p.Agents[m]; n < 1 || n > MaxMaxParallel {
			return p, fmt.Errorf("agents[%q] is %d: want 1 to %d", m, n, MaxMaxParallel)
		}
		total += p.Agents[m]
	}
	if total > MaxMaxParallel {
		return p, fmt.Errorf("the plan asks for %d agents: at most %d", total, MaxMaxParallel)
	}
	return p, nil
}

// Modules are the plan's modules, sorted.
func (p ExecutionPlan) Modules() []string {
	ms := make([]string, 0, len(p.Agents))
	for m := range p.Agents {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return ms
}

// ParseParallelize reads and checks a parallelize's Extra.
func ParseParallelize(extra json.RawMessage) (ParallelizeRequest, error) {
	var r ParallelizeRequest
	if err := decodeExtra(Parallelize, extra, &r); err != nil {
		return r, err
	}
	if err := CheckModule(r.Module); err != nil {
		return r, err
	}
	if r.Agents < 1 || r.Agents > MaxMaxParallel {
		return r, fmt.Errorf("a parallelize action's agents is %d: want 1 to %d (how many agents the module should have)", r.Agents, MaxMaxParallel)
	}
	return r, nil
}

// ParseRaiseMaxParallel reads and checks a raise_max_parallel's Extra.
func ParseRaiseMaxParallel(extra json.RawMessage) (RaiseMaxParallelRequest, error) {
	var r RaiseMaxParallelRequest
	if err := decodeExtra(RaiseMaxParallel, extra, &r); err != nil {
		return r, err
	}
	if r.MaxParallel < 1 || r.MaxParallel > MaxMaxParallel {
		return r, fmt.Errorf("a raise_max_parallel action's maxParallel is %d: want 1 to %d", r.MaxParallel, MaxMaxParallel)
	}
	return r, nil
}
