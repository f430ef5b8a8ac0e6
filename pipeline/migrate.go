package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// Before the agents' own patterns existed, an always-allow click on a module dev agent's terminal
// action wrote agent_autonomy terminal: auto_approve, which frees every
// later command of the agent. MigrateClickAutonomy turns each such rule
// into the units the clicks would record today, as the agent's own
// patterns.

// clickHistory is what a project's log says of one agent's terminal rule:
// the actions whose click wrote it, after the last recorded change of it.
type clickHistory struct {
	actionIDs []string
}

// MigrateClickAutonomy replaces every agent_autonomy terminal: auto_approve
// rule that an always-allow click wrote (a permission.granted event of the
// old shape names the agent and the type, and no recorded change of the
// rule came after it) by the patterns policy.AlwaysAllow derives from the
// clicked actions' commands, recorded as the agent's own, and records
// autonomy.changed (actor system, via migration). A rule a maintainer set
// (no such click, or a change recorded after it) stays. It is idempotent
// and safe to run from several processes at once: the rule's removal is
// conditional, and only the process that removed it records anything. It
// returns how many rules it migrated.
func (s *Service) MigrateClickAutonomy(ctx context.Context) (int, error) {
	var projects []*brabo.Project
	if err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		projects, err = tx.Projects(ctx)
		return err
	}); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range projects {
		k, err := s.migrateProject(ctx, p)
		if err != nil {
			return n, fmt.Errorf("project %s: %w", p.Slug, err)
		}
		n += k
	}
	return n, nil
}

func (s *Service) migrateProject(ctx context.Context, p *brabo.Project) (int, error) {
	var candidates []*brabo.Agent
	clicks := map[string]*clickHistory{}
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		agents, err := tx.Agents(ctx, p.ID)
		if err != nil {
			return err
		}
		for _, a := range agents {
			rules, err := tx.Autonomy(ctx, a.ID)
			if err != nil {
				return err
			}
			if slices.Contains(rules, brabo.AgentAutonomy{AgentID: a.ID, ActionType: brabo.Terminal, Mode: brabo.AutoApprove}) {
				candidates = append(candidates, a)
			}
		}
		if len(candidates) == 0 {
			return nil // the log is read only for a project that has such a rule
		}
		return readClicks(ctx, tx, p.ID, clicks)
	})
	if err != nil || len(candidates) == 0 {
		return 0, err
	}
	n := 0
	for _, a := range candidates {
		h := clicks[a.ID]
		if h == nil || len(h.actionIDs) == 0 {
			continue // set by a maintainer: it stays
		}
		done, err := s.migrateAgent(ctx, p, a, h.actionIDs)
		if err != nil {
			return n, fmt.Errorf("agent %s: %w", a.Name, err)
		}
		if done {
			n++
		}
	}
	return n, nil
}

// readClicks reads, per agent, the clicks that wrote its terminal rule: the
// old-shape permission.granted events (agentId, actionType terminal, no
// patterns) that no autonomy.changed of the agent's terminal rule follows.
func readClicks(ctx context.Context, tx brabo.Tx, projectID string, out map[string]*clickHistory) error {
	type granted struct {
		AgentID    string           `json:"agentId"`
		ActionType brabo.ActionType `json:"actionType"`
		Patterns   []string         `json:"patterns"`
	}
	lastChange := map[string]int64{}
	err := eachEventOf(ctx, tx, projectID, brabo.EventAutonomyChanged, func(e brabo.Event) {
		var c brabo.AutonomyChange
		if json.Unmarshal(e.Payload, &c) == nil && c.ActionType == brabo.Terminal {
			lastChange[c.AgentID] = e.Seq
		}
	})
	if err != nil {
		return err
	}
	return eachEventOf(ctx, tx, projectID, brabo.EventPermissionGranted, func(e brabo.Event) {
		var g granted
		if json.Unmarshal(e.Payload, &g) != nil || g.AgentID == "" || g.ActionType != brabo.Terminal || g.Patterns != nil {
			return
		}
		if e.Seq < lastChange[g.AgentID] || e.ActionID == "" {
			return
		}
		h := out[g.AgentID]
		if h == nil {
			h = &clickHistory{}
			out[g.AgentID] = h
		}
		h.actionIDs = append(h.actionIDs, e.ActionID)
	})
}

func eachEventOf(ctx context.Context, tx brabo.Tx, projectID, typ string, fn func(brabo.Event)) error {
	for after := int64(0); ; {
		evs, err := tx.EventsOfType(ctx, projectID, typ, after, 1000)
		if err != nil {
			return err
		}
		for _, e := range evs {
			after = e.Seq
			fn(e)
		}
		if len(evs) < 1000 {
			return nil
		}
	}
}

// migrateAgent replaces one agent's blanket terminal rule by the units of
// the clicked actions, in one transaction. It reports false when the rule
// was gone or changed by then (another process migrated it).
func (s *Service) migrateAgent(ctx context.Context, p *brabo.Project, a *brabo.Agent, actionIDs []string) (bool, error) {
	root := ""
	if sc, err := s.ScopeRoot(p); err == nil {
		root = sc.Root // a terminal unit does not depend on it
	}
	done := false
	var added, notes []string
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		done, added, notes = false, nil, nil
		var units []string
		for _, id := range actionIDs {
			act, err := tx.Action(ctx, id)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: %v", id, err))
				continue
			}
			if act.Type != brabo.Terminal {
				continue
			}
			got, err := policy.AlwaysAllow(policy.Click{Type: brabo.Terminal, Command: act.Payload.Command, Root: root})
			if err != nil {
				// Today's rules would record nothing for it (an
				// interpreter's inline code, an external effect): its
				// next run asks.
				notes = append(notes, fmt.Sprintf("%s %q: %v", id, clip(act.Payload.Command, 120), err))
				continue
			}
			for _, u := range got {
				if !slices.Contains(units, u) {
					units = append(units, u)
				}
			}
		}
		removed, err := tx.DeleteAutonomy(ctx, brabo.AgentAutonomy{AgentID: a.ID, ActionType: brabo.Terminal, Mode: brabo.AutoApprove})
		if err != nil || !removed {
			return err
		}
		for _, u := range units {
			ok, err := tx.AddAgentPattern(ctx, &brabo.AgentPattern{AgentID: a.ID, Pattern: u, ActionID: actionIDs[len(actionIDs)-1],
				CreatedBy: brabo.SystemActor, CreatedAt: s.now()})
			if err != nil {
				return err
			}
			if ok {
				added = append(added, u)
			}
		}
		done = true
		return s.autonomyChanged(ctx, tx, p.ID, brabo.SystemActor, brabo.AutonomyChange{AgentID: a.ID, Via: brabo.ViaMigration,
			ActionType: brabo.Terminal, PreviousMode: brabo.AutoApprove, Added: added, ActionIDs: actionIDs,
			Note: strings.Join(notes, "; ")})
	})
	if err == nil && done {
		s.log().Info("a click-written terminal: auto_approve became the agent's own patterns",
			"project", p.Slug, "agent", a.Name, "patterns", strings.Join(added, ", "), "notes", strings.Join(notes, "; "))
	}
	return done, err
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
