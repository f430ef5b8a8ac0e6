package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
)

// Tokens and sessions -----------------------------------------------------
//
// A revocation is a timestamp, not a deleted row: the member or agent
// stays (its actions and events name it), only its token stops working.
// Every write here touches brabo.AuthSignal, so every instance drops the
// credentials it cached when the transaction commits (PostgreSQL: NOTIFY).

// Admins lists the admin members, oldest first (brabo.Tx).
func (t *Tx) Admins(ctx context.Context) ([]*brabo.Member, error) {
	return queryAll(ctx, t.q, scanMember, `SELECT `+memberCols+` FROM members WHERE admin ORDER BY created_at, id`)
}

// RevokeMemberToken revokes the member's token and ends its sessions
// (brabo.Tx).
func (t *Tx) RevokeMemberToken(ctx context.Context, memberID string, at time.Time) (bool, error) {
	n, err := t.q.Exec(ctx, `UPDATE members SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, at.UnixMicro(), memberID)
	if err != nil {
		return false, err
	}
	if err := t.endSessions(ctx, memberID, at); err != nil {
		return false, err
	}
	return n == 1, t.touch(ctx, brabo.AuthSignal)
}

// SetMemberToken replaces the member's token hash, lifts a revocation and
// ends its sessions (brabo.Tx).
func (t *Tx) SetMemberToken(ctx context.Context, memberID, hash string, at time.Time) error {
	n, err := t.q.Exec(ctx, `UPDATE members SET token_hash = $1, revoked_at = NULL WHERE id = $2`, hash, memberID)
	if err != nil {
		return t.conflict(err, "member token")
	}
	if n == 0 {
		return fmt.Errorf("member %s: %w", memberID, brabo.ErrNotFound)
	}
	if err := t.endSessions(ctx, memberID, at); err != nil {
		return err
	}
	return t.touch(ctx, brabo.AuthSignal)
}

func (t *Tx) endSessions(ctx context.Context, memberID string, at time.Time) error {
	_, err := t.q.Exec(ctx, `UPDATE sessions SET revoked_at = $1 WHERE member_id = $2 AND revoked_at IS NULL`, at.UnixMicro(), memberID)
	return err
}

// RevokeAgentToken revokes the agent's token (brabo.Tx).
func (t *Tx) RevokeAgentToken(ctx context.Context, agentID string, at time.Time) (bool, error) {
	n, err := t.q.Exec(ctx, `UPDATE agents SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, at.UnixMicro(), agentID)
	if err != nil {
		return false, err
	}
	return n == 1, t.touch(ctx, brabo.AuthSignal)
}

// SetAgentToken replaces the agent's token hash and lifts a revocation
// (brabo.Tx).
func (t *Tx) SetAgentToken(ctx context.Context, agentID, hash string) error {
	n, err := t.q.Exec(ctx, `UPDATE agents SET token_hash = $1, revoked_at = NULL WHERE id = $2`, hash, agentID)
	if err != nil {
		return t.conflict(err, "agent token")
	}
	if n == 0 {
		return fmt.Errorf("agent %s: %w", agentID, brabo.ErrNotFound)
	}
	return t.touch(ctx, brabo.AuthSignal)
}

const sessionCols = `id, member_id, token_hash, user_agent, created_at, expires_at, revoked_at`

func scanSession(r Row) (*brabo.Session, error) {
	s := &brabo.Session{}
	var created, expires int64
	var revoked sql.NullInt64
	err := r.Scan(&s.ID, &s.MemberID, &s.TokenHash, &s.UserAgent, &created, &expires, &revoked)
	s.CreatedAt, s.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC()
	s.RevokedAt = fromMicros(revoked)
	return s, err
}

// CreateSession stores a new session (brabo.Tx).
func (t *Tx) CreateSession(ctx context.Context, s *brabo.Session) error {
	_, err := t.q.Exec(ctx, `INSERT INTO sessions (`+sessionCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7)`,
		s.ID, s.MemberID, s.TokenHash, s.UserAgent, s.CreatedAt.UnixMicro(), s.ExpiresAt.UnixMicro(), micros(s.RevokedAt))
	return t.conflict(err, "session "+s.ID)
}

// SessionByTokenHash finds a session by its secret's hash (brabo.Tx).
func (t *Tx) SessionByTokenHash(ctx context.Context, hash string) (*brabo.Session, error) {
	s, err := scanSession(t.q.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE token_hash = $1`, hash))
	if err != nil {
		return nil, t.notFound(err, "session")
	}
	return s, nil
}

// Sessions lists the member's live sessions, newest first (brabo.Tx).
func (t *Tx) Sessions(ctx context.Context, memberID string, now time.Time) ([]*brabo.Session, error) {
	return queryAll(ctx, t.q, scanSession, `SELECT `+sessionCols+` FROM sessions
		WHERE member_id = $1 AND revoked_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id DESC`,
		memberID, now.UnixMicro())
}

// RevokeSession ends one live session of the member (brabo.Tx).
func (t *Tx) RevokeSession(ctx context.Context, memberID, sessionID string, at time.Time) (bool, error) {
	n, err := t.q.Exec(ctx, `UPDATE sessions SET revoked_at = $1
		WHERE id = $2 AND member_id = $3 AND revoked_at IS NULL AND expires_at > $1`, at.UnixMicro(), sessionID, memberID)
	if err != nil || n == 0 {
		return false, err
	}
	return true, t.touch(ctx, brabo.AuthSignal)
}
