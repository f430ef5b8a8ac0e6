package pipeline

import (
	"context"
	"fmt"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// Activation is what activating execution changed (brabo.Activation).
type Activation = brabo.Activation

// ActivateExecution seeds the project for its dev agents, for a
// maintainer: the seeded allow list (policy.SeedAllow) is added to
// permissions.json through the trusted-write path (the file's lock, the
// trust row, the written version trusted) keeping every other entry and
// key, and each dev-<module> agent without a git_commit rule gets
// git_commit: auto_approve. It is idempotent: what is there already is
// not written again, and project.execution_activated is recorded once,
// only when something changed. A file that is invalid, or that waits for
// a maintainer (a loosening nobody accepted), is refused: seeding on it
// would launder it.
func (s *Service) ActivateExecution(ctx context.Context, projectID string, m *brabo.Member) (*Activation, error) {
	p, err := s.maintainerProject(ctx, projectID, m, "activating execution")
	if err != nil {
		return nil, err
	}
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	// A project older than trust gets its first trusted version first, so
	// that the base below is judged against it.
	if _, err := s.PermissionsTrust(ctx, p); err != nil {
		return nil, err
	}
	path := permissionsPath(scope.Root)
	unlock := s.lockFile(path)
	defer unlock()
	act := &Activation{ProjectID: p.ID, Patterns: []string{}, Agents: []string{}}
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		*act = Activation{ProjectID: p.ID, Patterns: []string{}, Agents: []string{}}
		previous, err := lockTrust(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		data, err := readPermissions(path)
		if err != nil {
			return brabo.Errorf(brabo.CodeInvalidPermissions, "permissions.json cannot be read: %s", unreadableWhy(err))
		}
		out, added, err := policy.AppendAllow(data, policy.SeedAllow())
		if err != nil {
			return brabo.Errorf(brabo.CodeInvalidPermissions, "activating execution needs a valid permissions.json: %s", err.Error())
		}
		agents, err := tx.Agents(ctx, p.ID)
		if err != nil {
			return err
		}
		for _, a := range agents {
			if !a.IsModuleDev() || a.IsHook() {
				continue
			}
			rules, err := tx.Autonomy(ctx, a.ID)
			if err != nil {
				return err
			}
			have := brabo.Policy("")
			for _, r := range rules {
				if r.ActionType == brabo.GitCommit {
					have = r.Mode
				}
			}
			switch have {
			case brabo.AutoApprove:
				continue
			case "":
				if err := tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: a.ID, ActionType: brabo.GitCommit, Mode: brabo.AutoApprove}); err != nil {
					return err
				}
				act.Agents = append(act.Agents, a.ID)
			default:
				act.Kept = append(act.Kept, a.ID)
			}
		}
		if len(added) > 0 {
			// The new file is the trusted one plus the seed: what it adds
			// to must be trusted too.
			if err := s.checkBase(ctx, tx, p.ID, data); err != nil {
				return err
			}
			hash := policy.ContentHash(out)
			if err := tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: hash, Content: out,
				Source: brabo.TrustActivated, ActorID: m.ID, TrustedAt: s.now()}); err != nil {
				return err
			}
			act.Patterns, act.PermissionsHash = added, hash
		}
		act.Changed = len(act.Patterns) > 0 || len(act.Agents) > 0
		if !act.Changed {
			return nil
		}
		payload := map[string]any{"patterns": act.Patterns, "agents": act.Agents, "autonomy": map[string]any{
			"actionType": brabo.GitCommit, "mode": brabo.AutoApprove}}
		if act.PermissionsHash != "" {
			payload["permissionsHash"], payload["previous"] = act.PermissionsHash, previous
		}
		if len(act.Kept) > 0 {
			payload["kept"] = act.Kept
		}
		if err := tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventExecutionActivated, ActorID: m.ID,
			Payload: mustJSON(payload), CreatedAt: s.now()}); err != nil {
			return err
		}
		if len(added) == 0 {
			return nil
		}
		// The file cannot join the transaction: it is written last.
		s.own.note(path, out)
		if err := writeFileAtomic(path, out); err != nil {
			return fmt.Errorf("writing permissions.json: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if act.Changed {
		s.log().Info("execution activated", "project", p.ID, "patterns", len(act.Patterns), "agents", len(act.Agents), "by", m.ID)
	}
	return act, nil
}
