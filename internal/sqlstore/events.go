package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/brabo-dev/brabo"
)

// Events: each project's append-only log, numbered from 1 without gaps.

func (t *Tx) AppendEvent(ctx context.Context, e *brabo.Event) error {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now().UTC()
	}
	if len(e.Payload) == 0 {
		e.Payload = json.RawMessage("{}")
	}
	if t.d.SerialWriter {
		// One writer at a time: the next number is the largest plus one,
		// read from the primary key in the same statement.
		err := t.q.QueryRow(ctx, `INSERT INTO events (project_id, seq, type, actor_id, action_id, payload, created_at)
			SELECT id, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE project_id = $1), $2, $3, $4, $5, $6
			FROM projects WHERE id = $1 RETURNING seq`,
			e.ProjectID, e.Type, e.ActorID, nullString(e.ActionID), string(e.Payload), e.CreatedAt.UnixMicro()).Scan(&e.Seq)
		if err != nil {
			return t.notFound(err, "project "+e.ProjectID)
		}
		return t.touch(ctx, e.ProjectID)
	}
	// Concurrent writers: the counter row's lock orders them per project.
	// One statement, one round trip: the counter and the row.
	err := t.q.QueryRow(ctx, `WITH next AS (UPDATE projects SET event_seq = event_seq + 1 WHERE id = $1 RETURNING event_seq)
		INSERT INTO events (project_id, seq, type, actor_id, action_id, payload, created_at)
		SELECT $1, event_seq, $2, $3, $4, $5, $6 FROM next RETURNING seq`,
		e.ProjectID, e.Type, e.ActorID, nullString(e.ActionID), string(e.Payload), e.CreatedAt.UnixMicro()).Scan(&e.Seq)
	if err != nil {
		return t.notFound(err, "project "+e.ProjectID)
	}
	return t.touch(ctx, e.ProjectID)
}

func (t *Tx) Events(ctx context.Context, projectID string, after int64, limit int) ([]brabo.Event, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	return queryAll(ctx, t.q, scanEvent, `SELECT `+eventCols+`
		FROM events WHERE project_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, projectID, after, limit)
}

const eventCols = `project_id, seq, type, actor_id, action_id, payload, created_at`

func scanEvent(r Row) (brabo.Event, error) {
	var e brabo.Event
	var actionID sql.NullString
	var payload string
	var created int64
	if err := r.Scan(&e.ProjectID, &e.Seq, &e.Type, &e.ActorID, &actionID, &payload, &created); err != nil {
		return e, err
	}
	e.ActionID = actionID.String
	e.Payload = json.RawMessage(payload)
	e.CreatedAt = time.UnixMicro(created).UTC()
	return e, nil
}

func (t *Tx) LastEventSeq(ctx context.Context, projectID string) (int64, error) {
	var seq int64
	err := t.q.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE project_id = $1`, projectID).Scan(&seq)
	return seq, err
}

func (t *Tx) EventsOfType(ctx context.Context, projectID, eventType string, after int64, limit int) ([]brabo.Event, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	return queryAll(ctx, t.q, scanEvent, `SELECT `+eventCols+`
		FROM events WHERE project_id = $1 AND type = $2 AND seq > $3 ORDER BY seq LIMIT $4`, projectID, eventType, after, limit)
}
