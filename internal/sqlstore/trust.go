package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/brabo-dev/brabo"
)

// Trusted policy ----------------------------------------------------------
//
// The versions of each project's permissions.json brabo accepted (with
// their bytes) or reported (without), the ordered history of the ones that
// became current, and which is current now: the only one trusted
// (DESIGN §9, "Trusted policy").

// PermissionsTrust reads the project's current trusted version (brabo.Tx).
func (t *Tx) PermissionsTrust(ctx context.Context, projectID string) (*brabo.PermissionsTrust, error) {
	return t.permissionsTrust(ctx, projectID, "")
}

// LockPermissionsTrust reads it holding the row until the transaction ends
// (brabo.Tx). With one writer at a time (SQLite) the transaction already
// holds the whole database.
func (t *Tx) LockPermissionsTrust(ctx context.Context, projectID string) (*brabo.PermissionsTrust, error) {
	if t.d.SerialWriter {
		return t.permissionsTrust(ctx, projectID, "")
	}
	return t.permissionsTrust(ctx, projectID, " FOR UPDATE")
}

func (t *Tx) permissionsTrust(ctx context.Context, projectID, lock string) (*brabo.PermissionsTrust, error) {
	pt := &brabo.PermissionsTrust{}
	var at int64
	err := t.q.QueryRow(ctx, `SELECT project_id, current_hash, seq, updated_at FROM permissions_trust WHERE project_id = $1`+lock,
		projectID).Scan(&pt.ProjectID, &pt.Hash, &pt.Seq, &at)
	if err != nil {
		return nil, t.notFound(err, "trusted permissions of project "+projectID)
	}
	pt.UpdatedAt = time.UnixMicro(at).UTC()
	return pt, nil
}

// InitPermissionsTrust records the project's first trusted version unless
// it has one (brabo.Tx): the first entry of its history. The trust row is
// inserted first: on PostgreSQL a concurrent first use waits on it and
// then finds it taken.
func (t *Tx) InitPermissionsTrust(ctx context.Context, v *brabo.PermissionsVersion) (bool, error) {
	n, err := t.q.Exec(ctx, `INSERT INTO permissions_trust (project_id, current_hash, seq, updated_at) VALUES ($1, $2, 1, $3)
		ON CONFLICT (project_id) DO NOTHING`, v.ProjectID, v.Hash, v.TrustedAt.UnixMicro())
	if err != nil || n == 0 {
		return false, err
	}
	if err := t.upsertTrusted(ctx, v); err != nil {
		return false, err
	}
	return true, t.appendHistory(ctx, v, 1)
}

// TrustPermissions adds an accepted version and makes it current, the
// next entry of the history unless it is current already (brabo.Tx). The
// caller holds the trust row (LockPermissionsTrust); two writers that did
// not would collide on the history's key rather than lose an entry.
func (t *Tx) TrustPermissions(ctx context.Context, v *brabo.PermissionsVersion) error {
	if err := t.upsertTrusted(ctx, v); err != nil {
		return err
	}
	var current string
	var seq int64
	err := t.q.QueryRow(ctx, `SELECT current_hash, seq FROM permissions_trust WHERE project_id = $1`, v.ProjectID).Scan(&current, &seq)
	switch {
	case t.d.IsNoRows(err):
		current, seq = "", 0
	case err != nil:
		return err
	}
	if current == v.Hash && seq > 0 {
		return nil // current already: nothing moves
	}
	seq++
	if err := t.appendHistory(ctx, v, seq); err != nil {
		return err
	}
	_, err = t.q.Exec(ctx, `INSERT INTO permissions_trust (project_id, current_hash, seq, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (project_id) DO UPDATE SET current_hash = excluded.current_hash, seq = excluded.seq,
			updated_at = excluded.updated_at`,
		v.ProjectID, v.Hash, seq, v.TrustedAt.UnixMicro())
	return err
}

// appendHistory records v becoming current as entry seq.
func (t *Tx) appendHistory(ctx context.Context, v *brabo.PermissionsVersion, seq int64) error {
	_, err := t.q.Exec(ctx, `INSERT INTO permissions_history (project_id, seq, hash, source, actor_id, action_id, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		v.ProjectID, seq, v.Hash, v.Source, nullString(v.ActorID), nullString(v.ActionID), v.TrustedAt.UnixMicro())
	return err
}

// PermissionsHistory lists the versions that became current, in order
// (brabo.Tx).
func (t *Tx) PermissionsHistory(ctx context.Context, projectID string) ([]brabo.PermissionsHistoryEntry, error) {
	list, err := queryAll(ctx, t.q, func(r Row) (*brabo.PermissionsHistoryEntry, error) {
		e := &brabo.PermissionsHistoryEntry{}
		var at int64
		if err := r.Scan(&e.Seq, &e.Hash, &e.Source, &e.ActorID, &e.ActionID, &at); err != nil {
			return nil, err
		}
		e.At = time.UnixMicro(at).UTC()
		return e, nil
	}, `SELECT seq, hash, source, COALESCE(actor_id, ''), COALESCE(action_id, ''), at FROM permissions_history
		WHERE project_id = $1 ORDER BY seq`, projectID)
	if err != nil {
		return nil, err
	}
	out := make([]brabo.PermissionsHistoryEntry, len(list))
	for i, e := range list {
		out[i] = *e
	}
	return out, nil
}

// upsertTrusted stores v as trusted; a version only reported so far becomes
// trusted, one trusted already keeps where it came from.
func (t *Tx) upsertTrusted(ctx context.Context, v *brabo.PermissionsVersion) error {
	content := v.Content
	if content == nil {
		content = []byte{} // the empty file is a content, not "no content"
	}
	_, err := t.q.Exec(ctx, `INSERT INTO permissions_versions
			(project_id, hash, trusted, content, source, actor_id, action_id, created_at, trusted_at)
		VALUES ($1, $2, TRUE, $3, $4, $5, $6, $7, $7)
		ON CONFLICT (project_id, hash) DO UPDATE SET trusted = TRUE, content = excluded.content,
			source = excluded.source, actor_id = excluded.actor_id, action_id = excluded.action_id,
			trusted_at = excluded.trusted_at
		WHERE NOT permissions_versions.trusted`,
		v.ProjectID, v.Hash, content, v.Source, nullString(v.ActorID), nullString(v.ActionID), v.TrustedAt.UnixMicro())
	return err
}

const versionCols = `project_id, hash, trusted, source, COALESCE(actor_id, ''), COALESCE(action_id, ''), created_at, trusted_at,
	COALESCE(reported_seq, 0)`

func scanVersion(r Row, content *[]byte) (*brabo.PermissionsVersion, error) {
	v := &brabo.PermissionsVersion{}
	var created int64
	var trusted sql.NullInt64
	dest := []any{&v.ProjectID, &v.Hash, &v.Trusted, &v.Source, &v.ActorID, &v.ActionID, &created, &trusted, &v.ReportedSeq}
	if content != nil {
		dest = append(dest, content)
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	v.CreatedAt, v.TrustedAt = time.UnixMicro(created).UTC(), fromMicros(trusted)
	return v, nil
}

// PermissionsVersion reads one version, with its content when trusted
// (brabo.Tx).
func (t *Tx) PermissionsVersion(ctx context.Context, projectID, hash string) (*brabo.PermissionsVersion, error) {
	var content []byte
	v, err := scanVersion(t.q.QueryRow(ctx, `SELECT `+versionCols+`, content FROM permissions_versions
		WHERE project_id = $1 AND hash = $2`, projectID, hash), &content)
	if err != nil {
		return nil, t.notFound(err, "permissions version "+hash)
	}
	if v.Trusted {
		v.Content = content
		if v.Content == nil {
			v.Content = []byte{}
		}
	}
	return v, nil
}

// PermissionsVersions lists the versions ever accepted, oldest first
// (brabo.Tx).
func (t *Tx) PermissionsVersions(ctx context.Context, projectID string) ([]*brabo.PermissionsVersion, error) {
	return queryAll(ctx, t.q, func(r Row) (*brabo.PermissionsVersion, error) { return scanVersion(r, nil) },
		`SELECT `+versionCols+` FROM permissions_versions WHERE project_id = $1 AND trusted
		ORDER BY trusted_at, hash`, projectID)
}

// ReportPermissions records a content seen on disk while it was not the
// trusted one, once per content and current history entry (brabo.Tx).
func (t *Tx) ReportPermissions(ctx context.Context, projectID, hash string, seq int64, at time.Time) (bool, error) {
	n, err := t.q.Exec(ctx, `INSERT INTO permissions_versions (project_id, hash, trusted, source, created_at, reported_seq)
		VALUES ($1, $2, FALSE, $3, $4, $5)
		ON CONFLICT (project_id, hash) DO UPDATE SET reported_seq = excluded.reported_seq
		WHERE permissions_versions.reported_seq IS NULL OR permissions_versions.reported_seq < excluded.reported_seq`,
		projectID, hash, brabo.TrustReported, at.UnixMicro(), seq)
	return n == 1, err
}
