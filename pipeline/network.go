package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// networkRefusedPayload is what network.refused records: the refusal and
// the action it happened in.
type networkRefusedPayload struct {
	brabo.NetworkRefusal
	ActionID string `json:"actionId"`
}

// appendNetworkRefused records one network.refused per destination the
// egress proxy refused during the run (the result's Detail), in the
// settling transaction.
func appendNetworkRefused(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, res *brabo.Result, now time.Time) error {
	for _, r := range res.NetworkRefusals() {
		if err := tx.AppendEvent(ctx, &brabo.Event{
			ProjectID: a.ProjectID, Type: brabo.EventNetworkRefused, ActorID: brabo.SystemActor, ActionID: a.ID,
			Payload: mustJSON(networkRefusedPayload{NetworkRefusal: r, ActionID: a.ID}), CreatedAt: now,
		}); err != nil {
			return err
		}
	}
	return nil
}

// networkPatterns are the Network patterns an always-allow on the action's
// refused connections adds: one per refused destination an allow can
// open. A refusal a deny gave, or one of brabo's own addresses, is not
// one: it is refused with code always_allow_cap when nothing else is left.
func networkPatterns(a *brabo.ProposedAction) ([]string, error) {
	refused := a.Result.NetworkRefusals()
	if len(refused) == 0 {
		return nil, invalid("action %s had no connection refused: there is no network rule to add", a.ID)
	}
	var out []string
	why := ""
	for _, r := range refused {
		switch {
		case r.Verdict == string(policy.NetworkDeny):
			why = fmt.Sprintf("%s is denied (%s); remove the deny from permissions.json first", r.Host, r.Rule)
			continue
		case r.Suggestion == "":
			why = r.Reason
			continue
		}
		// The suggestion is Network(host), or the literal IP:port the
		// address check asked for; either must be a valid pattern.
		p := r.Suggestion
		if _, err := policy.NewRules("", []string{p}, nil, nil); err != nil {
			return nil, brabo.Errorf(brabo.CodeInvalidAction, "network: %s", err.Error())
		}
		if !containsPattern(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, brabo.Errorf(brabo.CodeAlwaysAllowCap, "network: nothing can be always-allowed: %s", why)
	}
	return out, nil
}

func containsPattern(list []string, p string) bool {
	for _, s := range list {
		if s == p {
			return true
		}
	}
	return false
}

// AllowNetwork is the always-allow of a refused connection: it
// adds Network(host) to the project's permissions.json for each
// destination the action's run was refused, with permission.granted, in
// one transaction, so the next run passes. It needs a maintainer: a host
// opened is opened for every command of the project. The action itself is
// not run again. An action with no refusal is invalid_action; one whose
// refusals no allow can open (a deny, brabo's own address) is
// always_allow_cap.
func (s *Service) AllowNetwork(ctx context.Context, actionID string, m *brabo.Member) (*Decided, error) {
	a, p, err := s.load(ctx, actionID, m, roleToApprove)
	if err != nil {
		return nil, err
	}
	patterns, err := networkPatterns(a)
	if err != nil {
		return nil, err
	}
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	plan := &alwaysPlan{file: permissionsPath(scope.Root), patterns: patterns}
	unlock := s.lockFile(plan.file)
	defer unlock()
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		role, err := tx.Role(ctx, p.ID, m.ID)
		if err != nil {
			return err
		}
		if !role.AtLeast(brabo.Maintainer) {
			return forbidden("always allow for the network adds %s to permissions.json, which needs the role maintainer; you are %s",
				patterns[0], role)
		}
		return s.record(ctx, tx, a, m, plan)
	})
	if err != nil {
		return nil, err
	}
	return &Decided{Action: a, Patterns: plan.patterns, Outcome: OutcomeNetworkAllowed}, nil
}

// OutcomeNetworkAllowed is AllowNetwork's outcome: the patterns were added
// (or were there already); the action itself is unchanged.
const OutcomeNetworkAllowed Outcome = "network_allowed"
