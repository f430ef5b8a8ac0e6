package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/brabo-dev/brabo"
)

// Listing and counting actions ---------------------------------------------
//
// A list is shown a page at a time (Limit, Offset) with its true size
// (CountActions), so nothing is cut silently; PendingOfAgent is the count
// the pending-per-agent limit takes in the proposal's transaction.

// Actions lists one page of what f selects, newest first (brabo.Tx).
func (t *Tx) Actions(ctx context.Context, f brabo.ActionFilter) ([]*brabo.ProposedAction, error) {
	where, args, arg := actionWhere(f)
	q := `SELECT ` + actionCols + ` FROM actions` + where
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	q += " ORDER BY created_at DESC, id DESC LIMIT " + arg(limit)
	if f.Offset > 0 {
		q += " OFFSET " + arg(f.Offset)
	}
	return queryAll(ctx, t.q, scanAction, q, *args...)
}

// CountActions counts what f selects, Limit and Offset aside (brabo.Tx).
func (t *Tx) CountActions(ctx context.Context, f brabo.ActionFilter) (int, error) {
	where, args, _ := actionWhere(f)
	var n int
	err := t.q.QueryRow(ctx, `SELECT COUNT(*) FROM actions`+where, *args...).Scan(&n)
	return n, err
}

// PendingOfAgent counts the agent's pending actions (brabo.Tx). Where
// writers run concurrently (PostgreSQL) it first locks the agent's row,
// so two proposals of one agent cannot both count below the limit; with
// one writer at a time (SQLite) there is nothing to order.
func (t *Tx) PendingOfAgent(ctx context.Context, agentID string) (int, error) {
	if !t.d.SerialWriter {
		var id string
		if err := t.q.QueryRow(ctx, `SELECT id FROM agents WHERE id = $1 FOR UPDATE`, agentID).Scan(&id); err != nil {
			return 0, t.notFound(err, "agent "+agentID)
		}
	}
	var n int
	err := t.q.QueryRow(ctx, `SELECT COUNT(*) FROM actions WHERE actor_id = $1 AND status = $2`,
		agentID, string(brabo.StatusPending)).Scan(&n)
	return n, err
}

// likeEscaper escapes what LIKE reads as wildcards ('\\' is the escape).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// searchText is what the text filter reads of an action (the search
// column): its type and subject fields, in lower case. Migration 00009
// fills it for older rows from the same fields of their payload.
func searchText(a *brabo.ProposedAction) string {
	p := a.Payload
	return strings.ToLower(strings.Join([]string{string(a.Type), p.Command, p.Path, p.Message, p.Branch,
		p.Base, p.Title, p.Tool, p.Remote, p.From}, " "))
}

// ActionEvents lists the events of one action, in their order (brabo.Tx).
func (t *Tx) ActionEvents(ctx context.Context, projectID, actionID string) ([]brabo.Event, error) {
	return queryAll(ctx, t.q, scanEvent, `SELECT `+eventCols+`
		FROM events WHERE project_id = $1 AND action_id = $2 ORDER BY seq LIMIT 1000`, projectID, actionID)
}

// actionWhere is the WHERE clause of an action filter, its arguments, and
// the function that adds one more argument.
func actionWhere(f brabo.ActionFilter) (string, *[]any, func(any) string) {
	var where []string
	args := &[]any{}
	arg := func(v any) string {
		*args = append(*args, v)
		return fmt.Sprintf("$%d", len(*args))
	}
	if len(f.ProjectIDs) > 0 {
		ph := make([]string, len(f.ProjectIDs))
		for i, p := range f.ProjectIDs {
			ph[i] = arg(p)
		}
		where = append(where, "project_id IN ("+strings.Join(ph, ",")+")")
	}
	if f.Status != "" {
		where = append(where, "status = "+arg(string(f.Status)))
	}
	if f.Type != "" {
		where = append(where, "type = "+arg(string(f.Type)))
	}
	if f.ActorID != "" {
		where = append(where, "actor_id = "+arg(f.ActorID))
	}
	if text := strings.TrimSpace(f.Text); text != "" {
		like := arg("%" + likeEscaper.Replace(strings.ToLower(text)) + "%")
		where = append(where, "(search LIKE "+like+" ESCAPE '\\' OR LOWER(reason) LIKE "+like+" ESCAPE '\\')")
	}
	if len(where) == 0 {
		return "", args, arg
	}
	return " WHERE " + strings.Join(where, " AND "), args, arg
}
