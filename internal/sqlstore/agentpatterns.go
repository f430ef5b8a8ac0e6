package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/brabo-dev/brabo"
)

// An agent's own allow patterns, and the conditional removal of a rule
// that migrating the blanket rules old clicks wrote needs
// (docs/agent-patterns.md).

func (t *Tx) DeleteAutonomy(ctx context.Context, a brabo.AgentAutonomy) (bool, error) {
	// Conditional on the mode, so that a rule a maintainer changed in
	// between is left as it is; on PostgreSQL a second delete waits for
	// the first's row lock and then finds nothing.
	n, err := t.q.Exec(ctx, `DELETE FROM agent_autonomy WHERE agent_id = $1 AND action_type = $2 AND mode = $3`,
		a.AgentID, string(a.ActionType), string(a.Mode))
	return n > 0, err
}

func (t *Tx) AddAgentPattern(ctx context.Context, p *brabo.AgentPattern) (bool, error) {
	if p.CreatedAt.IsZero() {
		p.CreatedAt = time.Now().UTC()
	}
	n, err := t.q.Exec(ctx, `INSERT INTO agent_patterns (agent_id, pattern, action_id, created_by, created_at)
		VALUES ($1,$2,$3,$4,$5) ON CONFLICT (agent_id, pattern) DO NOTHING`,
		p.AgentID, p.Pattern, nullString(p.ActionID), p.CreatedBy, p.CreatedAt.UnixMicro())
	return n > 0, err
}

func scanAgentPattern(r Row) (brabo.AgentPattern, error) {
	var p brabo.AgentPattern
	var actionID sql.NullString
	var created int64
	err := r.Scan(&p.AgentID, &p.Pattern, &actionID, &p.CreatedBy, &created)
	p.ActionID, p.CreatedAt = actionID.String, time.UnixMicro(created).UTC()
	return p, err
}

func (t *Tx) AgentPatterns(ctx context.Context, agentID string) ([]brabo.AgentPattern, error) {
	return queryAll(ctx, t.q, scanAgentPattern, `SELECT agent_id, pattern, action_id, created_by, created_at
		FROM agent_patterns WHERE agent_id = $1 ORDER BY id`, agentID)
}

func (t *Tx) DeleteAgentPattern(ctx context.Context, agentID, pattern string) (bool, error) {
	n, err := t.q.Exec(ctx, `DELETE FROM agent_patterns WHERE agent_id = $1 AND pattern = $2`, agentID, pattern)
	return n > 0, err
}
