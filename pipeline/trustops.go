package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// What changes the trusted version of permissions.json: PUT, always-allow,
// a write_file a maintainer approved, Accept and Restore. Each takes the
// file's lock in this process and the project's trust row in the store
// (LockPermissionsTrust), then writes the file last inside the
// transaction: a commit that fails after the write leaves a file that is
// not trusted, which the next decision holds back if it loosens anything,
// never the other way round.

// PermissionsTrust returns the trust state of the project's
// permissions.json for a member of it: the trusted version, the file on
// disk, and the difference. It records nothing but the first use of a
// project older than trust.
func (s *Service) PermissionsTrust(ctx context.Context, p *brabo.Project) (*TrustState, error) {
	st, err := s.permissionsTrust(ctx, p)
	if err != nil {
		return nil, err
	}
	return &st.TrustState, nil
}

// permissionsTrust is PermissionsTrust with the compiled rules behind the
// state.
func (s *Service) permissionsTrust(ctx context.Context, p *brabo.Project) (*trustState, error) {
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return nil, err
	}
	trust, err := s.readTrust(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	return s.judge(ctx, p, scope.Root, trust, false)
}

// EffectiveRules returns the rules brabo decides the project's actions
// with now (the file on disk, or the trusted version while the file waits
// for a maintainer), and the trust state that says which.
func (s *Service) EffectiveRules(ctx context.Context, p *brabo.Project) (*policy.Rules, *TrustState, error) {
	st, err := s.permissionsTrust(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	return st.use, &st.TrustState, nil
}

// DecidingPermissions returns the trust state and the bytes of the content
// decisions use now (DecidedWith): the file on disk as read when it is
// trusted or applied, the trusted version while the file is held. A
// project whose file cannot be read and has no trusted version yet has
// none: its hash is "" and its content nil.
func (s *Service) DecidingPermissions(ctx context.Context, p *brabo.Project) (*TrustState, []byte, error) {
	st, err := s.permissionsTrust(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	if st.DecidedWith == "" {
		return &st.TrustState, nil, nil
	}
	if st.disk != nil && st.disk.hash == st.DecidedWith {
		return &st.TrustState, st.disk.data, nil
	}
	content, err := s.TrustedContent(ctx, p.ID, st.DecidedWith)
	return &st.TrustState, content, err
}

// TrustedContent returns the bytes of the project's current trusted
// version.
func (s *Service) TrustedContent(ctx context.Context, projectID, hash string) ([]byte, error) {
	var content []byte
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		v, err := tx.PermissionsVersion(ctx, projectID, hash)
		if err == nil {
			content = v.Content
		}
		return err
	})
	return content, err
}

// readTrust reads the project's trust row, nil when it has none yet.
func (s *Service) readTrust(ctx context.Context, projectID string) (*brabo.PermissionsTrust, error) {
	var trust *brabo.PermissionsTrust
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		trust, err = tx.PermissionsTrust(ctx, projectID)
		if errors.Is(err, brabo.ErrNotFound) {
			trust, err = nil, nil
		}
		return err
	})
	return trust, err
}

// WritePermissions validates content and replaces the project's
// permissions.json atomically (PUT …/permissions): the content becomes the
// trusted version, with permissions.trusted in the log. Invalid content
// writes nothing.
func (s *Service) WritePermissions(ctx context.Context, p *brabo.Project, m *brabo.Member, content []byte) error {
	if len(content) > MaxPermissionsBytes {
		return fmt.Errorf("permissions.json over %d bytes", MaxPermissionsBytes)
	}
	if _, err := policy.Parse("permissions.json", content); err != nil {
		return err
	}
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return err
	}
	path := permissionsPath(scope.Root)
	unlock := s.lockFile(path)
	defer unlock()
	return s.Store.Update(ctx, func(tx brabo.Tx) error {
		previous, err := lockTrust(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		s.own.note(path, content)
		if err := writeFileAtomic(path, content); err != nil {
			return err
		}
		return s.trust(ctx, tx, p.ID, content, brabo.TrustPut, m.ID, "", previous)
	})
}

// lockTrust locks the project's trust row and returns its current hash,
// "" for a project that has none yet.
func lockTrust(ctx context.Context, tx brabo.Tx, projectID string) (string, error) {
	trust, err := tx.LockPermissionsTrust(ctx, projectID)
	if errors.Is(err, brabo.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return trust.Hash, nil
}

// trust makes content the current trusted version and records
// permissions.trusted (always-allow records permission.granted instead).
func (s *Service) trust(ctx context.Context, tx brabo.Tx, projectID string, content []byte, source, actorID, actionID, previous string) error {
	now := s.now()
	hash := policy.ContentHash(content)
	if err := tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: projectID, Hash: hash, Content: content,
		Source: source, ActorID: actorID, ActionID: actionID, TrustedAt: now}); err != nil {
		return err
	}
	if source == brabo.TrustAlwaysAllow || hash == previous {
		return nil
	}
	payload := map[string]any{"source": source, "hash": hash, "previous": previous}
	if actionID != "" {
		payload["actionId"] = actionID
	}
	return tx.AppendEvent(ctx, &brabo.Event{ProjectID: projectID, Type: brabo.EventPermissionsTrusted,
		ActorID: actorID, ActionID: actionID, Payload: mustJSON(payload), CreatedAt: now})
}

// checkBase refuses to build a new trusted version (always-allow) on a
// file on disk that is held back: the result would launder the change no
// maintainer accepted. The current trusted file, or one as strict or
// stricter than it, is a fine base. It locks the trust row.
func (s *Service) checkBase(ctx context.Context, tx brabo.Tx, projectID string, data []byte) error {
	current, err := lockTrust(ctx, tx, projectID)
	if err != nil || current == "" {
		return err
	}
	if policy.ContentHash(data) == current {
		return nil
	}
	// An older accepted version is no base of its own: only the current
	// one is trusted, so it is compared like any other content.
	trusted, err := s.compiledTrusted(ctx, tx, projectID, current)
	if err != nil {
		return err
	}
	onDisk, _ := policy.Parse("permissions.json", data)
	if c := policy.Compare(trusted, onDisk); !c.Applies() {
		return brabo.Errorf(brabo.CodePermissionsChanged, "permissions.json on disk has a change no maintainer accepted (%s): a maintainer accepts or restores it first; the action itself can still be approved",
			c.Summary())
	}
	return nil
}

// trustWrite makes the content an executed write_file wrote to the
// project's permissions.json trusted, when its approval needed a
// maintainer (the decider was one: approving checks the role the decision
// requires). A write nobody of that role approved stays untrusted, and is
// held back by the next decision if it loosens anything.
func (s *Service) trustWrite(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction) error {
	if a.Type != brabo.WriteFile || a.DecidedBy == "" || !brabo.EffectiveRole(a.Type, a.Decision).AtLeast(brabo.Maintainer) {
		return nil
	}
	p, err := tx.Project(ctx, a.ProjectID)
	if err != nil {
		return err
	}
	scope, err := s.ScopeRoot(p)
	if err != nil || !writesPermissions(scope.Root, a.Payload.Path) {
		return nil
	}
	previous, err := lockTrust(ctx, tx, p.ID)
	if err != nil {
		return err
	}
	return s.trust(ctx, tx, p.ID, []byte(a.Payload.Content), brabo.TrustWriteFile, a.DecidedBy, a.ID, previous)
}

// maintainerProject reads the project and refuses a member below
// maintainer (forbidden_role), or with no role in it (not_found).
func (s *Service) maintainerProject(ctx context.Context, projectID string, m *brabo.Member, what string) (*brabo.Project, error) {
	var p *brabo.Project
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if p, err = tx.Project(ctx, projectID); err != nil {
			return err
		}
		role, err := tx.Role(ctx, projectID, m.ID)
		if err != nil {
			return err
		}
		if role == "" {
			return fmt.Errorf("project %s: %w", projectID, brabo.ErrNotFound)
		}
		if !role.AtLeast(brabo.Maintainer) {
			return forbidden("%s needs the role maintainer; you are %s", what, role)
		}
		return nil
	})
	return p, err
}

// AcceptPermissions makes the file on disk the trusted version, for a
// maintainer, with permissions.accepted and the difference in the log.
// hash is the version the maintainer saw: a file that changed since is
// refused (permissions_changed), so nobody accepts what they did not see.
// An invalid or unreadable file cannot be accepted.
func (s *Service) AcceptPermissions(ctx context.Context, projectID string, m *brabo.Member, hash string) (*TrustState, error) {
	if hash == "" {
		return nil, invalid("accepting permissions.json needs the hash of the version you saw (GET …/permissions/trust)")
	}
	p, err := s.maintainerProject(ctx, projectID, m, "accepting permissions.json")
	if err != nil {
		return nil, err
	}
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return nil, err
	}
	path := permissionsPath(scope.Root)
	unlock := s.lockFile(path)
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		current, err := lockTrust(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		data, err := readPermissions(path)
		if err != nil {
			return brabo.Errorf(brabo.CodeInvalidPermissions, "permissions.json cannot be read, so it cannot be accepted: %s", unreadableWhy(err))
		}
		onDisk := policy.ContentHash(data)
		if onDisk != hash {
			return brabo.Errorf(brabo.CodePermissionsChanged, "permissions.json on disk is not the version you accepted (%s); it is %s now: look at it again", short(hash), short(onDisk))
		}
		rules, perr := policy.Parse("permissions.json", data)
		if perr != nil {
			return brabo.Errorf(brabo.CodeInvalidPermissions,
				"an invalid file cannot be accepted (fix it, or restore the trusted version): %s", perr.Error())
		}
		if onDisk == current {
			return nil // trusted already: nothing to record
		}
		change := policy.Change{Kind: policy.ChangeLoosen}
		if current != "" {
			trusted, err := s.compiledTrusted(ctx, tx, p.ID, current)
			if err != nil {
				return err
			}
			change = policy.Compare(trusted, rules)
		}
		now := s.now()
		if err := tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: onDisk, Content: data,
			Source: brabo.TrustAccepted, ActorID: m.ID, TrustedAt: now}); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventPermissionsAccepted, ActorID: m.ID,
			CreatedAt: now, Payload: mustJSON(map[string]any{"hash": onDisk, "previous": current,
				"change": change, "summary": change.Summary()})})
	})
	unlock()
	if err != nil {
		return nil, err
	}
	s.log().Info("permissions.json accepted", "project", p.ID, "hash", hash, "by", m.ID)
	return s.PermissionsTrust(ctx, p)
}

// RestorePermissions writes the trusted version back over the file on
// disk, atomically, for a maintainer, with permissions.restored and what
// the file on disk had that is dropped. hash, when given, is the version on
// disk the maintainer saw: a file that changed since is refused. A file
// that is the trusted version already is left alone.
func (s *Service) RestorePermissions(ctx context.Context, projectID string, m *brabo.Member, hash string) (*TrustState, error) {
	p, err := s.maintainerProject(ctx, projectID, m, "restoring permissions.json")
	if err != nil {
		return nil, err
	}
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return nil, err
	}
	// A project older than trust gets its first trusted version first.
	if _, err := s.PermissionsTrust(ctx, p); err != nil {
		return nil, err
	}
	path := permissionsPath(scope.Root)
	unlock := s.lockFile(path)
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		current, err := lockTrust(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		if current == "" {
			return brabo.Errorf(brabo.CodePermissionsChanged, "permissions.json cannot be read and no version of it is trusted yet: there is nothing to restore")
		}
		v, err := tx.PermissionsVersion(ctx, p.ID, current)
		if err != nil {
			return err
		}
		data, rerr := readPermissions(path)
		onDisk := ""
		if rerr == nil {
			onDisk = policy.ContentHash(data)
		}
		if hash != "" && hash != onDisk {
			return brabo.Errorf(brabo.CodePermissionsChanged, "permissions.json on disk is not the version you saw (%s): look at it again", short(hash))
		}
		if onDisk == current {
			return nil
		}
		change := policy.Change{Kind: policy.ChangeInvalid, Invalid: "the file on disk could not be read"}
		if rerr == nil {
			trusted, _ := policy.Parse("permissions.json", v.Content)
			rules, _ := policy.Parse("permissions.json", data)
			change = policy.Compare(trusted, rules)
		}
		s.own.note(path, v.Content)
		if err := writeFileAtomic(path, v.Content); err != nil {
			return fmt.Errorf("restoring permissions.json: %w", err)
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: p.ID, Type: brabo.EventPermissionsRestored, ActorID: m.ID,
			CreatedAt: s.now(), Payload: mustJSON(map[string]any{"hash": current, "replaced": onDisk,
				"dropped": change, "summary": change.Summary()})})
	})
	unlock()
	if err != nil {
		return nil, err
	}
	s.log().Info("permissions.json restored", "project", p.ID, "hash", hash, "by", m.ID)
	return s.PermissionsTrust(ctx, p)
}

// short is a hash as people compare it.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	if hash == "" {
		return "unreadable"
	}
	return hash
}
