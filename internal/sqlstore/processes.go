package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
)

// Processes ----------------------------------------------------------------
//
// What brabo's processes record so that what a dead one left running can
// be found and stopped (docs/processes.md): the project's process
// settings, one row per live instance, one row per running action.

// SetProjectProcesses writes the project's git_hooks and max_timeout_sec
// (brabo.Tx).
func (t *Tx) SetProjectProcesses(ctx context.Context, projectID string, gitHooks bool, maxTimeoutSec int) error {
	n, err := t.q.Exec(ctx, `UPDATE projects SET git_hooks = $1, max_timeout_sec = $2 WHERE id = $3`,
		gitHooks, maxTimeoutSec, projectID)
	if err == nil && n == 0 {
		return fmt.Errorf("project %s: %w", projectID, brabo.ErrNotFound)
	}
	return err
}

const instanceCols = `id, host, boot_id, pid, pid_start, started_at, lease_until`

// PutInstance inserts or replaces the instance's row (brabo.Tx).
func (t *Tx) PutInstance(ctx context.Context, in *brabo.Instance) error {
	_, err := t.q.Exec(ctx, `INSERT INTO instances (`+instanceCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7)
		ON CONFLICT (id) DO UPDATE SET host = excluded.host, boot_id = excluded.boot_id, pid = excluded.pid,
			pid_start = excluded.pid_start, started_at = excluded.started_at, lease_until = excluded.lease_until`,
		in.ID, in.Host, in.BootID, in.PID, in.PIDStart, in.StartedAt.UnixMicro(), in.LeaseUntil.UnixMicro())
	return err
}

func scanInstance(r Row) (*brabo.Instance, error) {
	in := &brabo.Instance{}
	var started, until int64
	err := r.Scan(&in.ID, &in.Host, &in.BootID, &in.PID, &in.PIDStart, &started, &until)
	in.StartedAt, in.LeaseUntil = time.UnixMicro(started).UTC(), time.UnixMicro(until).UTC()
	return in, err
}

// Instances lists the instances, oldest first (brabo.Tx).
func (t *Tx) Instances(ctx context.Context) ([]*brabo.Instance, error) {
	return queryAll(ctx, t.q, scanInstance, `SELECT `+instanceCols+` FROM instances ORDER BY started_at, id`)
}

// DeleteInstance removes the instance's row (brabo.Tx).
func (t *Tx) DeleteInstance(ctx context.Context, id string) error {
	_, err := t.q.Exec(ctx, `DELETE FROM instances WHERE id = $1`, id)
	return err
}

const runningCols = `action_id, instance_id, host, boot_id, pgid, leader_start, started_at`

// PutRunning inserts or replaces the action's running record (brabo.Tx).
func (t *Tx) PutRunning(ctx context.Context, r *brabo.RunningAction) error {
	_, err := t.q.Exec(ctx, `INSERT INTO running_actions (`+runningCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7)
		ON CONFLICT (action_id) DO UPDATE SET instance_id = excluded.instance_id, host = excluded.host,
			boot_id = excluded.boot_id, pgid = excluded.pgid, leader_start = excluded.leader_start,
			started_at = excluded.started_at`,
		r.ActionID, r.InstanceID, r.Host, r.BootID, r.PGID, r.LeaderStart, r.StartedAt.UnixMicro())
	return err
}

// FinishRunning removes the action's running record (brabo.Tx).
func (t *Tx) FinishRunning(ctx context.Context, actionID string) error {
	_, err := t.q.Exec(ctx, `DELETE FROM running_actions WHERE action_id = $1`, actionID)
	return err
}

func scanRunning(r Row) (*brabo.RunningAction, error) {
	ra := &brabo.RunningAction{}
	var started int64
	err := r.Scan(&ra.ActionID, &ra.InstanceID, &ra.Host, &ra.BootID, &ra.PGID, &ra.LeaderStart, &started)
	ra.StartedAt = time.UnixMicro(started).UTC()
	return ra, err
}

// RunningActions lists the running records, oldest first (brabo.Tx).
func (t *Tx) RunningActions(ctx context.Context) ([]*brabo.RunningAction, error) {
	return queryAll(ctx, t.q, scanRunning, `SELECT `+runningCols+` FROM running_actions ORDER BY started_at, action_id`)
}
