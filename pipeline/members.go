package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
)

// Credentials: API tokens, web sessions and their revocation. A revoked
// token or session is refused on every instance as soon as the store's
// AuthSignal reaches it (the store sends it on each revocation).

// ByTokenHash finds whose API token has this hash: a member, else an
// agent; brabo.ErrNotFound when it is nobody's (or revoked).
func (s *Service) ByTokenHash(ctx context.Context, hash string) (*brabo.Member, *brabo.Agent, error) {
	var m *brabo.Member
	var a *brabo.Agent
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		m, err = tx.MemberByTokenHash(ctx, hash)
		if err == nil || !errors.Is(err, brabo.ErrNotFound) {
			return err
		}
		a, err = tx.AgentByTokenHash(ctx, hash)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return m, a, nil
}

// OpenSession stores a new web session of m, lasting ttl, and returns its
// secret; only the secret's hash is stored.
func (s *Service) OpenSession(ctx context.Context, m *brabo.Member, userAgent string, ttl time.Duration) (string, *brabo.Session, error) {
	secret := brabo.NewSessionSecret()
	now := s.now()
	sess := &brabo.Session{ID: brabo.NewID("ses"), MemberID: m.ID, TokenHash: brabo.HashToken(secret),
		UserAgent: userAgent, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	err := s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateSession(ctx, sess) })
	return secret, sess, err
}

// LiveSession finds the session whose secret has this hash and its
// member, from one snapshot; brabo.ErrNotFound when it is nobody's,
// expired at now, revoked, or its member's token is.
func (s *Service) LiveSession(ctx context.Context, hash string, now time.Time) (*brabo.Session, *brabo.Member, error) {
	var sess *brabo.Session
	var m *brabo.Member
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if sess, err = tx.SessionByTokenHash(ctx, hash); err != nil {
			return err
		}
		if !sess.Live(now) {
			return brabo.ErrNotFound
		}
		if m, err = tx.Member(ctx, sess.MemberID); err != nil {
			return err
		}
		if !m.RevokedAt.IsZero() {
			return brabo.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return sess, m, nil
}

// Sessions lists the member's live web sessions.
func (s *Service) Sessions(ctx context.Context, memberID string) ([]*brabo.Session, error) {
	return view(ctx, s, func(tx brabo.Tx) ([]*brabo.Session, error) { return tx.Sessions(ctx, memberID, time.Now()) })
}

// RevokeSession ends one live session of the member; false when it has no
// such live session.
func (s *Service) RevokeSession(ctx context.Context, memberID, sessionID string) (bool, error) {
	var ok bool
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		ok, err = tx.RevokeSession(ctx, memberID, sessionID, s.now())
		return err
	})
	return ok, err
}

// RevokeMemberToken revokes target's token and ends its web sessions, in
// one transaction. Allowed for the member itself, an admin, and a member
// who owns every project target has a role in: an owner of one project
// cannot cut someone off from a project it does not own. An admin's token
// needs an admin (or the admin itself). A member me shares no project
// with is brabo.ErrNotFound, as everywhere.
func (s *Service) RevokeMemberToken(ctx context.Context, me *brabo.Member, targetID string) error {
	return s.Store.Update(ctx, func(tx brabo.Tx) error {
		target, err := tx.Member(ctx, targetID)
		if err != nil {
			return err
		}
		if target.ID != me.ID && !me.Admin {
			if err := mayRevoke(ctx, tx, me, target); err != nil {
				return err
			}
		}
		_, err = tx.RevokeMemberToken(ctx, target.ID, s.now())
		return err
	})
}

// mayRevoke says whether me, neither target nor an admin, may revoke
// target's token: me must own every project target has a role in.
func mayRevoke(ctx context.Context, tx brabo.Tx, me, target *brabo.Member) error {
	ms, err := tx.Memberships(ctx, target.ID)
	if err != nil {
		return err
	}
	seen, owner := false, true
	for _, x := range ms {
		role, err := tx.Role(ctx, x.ProjectID, me.ID)
		if err != nil {
			return err
		}
		seen = seen || role != ""
		owner = owner && role == brabo.Owner
	}
	switch {
	case !seen:
		return fmt.Errorf("member %s: %w", target.ID, brabo.ErrNotFound)
	case target.Admin:
		return forbidden("revoking an admin's token needs an admin")
	case !owner:
		return forbidden("revoking %s's token needs the role owner in every project %s is a member of", target.Name, target.Name)
	}
	return nil
}
