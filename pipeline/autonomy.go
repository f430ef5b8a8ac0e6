package pipeline

import (
	"context"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// What an agent may do without asking changes in one place: every change
// of an agent_autonomy rule or of the agent's own patterns goes through
// these helpers, inside the caller's transaction, so that each records
// autonomy.changed with who made it.

// putAutonomy writes one agent_autonomy rule inside tx and, when it changes
// the rule, records autonomy.changed with actorID as the actor, via as
// what made the change and the actions it came from. It reports whether
// the rule changed: writing the mode a rule has already records nothing.
func (s *Service) putAutonomy(ctx context.Context, tx brabo.Tx, projectID, actorID string, rule brabo.AgentAutonomy, via string, actionIDs ...string) (bool, error) {
	current, err := tx.Autonomy(ctx, rule.AgentID)
	if err != nil {
		return false, err
	}
	var previous brabo.Policy
	for _, r := range current {
		if r.ActionType == rule.ActionType {
			previous = r.Mode
		}
	}
	if previous == rule.Mode {
		return false, nil
	}
	if err := tx.PutAutonomy(ctx, rule); err != nil {
		return false, err
	}
	return true, s.autonomyChanged(ctx, tx, projectID, actorID, brabo.AutonomyChange{AgentID: rule.AgentID, Via: via,
		ActionType: rule.ActionType, Mode: rule.Mode, PreviousMode: previous, ActionIDs: actionIDs})
}

// addAgentPatterns records the patterns the agent does not have yet as its
// own, and autonomy.changed when it added any; it returns those it added.
func (s *Service) addAgentPatterns(ctx context.Context, tx brabo.Tx, projectID, actorID, agentID string, patterns, actionIDs []string, via string) ([]string, error) {
	var added []string
	actionID := ""
	if len(actionIDs) == 1 {
		actionID = actionIDs[0]
	}
	now := s.now()
	for _, p := range patterns {
		ok, err := tx.AddAgentPattern(ctx, &brabo.AgentPattern{AgentID: agentID, Pattern: p, ActionID: actionID, CreatedBy: actorID, CreatedAt: now})
		if err != nil {
			return nil, err
		}
		if ok {
			added = append(added, p)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	return added, s.autonomyChanged(ctx, tx, projectID, actorID, brabo.AutonomyChange{AgentID: agentID, Via: via,
		Added: added, ActionIDs: actionIDs})
}

// removeAgentPattern removes one of the agent's own patterns inside tx and
// records autonomy.changed; it reports false (and records nothing) when
// the agent does not have it.
func (s *Service) removeAgentPattern(ctx context.Context, tx brabo.Tx, projectID, actorID, agentID, pattern, via string) (bool, error) {
	ok, err := tx.DeleteAgentPattern(ctx, agentID, pattern)
	if err != nil || !ok {
		return false, err
	}
	return true, s.autonomyChanged(ctx, tx, projectID, actorID, brabo.AutonomyChange{AgentID: agentID, Via: via,
		Removed: []string{pattern}})
}

func (s *Service) autonomyChanged(ctx context.Context, tx brabo.Tx, projectID, actorID string, c brabo.AutonomyChange) error {
	e := &brabo.Event{ProjectID: projectID, Type: brabo.EventAutonomyChanged,
		ActorID: actorID, Payload: mustJSON(c), CreatedAt: s.now()}
	if len(c.ActionIDs) == 1 {
		e.ActionID = c.ActionIDs[0] // a click: the change shows with its action
	}
	return tx.AppendEvent(ctx, e)
}

// agentRules compiles an agent's own patterns for policy.Input.AgentAllow;
// nil when it has none. A pattern that no longer compiles (the grammar
// tightened since it was recorded) is left out and logged, never taken
// as a reason to drop the others or to fail the proposal: leaving one
// out only asks more.
func (s *Service) agentRules(agentID string, patterns []string) *policy.Rules {
	if len(patterns) == 0 {
		return nil
	}
	const name = "agent patterns"
	r, err := policy.NewRules(name, patterns, nil, nil)
	if err == nil {
		return r
	}
	var good, bad []string
	for _, p := range patterns {
		if _, err := policy.NewRules(name, []string{p}, nil, nil); err != nil {
			bad = append(bad, p)
		} else {
			good = append(good, p)
		}
	}
	s.log().Warn("agent patterns that no longer compile are not applied", "agent", agentID, "patterns", strings.Join(bad, ", "))
	r, _ = policy.NewRules(name, good, nil, nil)
	return r
}
