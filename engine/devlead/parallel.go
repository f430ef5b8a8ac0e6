package devlead

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
)

// Events of the project's parallel dev agents.
const (
	// EventAgentsStarted: dev agents were made for modules (an approved
	// plan or parallelize, or the lead's parallelize within the cap);
	// the supervisor's manager starts their actors at its next scan.
	EventAgentsStarted = "dev.agents_started"
	// EventMaxParallelChanged: the project's cap on dev agents working at
	// once changed.
	EventMaxParallelChanged = "project.max_parallel_changed"
)

// ToolParallelize is the name of the lead's parallelize tool.
const ToolParallelize = "parallelize"

// Starter starts a project's planned dev agents within its cap on dev
// agents working at once (brabo.Project.MaxParallel), and changes that
// cap. Its Run… methods are the executor runners of
// propose_execution_plan, parallelize and raise_max_parallel; the lead's
// parallelize tool asks it first whether a request fits within the cap
// (WithinCap), in which case there is nothing to decide.
//
// Starting an agent is making it: an agent named dev-<module> (the
// module's first), dev-<module>-2, … (brabo.ModuleDevName) for the
// principal the action was proposed for, with no token (brabo runs it,
// nobody authenticates as it). The manager of the process holding its
// lease starts its actor within a scan, and the actor claims todo tasks
// while the project is under its cap (Tx.ClaimTaskWithin).
type Starter struct {
	Store brabo.Store
	Now   func() time.Time
}

func (s *Starter) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// devAgents counts the project's dev agents, per module, and their names.
type devAgents struct {
	total    int
	byModule map[string]int
	names    map[string]bool
}

func countDevAgents(ctx context.Context, tx brabo.Tx, projectID string) (devAgents, error) {
	d := devAgents{byModule: map[string]int{}, names: map[string]bool{}}
	ags, err := tx.Agents(ctx, projectID)
	if err != nil {
		return d, err
	}
	for _, a := range ags {
		d.names[a.Name] = true
		if m, ok := a.Module(); ok {
			d.total++
			d.byModule[m]++
		}
	}
	return d, nil
}

// start makes the agents want asks for beyond what each module has, one
// module at a time in name order, round after round, while the project has
// fewer than limit dev agents. It returns the names made and, per module,
// how many it could not make under the limit.
func (s *Starter) start(ctx context.Context, tx brabo.Tx, p *brabo.Project, principalID string, want map[string]int, limit int) (started []string, above map[string]int, err error) {
	d, err := countDevAgents(ctx, tx, p.ID)
	if err != nil {
		return nil, nil, err
	}
	modules := make([]string, 0, len(want))
	need := map[string]int{}
	for m, n := range want {
		if k := n - d.byModule[m]; k > 0 {
			need[m] = k
			modules = append(modules, m)
		}
	}
	sort.Strings(modules)
	now := s.now()
	for more := true; more; {
		more = false
		for _, m := range modules {
			if need[m] == 0 || d.total >= limit {
				continue
			}
			name := ""
			for n := 1; name == "" || d.names[name]; n++ {
				name = brabo.ModuleDevName(m, n)
			}
			id := brabo.NewID("agt")
			a := &brabo.Agent{ID: id, ProjectID: p.ID, Name: name, PrincipalID: principalID,
				// No token is ever issued: no hash of a token has this form.
				TokenHash: "started:" + id, CreatedAt: now.Add(time.Duration(len(started)) * time.Microsecond)}
			if err := tx.CreateAgent(ctx, a); err != nil {
				return nil, nil, fmt.Errorf("making the agent %s: %w", name, err)
			}
			d.names[name] = true
			d.total++
			need[m]--
			started = append(started, name)
			more = more || need[m] > 0
		}
		if d.total >= limit {
			break
		}
	}
	above = map[string]int{}
	for m, k := range need {
		if k > 0 {
			above[m] = k
		}
	}
	return started, above, nil
}

func (s *Starter) startedEvent(ctx context.Context, tx brabo.Tx, p *brabo.Project, actor, actionID string, started []string) error {
	if len(started) == 0 {
		return nil
	}
	return tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: EventAgentsStarted, ActorID: actor, ActionID: actionID,
		CreatedAt: s.now(), Payload: mustJSON(map[string]any{"agents": started, "maxParallel": p.MaxParallel})})
}

// RunPlan executes an approved propose_execution_plan: it starts the
// planned agents of each module within the project's cap, and says which
// ones the cap left out (the lead proposes parallelize for them).
func (s *Starter) RunPlan(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	plan, err := brabo.ParseExecutionPlan(req.Action.Payload.Extra)
	if err != nil {
		return nil, fmt.Errorf("propose_execution_plan: %v", err)
	}
	var (
		started []string
		above   map[string]int
		max     int
	)
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		p, err := tx.Project(ctx, req.Action.ProjectID)
		if err != nil {
			return err
		}
		max = p.MaxParallel
		if started, above, err = s.start(ctx, tx, p, req.Action.PrincipalID, plan.Agents, p.MaxParallel); err != nil {
			return err
		}
		return s.startedEvent(ctx, tx, p, brabo.SystemActor, req.Action.ID, started)
	})
	if err != nil {
		return nil, fmt.Errorf("propose_execution_plan: %w", err)
	}
	raw, _ := json.Marshal(plan.Agents)
	out := "the execution plan was approved: " + plan.Plan + "\n" + startedLine(started, max)
	detail := map[string]string{"agents": string(raw), "started": strings.Join(started, ","), "maxParallel": strconv.Itoa(max)}
	if len(above) > 0 {
		rawAbove, _ := json.Marshal(above)
		detail["aboveCap"] = string(rawAbove)
		out += "\nabove the cap, not started: " + aboveLine(above) +
			"; call parallelize {module, agents} for them: above the cap a human decides"
	}
	return &brabo.Result{Output: out, Detail: detail}, nil
}

// RunParallelize executes an approved parallelize: the module gets the
// agents asked for, and the project's cap is raised by as much as that
// takes it above.
func (s *Starter) RunParallelize(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	r, err := brabo.ParseParallelize(req.Action.Payload.Extra)
	if err != nil {
		return nil, fmt.Errorf("parallelize: %v", err)
	}
	var (
		started  []string
		from, to int
		had      int
	)
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		p, err := tx.Project(ctx, req.Action.ProjectID)
		if err != nil {
			return err
		}
		d, err := countDevAgents(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		had, from, to = d.byModule[r.Module], p.MaxParallel, p.MaxParallel
		if need := r.Agents - had; need > 0 && d.total+need > p.MaxParallel {
			to = d.total + need
			if err := s.setCap(ctx, tx, p, to, req.Action.ID); err != nil {
				return err
			}
		}
		if started, _, err = s.start(ctx, tx, p, req.Action.PrincipalID, map[string]int{r.Module: r.Agents}, to); err != nil {
			return err
		}
		return s.startedEvent(ctx, tx, p, brabo.SystemActor, req.Action.ID, started)
	})
	if err != nil {
		return nil, fmt.Errorf("parallelize: %w", err)
	}
	detail := map[string]string{"module": r.Module, "started": strings.Join(started, ","),
		"maxParallel": strconv.Itoa(to), "previousMaxParallel": strconv.Itoa(from)}
	if len(started) == 0 {
		return &brabo.Result{Output: fmt.Sprintf("module %s has %d dev agents already (%d asked for): nothing started", r.Module, had, r.Agents),
			Detail: detail}, nil
	}
	out := startedLine(started, to)
	if to != from {
		out = fmt.Sprintf("the cap on parallel dev agents was raised from %d to %d\n", from, to) + out
	}
	return &brabo.Result{Output: out, Detail: detail}, nil
}

// RunRaiseMaxParallel executes an approved raise_max_parallel. A value
// that is not above the current cap fails by name: lowering is a
// maintainer's setting, not an action.
func (s *Starter) RunRaiseMaxParallel(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	r, err := brabo.ParseRaiseMaxParallel(req.Action.Payload.Extra)
	if err != nil {
		return nil, fmt.Errorf("raise_max_parallel: %v", err)
	}
	var from int
	refused := false
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		p, err := tx.Project(ctx, req.Action.ProjectID)
		if err != nil {
			return err
		}
		from = p.MaxParallel
		if r.MaxParallel <= p.MaxParallel {
			refused = true
			return nil
		}
		return s.setCap(ctx, tx, p, r.MaxParallel, req.Action.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("raise_max_parallel: %w", err)
	}
	detail := map[string]string{"maxParallel": strconv.Itoa(max(from, r.MaxParallel)), "previousMaxParallel": strconv.Itoa(from)}
	if refused {
		return &brabo.Result{Detail: detail, Error: fmt.Sprintf(
			"not a raise: the cap on parallel dev agents is %d already, and %d is not above it (a maintainer lowers the cap in the project's settings)",
			from, r.MaxParallel)}, nil
	}
	return &brabo.Result{Output: fmt.Sprintf("the cap on parallel dev agents was raised from %d to %d", from, r.MaxParallel),
		Detail: detail}, nil
}

// setCap writes the project's new cap, with its event.
func (s *Starter) setCap(ctx context.Context, tx brabo.Tx, p *brabo.Project, to int, actionID string) error {
	from := p.MaxParallel
	if err := tx.SetProjectAgents(ctx, p.ID, to, p.WaitCapSec); err != nil {
		return err
	}
	p.MaxParallel = to
	return tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: EventMaxParallelChanged, ActorID: brabo.SystemActor,
		ActionID: actionID, CreatedAt: s.now(), Payload: mustJSON(map[string]any{"from": from, "to": to})})
}

// WithinCap starts, for the lead's parallelize, the agents the module
// lacks when the project stays within its cap with them: there is nothing
// to decide then, and handled is true with what was done. Above
// the cap it starts nothing and reports handled false: the call is
// proposed, and a human decides.
func (s *Starter) WithinCap(ctx context.Context, lead *brabo.Agent, r brabo.ParallelizeRequest) (out string, handled bool, err error) {
	var (
		started []string
		had     int
		max     int
	)
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		p, err := tx.Project(ctx, lead.ProjectID)
		if err != nil {
			return err
		}
		max = p.MaxParallel
		d, err := countDevAgents(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		had = d.byModule[r.Module]
		need := r.Agents - had
		if need <= 0 {
			handled = true
			return nil
		}
		if d.total+need > p.MaxParallel {
			return nil
		}
		handled = true
		if started, _, err = s.start(ctx, tx, p, lead.PrincipalID, map[string]int{r.Module: r.Agents}, p.MaxParallel); err != nil {
			return err
		}
		return s.startedEvent(ctx, tx, p, lead.ID, "", started)
	})
	if err != nil || !handled {
		return "", false, err
	}
	if len(started) == 0 {
		return fmt.Sprintf("module %s has %d dev agents already (%d asked for): nothing to start", r.Module, had, r.Agents), true, nil
	}
	return "within the cap, nothing to decide: " + startedLine(started, max), true, nil
}

func startedLine(started []string, max int) string {
	if len(started) == 0 {
		return fmt.Sprintf("no agent started (cap: %d parallel dev agents)", max)
	}
	return fmt.Sprintf("started %s (cap: %d parallel dev agents)", strings.Join(started, ", "), max)
}

func aboveLine(above map[string]int) string {
	ms := make([]string, 0, len(above))
	for m := range above {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s: %d", m, above[m])
	}
	return strings.Join(parts, ", ")
}

// ParallelizeTool is the lead's parallelize: more dev agents on one
// module. Within the project's cap the agents start at once and nothing
// is proposed (Starter.WithinCap); above it the call becomes a
// parallelize action, capped, so the turn suspends until a human decides.
// With a nil starter every call is proposed.
func ParallelizeTool(s *Starter, lead *brabo.Agent) toolloop.Tool {
	parse := func(args json.RawMessage) (brabo.ParallelizeRequest, error) {
		var a brabo.ParallelizeRequest
		if err := decodeStrict(args, &a); err != nil {
			return a, err
		}
		return brabo.ParseParallelize(args)
	}
	t := toolloop.Tool{
		Spec: model.Tool{
			Name: ToolParallelize,
			Description: "Ask for more dev agents on one module: agents is how many the module should have in all. " +
				"Within the project's cap on parallel dev agents they start at once; above it a human decides.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"module":{"type":"string","description":"the module"},` +
				`"agents":{"type":"integer","minimum":1,"description":"how many dev agents the module should have"},` +
				`"reason":{"type":"string","description":"why"}},` +
				`"required":["module","agents"],"additionalProperties":false}`),
		},
		Kind: toolloop.Pipeline,
		Action: func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
			r, err := parse(args)
			if err != nil {
				return "", brabo.Payload{}, err
			}
			extra, _ := json.Marshal(r)
			return brabo.Parallelize, brabo.Payload{Extra: extra}, nil
		},
	}
	if s != nil && lead != nil {
		t.Local = func(ctx context.Context, args json.RawMessage) (string, bool, error) {
			r, err := parse(args)
			if err != nil {
				return "", false, err
			}
			return s.WithinCap(ctx, lead, r)
		}
	}
	return t
}
