package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
)

// Tasks -------------------------------------------------------------------

const taskCols = `id, project_id, title, description, agent_id, status, blocked_reason, blocked_origin, created_at, updated_at`

func scanTask(r Row) (*brabo.Task, error) {
	t := &brabo.Task{}
	var agent, reason, origin sql.NullString
	var created, updated int64
	err := r.Scan(&t.ID, &t.ProjectID, &t.Title, &t.Description, &agent, &t.Status, &reason, &origin, &created, &updated)
	t.AgentID, t.BlockedReason, t.BlockedOrigin = agent.String, reason.String, brabo.Origin(origin.String)
	t.CreatedAt, t.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return t, err
}

func (t *Tx) CreateTask(ctx context.Context, task *brabo.Task) error {
	if task.UpdatedAt.IsZero() {
		task.UpdatedAt = task.CreatedAt
	}
	_, err := t.q.Exec(ctx, `INSERT INTO tasks (`+taskCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
		task.ID, task.ProjectID, task.Title, task.Description, nullString(task.AgentID), string(task.Status),
		nullString(task.BlockedReason), nullString(string(task.BlockedOrigin)), task.CreatedAt.UnixMicro(), task.UpdatedAt.UnixMicro())
	return t.conflict(err, "task "+task.ID)
}

func (t *Tx) Task(ctx context.Context, id string) (*brabo.Task, error) {
	task, err := scanTask(t.q.QueryRow(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = $1`, id))
	if err != nil {
		return nil, t.notFound(err, "task "+id)
	}
	return task, nil
}

func (t *Tx) Tasks(ctx context.Context, projectID string) ([]*brabo.Task, error) {
	return queryAll(ctx, t.q, scanTask, `SELECT `+taskCols+` FROM tasks WHERE project_id = $1 ORDER BY created_at, id`, projectID)
}

func (t *Tx) UpdateTask(ctx context.Context, task *brabo.Task) error {
	n, err := t.q.Exec(ctx, `UPDATE tasks SET status = $1, blocked_reason = $2, blocked_origin = $3, agent_id = $4, updated_at = $5
		WHERE id = $6`, string(task.Status), nullString(task.BlockedReason), nullString(string(task.BlockedOrigin)),
		nullString(task.AgentID), task.UpdatedAt.UnixMicro(), task.ID)
	if err == nil && n == 0 {
		return fmt.Errorf("task %s: %w", task.ID, brabo.ErrNotFound)
	}
	return err
}

func (t *Tx) ClaimTask(ctx context.Context, taskID, agentID string, now time.Time) (bool, error) {
	n, err := t.q.Exec(ctx, `UPDATE tasks SET status = $1, agent_id = $2, updated_at = $3 WHERE id = $4 AND status = $5`,
		string(brabo.TaskInProgress), agentID, now.UnixMicro(), taskID, string(brabo.TaskTodo))
	return n == 1, err
}

func (t *Tx) ClaimTaskWithin(ctx context.Context, taskID, agentID string, now time.Time) (bool, error) {
	var projectID string
	if err := t.q.QueryRow(ctx, `SELECT project_id FROM tasks WHERE id = $1`, taskID).Scan(&projectID); err != nil {
		return false, t.notFound(err, "task "+taskID)
	}
	// The project's row is held until the transaction ends, so the count
	// below sees every claim committed before this one (SQLite has one
	// writer at a time already).
	lock := ""
	if !t.d.SerialWriter {
		lock = " FOR UPDATE"
	}
	var max int
	if err := t.q.QueryRow(ctx, `SELECT max_parallel FROM projects WHERE id = $1`+lock, projectID).Scan(&max); err != nil {
		return false, t.notFound(err, "project "+projectID)
	}
	var working int
	if err := t.q.QueryRow(ctx, `SELECT COUNT(*) FROM tasks WHERE project_id = $1 AND status = $2`,
		projectID, string(brabo.TaskInProgress)).Scan(&working); err != nil {
		return false, err
	}
	if working >= max {
		return false, nil
	}
	return t.ClaimTask(ctx, taskID, agentID, now)
}

func (t *Tx) SetProjectAgents(ctx context.Context, projectID string, maxParallel, waitCapSec int) error {
	if maxParallel < 1 || waitCapSec < 0 {
		return fmt.Errorf("project %s: maxParallel %d (want at least 1), waitCapSec %d (want 0 or more)", projectID, maxParallel, waitCapSec)
	}
	n, err := t.q.Exec(ctx, `UPDATE projects SET max_parallel = $1, wait_cap_sec = $2 WHERE id = $3`, maxParallel, waitCapSec, projectID)
	if err == nil && n == 0 {
		return fmt.Errorf("project %s: %w", projectID, brabo.ErrNotFound)
	}
	return err
}

// Runs --------------------------------------------------------------------

const runCols = `id, project_id, actor_key, task_id, state, awaiting_action_id, ctx, lease_owner, lease_until, updated_at, deadline`

func scanRun(r Row) (*brabo.Run, error) {
	run := &brabo.Run{}
	var task, awaiting, ctxText, owner sql.NullString
	var until, deadline sql.NullInt64
	var updated int64
	err := r.Scan(&run.ID, &run.ProjectID, &run.ActorKey, &task, &run.State, &awaiting, &ctxText, &owner, &until, &updated, &deadline)
	run.Deadline = fromMicros(deadline)
	run.TaskID, run.AwaitingActionID, run.LeaseOwner = task.String, awaiting.String, owner.String
	if ctxText.Valid {
		run.Ctx = json.RawMessage(ctxText.String)
	}
	run.LeaseUntil = fromMicros(until)
	run.UpdatedAt = time.UnixMicro(updated).UTC()
	return run, err
}

func (t *Tx) SaveRun(ctx context.Context, r *brabo.Run) error {
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = time.Now().UTC()
	}
	var ctxText any
	if len(r.Ctx) > 0 {
		ctxText = string(r.Ctx)
	}
	// A deadline belongs to a wait: a run saved in any other state has
	// none, whatever the caller left in it.
	var deadline any
	if r.State == brabo.RunAwaitingApproval || r.State == brabo.RunAwaitingPR {
		deadline = micros(r.Deadline)
	}
	_, err := t.q.Exec(ctx, `INSERT INTO runs (id, project_id, actor_key, task_id, state, awaiting_action_id, ctx, updated_at, deadline)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)
		ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id, actor_key = excluded.actor_key,
			state = excluded.state, awaiting_action_id = excluded.awaiting_action_id,
			ctx = excluded.ctx, task_id = excluded.task_id, updated_at = excluded.updated_at, deadline = excluded.deadline`,
		r.ID, r.ProjectID, r.ActorKey, nullString(r.TaskID), string(r.State), nullString(r.AwaitingActionID),
		ctxText, r.UpdatedAt.UnixMicro(), deadline)
	return err
}

func (t *Tx) Run(ctx context.Context, id string) (*brabo.Run, error) {
	run, err := scanRun(t.q.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = $1`, id))
	if err != nil {
		return nil, t.notFound(err, "run "+id)
	}
	return run, nil
}

func (t *Tx) AwaitingRun(ctx context.Context, actorKey, actionID string) (*brabo.Run, error) {
	run, err := scanRun(t.q.QueryRow(ctx, `SELECT `+runCols+` FROM runs
		WHERE actor_key = $1 AND awaiting_action_id = $2 AND state IN ($3, $4) ORDER BY updated_at DESC LIMIT 1`,
		actorKey, actionID, string(brabo.RunAwaitingApproval), string(brabo.RunAwaitingPR)))
	if err != nil {
		return nil, t.notFound(err, "run of "+actorKey+" awaiting "+actionID)
	}
	return run, nil
}

func (t *Tx) WaitingRun(ctx context.Context, actorKey string) (*brabo.Run, error) {
	run, err := scanRun(t.q.QueryRow(ctx, `SELECT `+runCols+` FROM runs
		WHERE actor_key = $1 AND state IN ($2, $3) ORDER BY updated_at DESC LIMIT 1`,
		actorKey, string(brabo.RunAwaitingApproval), string(brabo.RunAwaitingPR)))
	if err != nil {
		return nil, t.notFound(err, "waiting run of "+actorKey)
	}
	return run, nil
}

func (t *Tx) LeaveWait(ctx context.Context, runID, actionID string, to brabo.RunState, now time.Time) (bool, error) {
	n, err := t.q.Exec(ctx, `UPDATE runs SET state = $1, awaiting_action_id = NULL, deadline = NULL, updated_at = $2
		WHERE id = $3 AND awaiting_action_id = $4 AND state IN ($5, $6)`,
		string(to), now.UnixMicro(), runID, actionID, string(brabo.RunAwaitingApproval), string(brabo.RunAwaitingPR))
	return n == 1, err
}

func (t *Tx) RunsInState(ctx context.Context, state brabo.RunState) ([]*brabo.Run, error) {
	return queryAll(ctx, t.q, scanRun, `SELECT `+runCols+` FROM runs WHERE state = $1 ORDER BY updated_at, id`, string(state))
}

func (t *Tx) WaitingAgents(ctx context.Context) ([]brabo.WaitingAgent, error) {
	// An agent's actor key is "agent:<id>": the agent is found by its
	// primary key from the part after the prefix.
	return queryAll(ctx, t.q, func(r Row) (brabo.WaitingAgent, error) {
		var w brabo.WaitingAgent
		err := r.Scan(&w.RunID, &w.ProjectID, &w.State, &w.Agent.ID, &w.Agent.ProjectID, &w.Agent.Name, &w.ActionID, &w.ActionStatus)
		return w, err
	}, `SELECT r.id, r.project_id, r.state, g.id, g.project_id, g.name, r.awaiting_action_id, COALESCE(a.status, '')
		FROM runs r
		JOIN agents g ON g.id = substr(r.actor_key, 7)
		LEFT JOIN actions a ON a.id = r.awaiting_action_id
		WHERE r.state IN ($1, $2) AND r.actor_key LIKE 'agent:%' AND r.awaiting_action_id IS NOT NULL
		ORDER BY r.updated_at, r.id`, string(brabo.RunAwaitingApproval), string(brabo.RunAwaitingPR))
}

func (t *Tx) ExpiredRuns(ctx context.Context, now time.Time, limit int) ([]*brabo.Run, error) {
	if limit <= 0 {
		limit = 100
	}
	return queryAll(ctx, t.q, scanRun, `SELECT `+runCols+` FROM runs
		WHERE deadline IS NOT NULL AND deadline <= $1 AND state IN ($2, $3) ORDER BY deadline, id LIMIT $4`,
		now.UnixMicro(), string(brabo.RunAwaitingApproval), string(brabo.RunAwaitingPR), limit)
}

func (t *Tx) ClaimRun(ctx context.Context, id, owner string, now time.Time, lease time.Duration) (bool, error) {
	n, err := t.q.Exec(ctx, `UPDATE runs SET lease_owner = $1, lease_until = $2
		WHERE id = $3 AND (lease_owner IS NULL OR lease_owner = $1 OR lease_until < $4)`,
		owner, now.Add(lease).UnixMicro(), id, now.UnixMicro())
	return n == 1, err
}

func (t *Tx) ReleaseRun(ctx context.Context, id, owner string) error {
	_, err := t.q.Exec(ctx, `UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`, id, owner)
	return err
}
