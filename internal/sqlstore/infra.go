package sqlstore

import (
	"context"
	"fmt"

	"github.com/brabo-dev/brabo"
)

// InfraAgent is the id of the project's infra agent, "" when it has none.
func (t *Tx) InfraAgent(ctx context.Context, projectID string) (string, error) {
	var id string
	err := t.q.QueryRow(ctx, `SELECT infra_agent_id FROM projects WHERE id = $1`, projectID).Scan(&id)
	if err != nil {
		return "", t.notFound(err, "project "+projectID)
	}
	return id, nil
}

// SetInfraAgent names the project's infra agent ("" for none).
func (t *Tx) SetInfraAgent(ctx context.Context, projectID, agentID string) error {
	n, err := t.q.Exec(ctx, `UPDATE projects SET infra_agent_id = $1 WHERE id = $2`, agentID, projectID)
	if err == nil && n == 0 {
		return fmt.Errorf("project %s: %w", projectID, brabo.ErrNotFound)
	}
	return err
}
