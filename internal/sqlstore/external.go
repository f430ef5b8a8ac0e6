package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/brabo-dev/brabo"
)

// The columns of migration 00008: who runs an action brabo only decides
// (actions.execution), the kind of an agent's token (agents.kind), and the
// MCP tools a maintainer mapped (projects.mcp_tools).

// encodeExecution is the execution column of an action: NULL for an action
// brabo runs itself.
func encodeExecution(e *brabo.Execution) (any, error) {
	if e == nil {
		return nil, nil
	}
	return jsonText(e)
}

func decodeExecution(actionID string, s sql.NullString) (*brabo.Execution, error) {
	if !s.Valid || s.String == "" {
		return nil, nil
	}
	e := &brabo.Execution{}
	if err := json.Unmarshal([]byte(s.String), e); err != nil {
		return nil, fmt.Errorf("action %s execution: %w", actionID, err)
	}
	return e, nil
}

// encodeTools is the mcp_tools column: a JSON list, never NULL.
func encodeTools(tools []string) (string, error) {
	if tools == nil {
		tools = []string{}
	}
	return jsonText(tools)
}

func decodeTools(projectID, s string) ([]string, error) {
	tools := []string{}
	if s == "" {
		return tools, nil
	}
	if err := json.Unmarshal([]byte(s), &tools); err != nil {
		return nil, fmt.Errorf("project %s mcp_tools: %w", projectID, err)
	}
	return tools, nil
}

// SetProjectMcpTools replaces the project's mapped MCP tools.
func (t *Tx) SetProjectMcpTools(ctx context.Context, projectID string, tools []string) error {
	s, err := encodeTools(tools)
	if err != nil {
		return err
	}
	n, err := t.q.Exec(ctx, `UPDATE projects SET mcp_tools = $1 WHERE id = $2`, s, projectID)
	if err == nil && n == 0 {
		return fmt.Errorf("project %s: %w", projectID, brabo.ErrNotFound)
	}
	return err
}
