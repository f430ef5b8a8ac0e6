package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
)

// The tables of migration 00010: a project's protected
// branches, agents' stored instructions, the budget and its ledger, the
// module map, and the lifecycle of a project's container.

func (t *Tx) AddProtectedBranch(ctx context.Context, b *brabo.ProtectedBranch) (bool, error) {
	if b.CreatedAt.IsZero() {
		b.CreatedAt = time.Now().UTC()
	}
	n, err := t.q.Exec(ctx, `INSERT INTO protected_branches (project_id, branch, action_id, created_by, created_at)
		VALUES ($1,$2,$3,$4,$5) ON CONFLICT (project_id, branch) DO NOTHING`,
		b.ProjectID, b.Branch, nullString(b.ActionID), b.CreatedBy, b.CreatedAt.UnixMicro())
	return n > 0, err
}

func (t *Tx) ProtectedBranches(ctx context.Context, projectID string) ([]brabo.ProtectedBranch, error) {
	return queryAll(ctx, t.q, func(r Row) (brabo.ProtectedBranch, error) {
		var b brabo.ProtectedBranch
		var actionID sql.NullString
		var created int64
		err := r.Scan(&b.ProjectID, &b.Branch, &actionID, &b.CreatedBy, &created)
		b.ActionID, b.CreatedAt = actionID.String, time.UnixMicro(created).UTC()
		return b, err
	}, `SELECT project_id, branch, action_id, created_by, created_at FROM protected_branches
		WHERE project_id = $1 ORDER BY created_at, branch`, projectID)
}

func (t *Tx) AgentInstructions(ctx context.Context, agentID string) (*brabo.AgentInstructions, error) {
	in := &brabo.AgentInstructions{}
	var updated int64
	err := t.q.QueryRow(ctx, `SELECT agent_id, content, action_id, updated_by, updated_at
		FROM agent_instructions WHERE agent_id = $1`, agentID).Scan(&in.AgentID, &in.Content, &in.ActionID, &in.UpdatedBy, &updated)
	if err != nil {
		return nil, t.notFound(err, "instructions of agent "+agentID)
	}
	in.UpdatedAt = time.UnixMicro(updated).UTC()
	return in, nil
}

func (t *Tx) PutAgentInstructions(ctx context.Context, in *brabo.AgentInstructions) error {
	_, err := t.q.Exec(ctx, `INSERT INTO agent_instructions (agent_id, content, action_id, updated_by, updated_at)
		VALUES ($1,$2,$3,$4,$5) ON CONFLICT (agent_id) DO UPDATE SET content = excluded.content,
		action_id = excluded.action_id, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		in.AgentID, in.Content, in.ActionID, in.UpdatedBy, in.UpdatedAt.UnixMicro())
	return err
}

func (t *Tx) Budget(ctx context.Context, projectID string) (*brabo.Budget, error) {
	b := &brabo.Budget{}
	var updated int64
	err := t.q.QueryRow(ctx, `SELECT project_id, limit_micros, spent_micros, input_price, output_price, updated_by, updated_at
		FROM budgets WHERE project_id = $1`, projectID).Scan(&b.ProjectID, &b.Limit, &b.Spent, &b.InputPrice, &b.OutputPrice,
		&b.UpdatedBy, &updated)
	if err != nil {
		return nil, t.notFound(err, "budget of project "+projectID)
	}
	b.UpdatedAt = time.UnixMicro(updated).UTC()
	return b, nil
}

func (t *Tx) PutBudget(ctx context.Context, b *brabo.Budget) error {
	_, err := t.q.Exec(ctx, `INSERT INTO budgets (project_id, limit_micros, input_price, output_price, updated_by, updated_at)
		VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT (project_id) DO UPDATE SET limit_micros = excluded.limit_micros,
		input_price = excluded.input_price, output_price = excluded.output_price, updated_by = excluded.updated_by,
		updated_at = excluded.updated_at`,
		b.ProjectID, int64(b.Limit), int64(b.InputPrice), int64(b.OutputPrice), b.UpdatedBy, b.UpdatedAt.UnixMicro())
	return err
}

func (t *Tx) DebitBudget(ctx context.Context, e *brabo.BudgetEntry, capped bool) (bool, error) {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now().UTC()
	}
	q := `UPDATE budgets SET spent_micros = spent_micros + $1 WHERE project_id = $2`
	if capped {
		// One statement: on PostgreSQL a concurrent debit waits for the
		// row lock and then sees the new total.
		q += ` AND spent_micros + $1 <= limit_micros`
	}
	n, err := t.q.Exec(ctx, q, int64(e.Amount), e.ProjectID)
	if err != nil {
		return false, err
	}
	if n == 0 {
		if _, err := t.Budget(ctx, e.ProjectID); err != nil {
			return false, err
		}
		return false, nil
	}
	err = t.q.QueryRow(ctx, `INSERT INTO budget_entries (project_id, kind, amount_micros, action_id, agent_id,
		input_tokens, output_tokens, note, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9) RETURNING id`,
		e.ProjectID, e.Kind, int64(e.Amount), nullString(e.ActionID), nullString(e.AgentID), e.InputTokens, e.OutputTokens,
		e.Note, e.CreatedAt.UnixMicro()).Scan(&e.ID)
	return err == nil, err
}

func (t *Tx) BudgetEntries(ctx context.Context, projectID string, limit int) ([]brabo.BudgetEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	return queryAll(ctx, t.q, func(r Row) (brabo.BudgetEntry, error) {
		var e brabo.BudgetEntry
		var actionID, agentID sql.NullString
		var created int64
		err := r.Scan(&e.ID, &e.ProjectID, &e.Kind, &e.Amount, &actionID, &agentID, &e.InputTokens, &e.OutputTokens,
			&e.Note, &created)
		e.ActionID, e.AgentID, e.CreatedAt = actionID.String, agentID.String, time.UnixMicro(created).UTC()
		return e, err
	}, `SELECT id, project_id, kind, amount_micros, action_id, agent_id, input_tokens, output_tokens, note, created_at
		FROM budget_entries WHERE project_id = $1 ORDER BY id DESC LIMIT $2`, projectID, limit)
}

func (t *Tx) ModuleMap(ctx context.Context, projectID string) (*brabo.ModuleMap, error) {
	m := &brabo.ModuleMap{}
	var modules string
	var updated int64
	err := t.q.QueryRow(ctx, `SELECT project_id, modules, updated_by, updated_at FROM module_maps WHERE project_id = $1`,
		projectID).Scan(&m.ProjectID, &modules, &m.UpdatedBy, &updated)
	if err != nil {
		return nil, t.notFound(err, "module map of project "+projectID)
	}
	if err := json.Unmarshal([]byte(modules), &m.Modules); err != nil {
		return nil, fmt.Errorf("module map of project %s: %w", projectID, err)
	}
	m.UpdatedAt = time.UnixMicro(updated).UTC()
	return m, nil
}

func (t *Tx) PutModuleMap(ctx context.Context, m *brabo.ModuleMap) error {
	modules := m.Modules
	if modules == nil {
		modules = []brabo.Module{}
	}
	s, err := jsonText(modules)
	if err != nil {
		return err
	}
	_, err = t.q.Exec(ctx, `INSERT INTO module_maps (project_id, modules, updated_by, updated_at) VALUES ($1,$2,$3,$4)
		ON CONFLICT (project_id) DO UPDATE SET modules = excluded.modules, updated_by = excluded.updated_by,
		updated_at = excluded.updated_at`, m.ProjectID, s, m.UpdatedBy, m.UpdatedAt.UnixMicro())
	return err
}

const containerCols = `project_id, state, name, container_id, image, cpus, memory_mb, workspace_verified_at, error, action_id, updated_at`

func scanContainer(r Row) (*brabo.ProjectContainer, error) {
	c := &brabo.ProjectContainer{}
	var verified sql.NullInt64
	var updated int64
	err := r.Scan(&c.ProjectID, &c.State, &c.Name, &c.ContainerID, &c.Image, &c.Resources.CPUs, &c.Resources.MemoryMB,
		&verified, &c.Error, &c.ActionID, &updated)
	c.WorkspaceVerifiedAt, c.UpdatedAt = fromMicros(verified), time.UnixMicro(updated).UTC()
	return c, err
}

func (t *Tx) ProjectContainer(ctx context.Context, projectID string) (*brabo.ProjectContainer, error) {
	c, err := scanContainer(t.q.QueryRow(ctx, `SELECT `+containerCols+` FROM project_containers WHERE project_id = $1`, projectID))
	if err != nil {
		return nil, t.notFound(err, "container of project "+projectID)
	}
	return c, nil
}

func (t *Tx) PutProjectContainer(ctx context.Context, c *brabo.ProjectContainer) error {
	_, err := t.q.Exec(ctx, `INSERT INTO project_containers (`+containerCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)
		ON CONFLICT (project_id) DO UPDATE SET state = excluded.state, name = excluded.name,
		container_id = excluded.container_id, image = excluded.image, cpus = excluded.cpus, memory_mb = excluded.memory_mb,
		workspace_verified_at = excluded.workspace_verified_at, error = excluded.error, action_id = excluded.action_id,
		updated_at = excluded.updated_at`,
		c.ProjectID, string(c.State), c.Name, c.ContainerID, c.Image, c.Resources.CPUs, c.Resources.MemoryMB,
		micros(c.WorkspaceVerifiedAt), c.Error, c.ActionID, c.UpdatedAt.UnixMicro())
	return err
}

func (t *Tx) ProjectContainers(ctx context.Context) ([]*brabo.ProjectContainer, error) {
	return queryAll(ctx, t.q, scanContainer, `SELECT `+containerCols+` FROM project_containers ORDER BY project_id`)
}
