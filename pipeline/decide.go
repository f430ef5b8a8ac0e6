package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// Outcome says what a human decision did (brabo.Outcome).
type Outcome = brabo.Outcome

// Outcomes of Approve and ApproveAlways.
const (
	OutcomeApproved        = brabo.OutcomeApproved
	OutcomeAlreadyApproved = brabo.OutcomeAlreadyApproved
)

// Decided is the answer to a human decision (brabo.Decided).
type Decided = brabo.Decided

// roleToApprove is the least role approving a needs: the role its
// decision requires (DESIGN §9, "Effective role"). Denying needs only the
// type's minimum (roleToDeny).
func roleToApprove(a *brabo.ProposedAction) brabo.Role {
	return brabo.EffectiveRole(a.Type, a.Decision)
}

func roleToDeny(a *brabo.ProposedAction) brabo.Role { return a.Type.MinRole() }

// load reads an action, its project and the decider's role, and refuses a
// decider below the role need says the decision needs. A member with no
// role in the project gets not_found: other projects' actions are not even
// visible.
func (s *Service) load(ctx context.Context, actionID string, m *brabo.Member, need func(*brabo.ProposedAction) brabo.Role) (*brabo.ProposedAction, *brabo.Project, error) {
	var a *brabo.ProposedAction
	var p *brabo.Project
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if a, err = tx.Action(ctx, actionID); err != nil {
			return err
		}
		role, err := tx.Role(ctx, a.ProjectID, m.ID)
		if err != nil {
			return err
		}
		if role == "" {
			return fmt.Errorf("action %s: %w", actionID, brabo.ErrNotFound)
		}
		if min := need(a); !role.AtLeast(min) {
			return forbidden("deciding this %s needs the role %s; you are %s", a.Type, min, role)
		}
		p, err = tx.Project(ctx, a.ProjectID)
		return err
	})
	return a, p, err
}

// claim moves a pending action to approved for member m and records
// proposed_action.approved, inside tx. It reports false when the action had
// already left pending by an approval; a denied action is
// action_already_denied.
//
// pv, when set, is the card the approval binds (checkRevision): stored as
// the action's card, and handed to the executor.
func (s *Service) claim(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, m *brabo.Member, pv *brabo.Preview) (bool, error) {
	now := s.now()
	ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusPending},
		brabo.ActionUpdate{Status: brabo.StatusApproved, DecidedBy: m.ID, DecidedAt: now, Preview: pv})
	if err != nil {
		return false, err
	}
	if !ok {
		cur, err := tx.Action(ctx, a.ID)
		if err != nil {
			return false, err
		}
		if cur.Status == brabo.StatusDenied {
			return false, brabo.Errorf(brabo.CodeActionAlreadyDenied, "action %s was denied: %s", a.ID, cur.Reason)
		}
		if cur.Status == brabo.StatusAbandoned {
			return false, errAbandoned(cur)
		}
		*a = *cur
		return false, nil
	}
	a.Status, a.DecidedBy, a.DecidedAt = brabo.StatusApproved, m.ID, now
	approved := map[string]any{"type": a.Type}
	if pv != nil {
		a.Preview = pv
		approved["revision"] = pv.Revision
	}
	if err := s.claimRun(ctx, tx, a); err != nil {
		return false, err
	}
	return true, tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventActionApproved,
		ActorID: m.ID, ActionID: a.ID, Payload: mustJSON(approved), CreatedAt: now})
}

// Approve approves a pending action and executes it with the decider's
// credential. revision is the revision of the card the decider saw: one
// that is not the card's now, or none, is 409 card_changed and approves
// nothing (checkRevision). Approving an action already approved is
// success with outcome already_approved (it does not run again); a denied
// one is 409 action_already_denied.
func (s *Service) Approve(ctx context.Context, actionID string, m *brabo.Member, revision string) (*Decided, error) {
	a, p, err := s.load(ctx, actionID, m, roleToApprove)
	if err != nil {
		return nil, err
	}
	if err := s.expireWait(ctx, a); err != nil {
		return nil, err
	}
	var bound *brabo.Preview
	if a.Status == brabo.StatusPending {
		if bound, err = s.checkRevision(ctx, a, m, revision); err != nil {
			return nil, err
		}
	}
	var pr *brabo.PullRequest
	won := false
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		if a.Type == brabo.GitMerge && a.Status == brabo.StatusPending {
			// Another proposal merged this PR: 409, and this one stays pending.
			if pr, err = s.checkMerge(ctx, tx, a.ProjectID, a.Payload.PR, a.ID); err != nil {
				return err
			}
		}
		won, err = s.claim(ctx, tx, a, m, bound)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !won {
		return &Decided{Action: a, Outcome: OutcomeAlreadyApproved}, nil
	}
	if a.External() {
		s.notify(brabo.NoticeDecided, a)
		return &Decided{Action: a, Outcome: OutcomeApproved}, nil // its agent runs it
	}
	a, err = s.execute(ctx, a, p, m, brabo.StatusApproved, pr)
	if err != nil {
		return nil, err
	}
	s.notify(brabo.NoticeDecided, a)
	return &Decided{Action: a, Outcome: OutcomeApproved}, nil
}

// Deny refuses a pending action with a reason the agent receives in place of
// the result.
func (s *Service) Deny(ctx context.Context, actionID string, m *brabo.Member, reason string) (*brabo.ProposedAction, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, invalid("a denial needs a reason: the agent reads it in place of the result")
	}
	a, _, err := s.load(ctx, actionID, m, roleToDeny)
	if err != nil {
		return nil, err
	}
	if err := s.expireWait(ctx, a); err != nil {
		return nil, err
	}
	now := s.now()
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusPending},
			brabo.ActionUpdate{Status: brabo.StatusDenied, Reason: reason, DecidedBy: m.ID, DecidedAt: now, SettledAt: now})
		if err != nil {
			return err
		}
		if !ok {
			cur, err := tx.Action(ctx, a.ID)
			if err != nil {
				return err
			}
			if cur.Status == brabo.StatusDenied {
				return brabo.Errorf(brabo.CodeActionAlreadyDenied, "action %s was already denied", a.ID)
			}
			if cur.Status == brabo.StatusAbandoned {
				return errAbandoned(cur)
			}
			return brabo.Errorf(brabo.CodeAlreadyApproved, "action %s is %s; it can no longer be denied", a.ID, cur.Status)
		}
		if err := tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventActionDenied,
			ActorID: m.ID, ActionID: a.ID, Payload: mustJSON(map[string]any{"reason": reason}), CreatedAt: now}); err != nil {
			return err
		}
		if a.Type == brabo.PrOpen {
			// Not opening the PR is a user decision, not a failure.
			if err := tx.Enqueue(ctx, &brabo.OutboxMessage{ProjectID: a.ProjectID, Topic: brabo.TopicPRSettled,
				ActorKey: actorKey(a), ActionID: a.ID, Payload: mustJSON(map[string]any{"actionId": a.ID, "opened": false, "reason": reason})}); err != nil {
				return err
			}
		}
		return s.enqueueSettled(ctx, tx, a, brabo.StatusDenied, nil, reason)
	})
	if err != nil {
		return nil, err
	}
	a.Status, a.Reason, a.DecidedBy, a.DecidedAt, a.SettledAt = brabo.StatusDenied, reason, m.ID, now, now
	s.notify(brabo.NoticeDecided, a)
	return a, nil
}

// AlwaysAllowPreview returns what an always-allow click on the action would
// record, without recording anything: the missing patterns (of the file,
// or of a module dev agent's own for its terminal action), or the
// agent_autonomy rule for a module dev agent's action of another type.
func (s *Service) AlwaysAllowPreview(ctx context.Context, actionID string, m *brabo.Member) (*Decided, error) {
	a, p, err := s.load(ctx, actionID, m, roleToApprove)
	if err != nil {
		return nil, err
	}
	var plan *alwaysPlan
	if err := s.Store.View(ctx, func(tx brabo.Tx) error {
		plan, err = s.planAlwaysAllow(ctx, tx, a, p, m)
		return err
	}); err != nil {
		return nil, err
	}
	return plan.decided(a), nil
}

// alwaysPlan is what a click records: patterns for the file, patterns of
// the agent's own (agentID set), or a type-level autonomy rule.
type alwaysPlan struct {
	patterns []string
	agentID  string
	autonomy *brabo.AgentAutonomy
	file     string
}

func (p *alwaysPlan) decided(a *brabo.ProposedAction) *Decided {
	d := &Decided{Action: a, Autonomy: p.autonomy, AgentID: p.agentID}
	if p.agentID != "" {
		d.AgentPatterns = p.patterns
	} else {
		d.Patterns = p.patterns
	}
	return d
}

func (s *Service) planAlwaysAllow(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, p *brabo.Project, m *brabo.Member) (*alwaysPlan, error) {
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	// The caps come first, even for an action already approved.
	patterns, err := policy.AlwaysAllow(policy.Click{Type: a.Type, Command: a.Payload.Command, Path: a.Payload.Path, Root: scope.Root})
	if err != nil {
		return nil, err
	}
	plan := &alwaysPlan{}
	if a.ActorKind == "agent" {
		agent, err := tx.Agent(ctx, a.ActorID)
		if err != nil {
			return nil, err
		}
		if agent.IsModuleDev() && a.Type == brabo.Terminal {
			// The clicked unit, for this agent alone: a blanket
			// terminal rule would free every later command of the agent
			// (ADR 0052, "would free up ANY command").
			have, err := tx.AgentPatterns(ctx, agent.ID)
			if err != nil {
				return nil, err
			}
			plan.agentID = agent.ID
			for _, pat := range patterns {
				if !slices.ContainsFunc(have, func(h brabo.AgentPattern) bool { return h.Pattern == pat }) {
					plan.patterns = append(plan.patterns, pat)
				}
			}
			return plan, nil
		}
		if agent.IsModuleDev() {
			// A rule for a whole type frees every later action of that
			// type: only a maintainer writes one, as PUT …/autonomy
			// needs (DESIGN §9, "Effective role").
			role, err := tx.Role(ctx, p.ID, m.ID)
			if err != nil {
				return nil, err
			}
			if !role.AtLeast(brabo.Maintainer) {
				return nil, forbidden("always allow for %s writes agent_autonomy %s: auto_approve, which needs the role maintainer; you are %s", agent.Name, a.Type, role)
			}
			plan.autonomy = &brabo.AgentAutonomy{AgentID: agent.ID, ActionType: a.Type, Mode: brabo.AutoApprove}
			return plan, nil
		}
	}
	plan.file = permissionsPath(scope.Root)
	data, err := readPermissions(plan.file)
	if err != nil {
		return nil, err
	}
	_, plan.patterns, err = policy.AppendAllow(data, patterns)
	if err != nil {
		return nil, brabo.Errorf(brabo.CodeInvalidPermissions, "%s", err.Error())
	}
	return plan, nil
}

// ApproveAlways approves the action and records what lets the like of it
// run without asking (DESIGN §6.3), in one transaction: the approval, the
// patterns (or agent_autonomy), and permission.granted when something was
// recorded. A file write that fails undoes the approval. An action already
// approved is success with outcome already_approved, recording only what
// is missing; a denied one is 409 action_already_denied and writes nothing.
// revision is as Approve's.
func (s *Service) ApproveAlways(ctx context.Context, actionID string, m *brabo.Member, revision string) (*Decided, error) {
	a, p, err := s.load(ctx, actionID, m, roleToApprove)
	if err != nil {
		return nil, err
	}
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	if _, err := policy.AlwaysAllow(policy.Click{Type: a.Type, Command: a.Payload.Command, Path: a.Payload.Path, Root: scope.Root}); err != nil {
		return nil, err
	}
	if a.Status == brabo.StatusDenied {
		return nil, brabo.Errorf(brabo.CodeActionAlreadyDenied, "action %s was denied: %s", a.ID, a.Reason)
	}
	var bound *brabo.Preview
	if a.Status == brabo.StatusPending {
		if bound, err = s.checkRevision(ctx, a, m, revision); err != nil {
			return nil, err
		}
	}
	// The file's lock is held across the transaction, so that two clicks
	// never both read the file before either writes it.
	unlock := s.lockFile(permissionsPath(scope.Root))
	won := false
	var plan *alwaysPlan
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		if won, err = s.claim(ctx, tx, a, m, bound); err != nil {
			return err
		}
		if plan, err = s.planAlwaysAllow(ctx, tx, a, p, m); err != nil {
			return err
		}
		return s.record(ctx, tx, a, m, plan)
	})
	unlock()
	if err != nil {
		return nil, err
	}
	out := plan.decided(a)
	out.Outcome = OutcomeAlreadyApproved
	if !won {
		return out, nil
	}
	out.Outcome = OutcomeApproved
	if a.External() {
		s.notify(brabo.NoticeDecided, a)
		return out, nil // its agent runs it
	}
	if out.Action, err = s.execute(ctx, a, p, m, brabo.StatusApproved, nil); err != nil {
		return nil, err
	}
	s.notify(brabo.NoticeDecided, out.Action)
	return out, nil
}

// record writes the plan and permission.granted inside tx, and
// autonomy.changed for what it changed of an agent's autonomy.
func (s *Service) record(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, m *brabo.Member, plan *alwaysPlan) error {
	granted := map[string]any{}
	switch {
	case plan.agentID != "":
		added, err := s.addAgentPatterns(ctx, tx, a.ProjectID, m.ID, plan.agentID, plan.patterns, []string{a.ID}, brabo.ViaAlwaysAllow)
		if err != nil {
			return err
		}
		plan.patterns = added
		if len(added) == 0 {
			return nil
		}
		granted["agentId"], granted["actionType"] = plan.agentID, a.Type
		granted["patterns"], granted["pattern"] = added, strings.Join(added, ", ")
	case plan.autonomy != nil:
		changed, err := s.putAutonomy(ctx, tx, a.ProjectID, m.ID, *plan.autonomy, brabo.ViaAlwaysAllow, a.ID)
		if err != nil {
			return err
		}
		if !changed {
			plan.autonomy = nil // already there: nothing recorded
			return nil
		}
		granted["agentId"], granted["actionType"] = plan.autonomy.AgentID, plan.autonomy.ActionType
	default:
		// The project's trust row, locked before the file is read, orders
		// the clicks of every server on one database: none reads a file
		// another is about to replace.
		if _, err := lockTrust(ctx, tx, a.ProjectID); err != nil {
			return err
		}
		data, err := readPermissions(plan.file)
		if err != nil {
			return err
		}
		out, added, err := policy.AppendAllow(data, plan.patterns)
		if err != nil {
			return brabo.Errorf(brabo.CodeInvalidPermissions, "%s", err.Error())
		}
		plan.patterns = added
		if len(added) == 0 {
			return nil
		}
		// The new file is trusted (it is the trusted one plus what the
		// click grants), so what it adds to must be trusted too.
		if err := s.checkBase(ctx, tx, a.ProjectID, data); err != nil {
			return err
		}
		// The file cannot join the transaction: it is written last, so only
		// a failing commit after it leaves the declared residual window.
		s.own.note(plan.file, out)
		if err := writeFileAtomic(plan.file, out); err != nil {
			return fmt.Errorf("recording the patterns: %w", err)
		}
		if err := s.trust(ctx, tx, a.ProjectID, out, brabo.TrustAlwaysAllow, m.ID, a.ID, ""); err != nil {
			return err
		}
		granted["permissionsHash"] = policy.ContentHash(out)
		granted["patterns"], granted["pattern"] = added, strings.Join(added, ", ")
	}
	granted["actionId"] = a.ID
	return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventPermissionGranted,
		ActorID: m.ID, ActionID: a.ID, Payload: mustJSON(granted), CreatedAt: s.now()})
}
