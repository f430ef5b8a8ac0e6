package pipeline

import (
	"context"
	"os"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/progfind"
	"github.com/brabo-dev/brabo/policy"
)

// The server decides an action in one place: a proposal, the reason a
// pending card shows now (CurrentReason) and the web check page (Check)
// all call decide, so the three cannot disagree on the rules, the agent's
// autonomy and patterns, the protected table, the container floor or what
// a program name resolves to.

// situation is what one decision reads besides the action: the facts of
// the store and who proposes.
type situation struct {
	// facts are the project, the principal's role, the agent's autonomy
	// and patterns and the trusted permissions version (ProposalFacts).
	facts *brabo.ProposalFacts
	// agentID is the proposing agent, "" for a member.
	agentID string
	// protected are the project's protected branches beyond the built-in
	// ones (read for a git_merge only).
	protected []string
	// external is true when the proposing agent runs the action itself.
	external bool
	// record is true for a proposal: judging the file records what it
	// implies (judge). A decision for display records nothing but the
	// first use of a project older than trust.
	record bool
}

// decided is one decision with what it was made from.
type decided struct {
	brabo.Decision
	// Input is what Decide read.
	Input policy.Input
	// Trust says which permissions.json decided; nil when the project
	// folder is not valid.
	Trust *trustState
}

// decide decides an action of t with payload p as a proposal would.
func (s *Service) decide(ctx context.Context, t brabo.ActionType, p brabo.Payload, sit situation) (*decided, error) {
	in, st, fl, scopeErr, err := s.input(ctx, t, p, sit)
	if err != nil {
		return nil, err
	}
	d := policy.Decide(in)
	fl.applyFloor(&d)
	if st != nil && st.Held() {
		d.Reason += heldReason(&st.TrustState)
	}
	if scopeErr != nil && d.Policy == brabo.AutoApprove {
		d.Policy, d.Reason = brabo.RequireApproval, "scope: invalid project folder: "+scopeErr.Error()
	}
	return &decided{Decision: s.unsandboxed(t, d), Input: in, Trust: st}, nil
}

// input is the server's one builder of policy.Input: the rules brabo
// decides with (the file on disk, or the trusted version while the file
// waits for a maintainer), the scope root, the agent's autonomy and own
// patterns, the protected table (Service.Protect), the container floor and
// the programs the command's names resolve to. scopeErr says why the
// project folder is not valid; the Input then has no scope root, and
// Decide asks a human for what it cannot scope.
func (s *Service) input(ctx context.Context, t brabo.ActionType, p brabo.Payload, sit situation) (policy.Input, *trustState, floor, error, error) {
	project := sit.facts.Project
	scope, scopeErr := s.ScopeRoot(project)
	env := policy.Situation{
		Role: sit.facts.Role, Autonomy: policy.Autonomy{Specific: sit.facts.Specific, Wildcard: sit.facts.Wildcard},
		AgentAllow: s.agentRules(sit.agentID, sit.facts.AgentPatterns), Scope: scope,
		ExtraProtected: sit.protected, Protect: s.Protect, McpTools: project.McpTools,
	}
	// The container floor only where the container path exists
	// (containerfloor.go).
	var fl floor
	if t == brabo.Terminal && scopeErr == nil {
		fl = s.floorFor(ctx, project, scope.Root, sit.external)
	}
	env.ContainerRunning = fl.applies
	var st *trustState
	if scopeErr == nil {
		var err error
		if st, err = s.judge(ctx, project, scope.Root, sit.facts.Trust, sit.record); err != nil {
			return policy.Input{}, nil, floor{}, nil, err
		}
		env.Rules = st.use
		env.Resolve = s.resolver(project, scope.Root)
	} else {
		env.Scope.Root = ""
	}
	return policy.NewInput(t, p, env), st, fl, scopeErr, nil
}

// resolver resolves the program names of a terminal command where it will
// run, for Decide (policy.Input.Programs): the server's PATH, which the
// executor hands the command (progfind.SafePATH), with the folders
// progfind.AgentWritable lists and brabo's own paths as what the agent
// can write. A container project's command runs in its container, whose
// files the host cannot see: nil, and Decide reads a program named by its
// path conservatively.
func (s *Service) resolver(p *brabo.Project, root string) func([]string, string) map[string]policy.Program {
	if p == nil || p.Mode == brabo.ModeContainer || root == "" {
		return nil
	}
	return progfind.Resolver(os.Getenv("PATH"), progfind.AgentWritable(root, s.Protect.ServerPaths...))
}

// Check decides a terminal command of project p exactly as a proposal of
// it would be decided now (decide: the same rules, protected table,
// patterns, container floor and programs), and records nothing: nothing
// runs and no action is stored.
func (s *Service) Check(ctx context.Context, p *brabo.Project, req brabo.CheckRequest) (*brabo.CheckAnswer, error) {
	var facts *brabo.ProposalFacts
	agentID := ""
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		principal := ""
		if req.Agent != "" {
			agents, err := tx.Agents(ctx, p.ID)
			if err != nil {
				return err
			}
			for _, a := range agents {
				if a.ID == req.Agent || a.Name == req.Agent {
					agentID, principal = a.ID, a.PrincipalID
				}
			}
			if agentID == "" {
				return invalid("project %s has no agent %q", p.Slug, req.Agent)
			}
		}
		var err error
		if facts, err = tx.ProposalFacts(ctx, p.ID, principal, agentID, brabo.Terminal); err != nil {
			return err
		}
		if agentID == "" {
			facts.Role = brabo.Developer
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	d, err := s.decide(ctx, brabo.Terminal, brabo.Payload{Command: req.Command, Cwd: req.Cwd}, situation{facts: facts, agentID: agentID})
	if err != nil {
		return nil, err
	}
	return &brabo.CheckAnswer{Decision: d.Decision, Held: d.Trust != nil && d.Trust.Held(), FileErr: d.Input.Rules.Err()}, nil
}
