package pipeline

import (
	"context"
	"errors"

	"github.com/brabo-dev/brabo"
)

// Agents: creating one, reading its autonomy, patterns and runs, and the
// changes of its autonomy and token, each in its own transaction.

// CreateAgent creates an agent of the project, with principalID as the
// human it acts for, and returns its token (shown once). Its name follows
// the slug rule (dev-<module> for a module dev agent); a hook agent may
// not take the name of one of brabo's own agents, which brabo would start
// an actor for.
func (s *Service) CreateAgent(ctx context.Context, projectID, principalID, name, kind string) (*brabo.Agent, string, error) {
	if !brabo.ValidSlug(name) {
		return nil, "", invalid("name %q: use lowercase letters, digits and dashes (dev-<module> for a module dev agent)", name)
	}
	if kind != "" && kind != brabo.AgentKindHook {
		return nil, "", invalid("kind %q: the only kind is %q (an agent that runs its tools itself through brabo hook)", kind, brabo.AgentKindHook)
	}
	token := brabo.NewToken()
	a := &brabo.Agent{ID: brabo.NewID("agt"), ProjectID: projectID, Name: name, PrincipalID: principalID, Kind: kind,
		TokenHash: brabo.HashToken(token), CreatedAt: s.now()}
	if a.IsHook() && (a.IsModuleDev() || a.IsQASubAgent() || a.IsDevLead()) {
		return nil, "", invalid("name %q is one of brabo's own agents (dev-…, qa-…, dev-lead); name a hook agent after its tool (claude, codex, gemini)", name)
	}
	err := s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateAgent(ctx, a) })
	if errors.Is(err, brabo.ErrConflict) {
		return nil, "", brabo.Errorf(brabo.CodeConflict, "an agent named %q exists in this project", name)
	}
	if err != nil {
		return nil, "", err
	}
	return a, token, nil
}

// Agent reads one agent.
func (s *Service) Agent(ctx context.Context, id string) (*brabo.Agent, error) {
	return view(ctx, s, func(tx brabo.Tx) (*brabo.Agent, error) { return tx.Agent(ctx, id) })
}

// Agents lists the project's agents.
func (s *Service) Agents(ctx context.Context, projectID string) ([]*brabo.Agent, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]*brabo.Agent, error) { return tx.Agents(ctx, projectID) })
}

// Autonomy lists the agent's agent_autonomy rules.
func (s *Service) Autonomy(ctx context.Context, agentID string) ([]brabo.AgentAutonomy, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]brabo.AgentAutonomy, error) { return tx.Autonomy(ctx, agentID) })
}

// AgentPatterns lists the agent's own allow patterns.
func (s *Service) AgentPatterns(ctx context.Context, agentID string) ([]brabo.AgentPattern, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]brabo.AgentPattern, error) { return tx.AgentPatterns(ctx, agentID) })
}

// WaitingRun reads the actor's latest waiting run; brabo.ErrNotFound when
// none waits.
func (s *Service) WaitingRun(ctx context.Context, actorKey string) (*brabo.Run, error) {
	return view(ctx, s, func(tx brabo.Tx) (*brabo.Run, error) { return tx.WaitingRun(ctx, actorKey) })
}

// PutAutonomy writes one agent_autonomy rule in its own transaction and,
// when it changes the rule, records autonomy.changed with actorID as the
// actor and via as what made the change. It reports whether the rule
// changed: writing the mode a rule has already records nothing.
func (s *Service) PutAutonomy(ctx context.Context, projectID, actorID string, rule brabo.AgentAutonomy, via string) (bool, error) {
	var changed bool
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		changed, err = s.putAutonomy(ctx, tx, projectID, actorID, rule, via)
		return err
	})
	return changed, err
}

// RemoveAgentPattern removes one of the agent's own patterns in its own
// transaction and records autonomy.changed; it reports false (and records
// nothing) when the agent does not have it.
func (s *Service) RemoveAgentPattern(ctx context.Context, projectID, actorID, agentID, pattern, via string) (bool, error) {
	var ok bool
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		ok, err = s.removeAgentPattern(ctx, tx, projectID, actorID, agentID, pattern, via)
		return err
	})
	return ok, err
}

// RevokeAgentToken revokes the agent's token: the agent stays, with its
// actions; its token opens nothing.
func (s *Service) RevokeAgentToken(ctx context.Context, agentID string) error {
	return s.Store.Update(ctx, func(tx brabo.Tx) error {
		_, err := tx.RevokeAgentToken(ctx, agentID, s.now())
		return err
	})
}

// RotateAgentToken gives the agent a new token, which replaces the old one
// and lifts a revocation, and returns it (shown once).
func (s *Service) RotateAgentToken(ctx context.Context, agentID string) (string, error) {
	token := brabo.NewToken()
	err := s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.SetAgentToken(ctx, agentID, brabo.HashToken(token)) })
	if err != nil {
		return "", err
	}
	return token, nil
}
