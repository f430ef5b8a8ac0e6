package brabo

import (
	"context"
	"time"
)

// Instance is one brabo process (serve, agent) using a store, as the
// store knows it: where it runs and until when it promised to be alive.
// Several instances share a PostgreSQL database; a SQLite file has one.
type Instance struct {
	ID string
	// Host is the machine's host name; BootID the kernel's boot id
	// (/proc/sys/kernel/random/boot_id), which changes at every boot: a
	// pid recorded under another boot id names nothing alive.
	Host   string
	BootID string
	// PID is the process id; PIDStart its start time in clock ticks
	// since boot (/proc/<pid>/stat), so that a recycled pid is never
	// taken for the instance.
	PID       int
	PIDStart  int64
	StartedAt time.Time
	// LeaseUntil is when the instance is taken for dead unless it renews
	// its row: what tells other hosts it died.
	LeaseUntil time.Time
}

// RunningAction records an action whose execution is in progress: which
// instance runs it, on which host and boot, and the process group of the
// command it runs now. It exists from just before the executor starts until
// the transaction that settles the action, so that what a dead instance
// left running can be found and stopped.
type RunningAction struct {
	ActionID   string
	InstanceID string
	Host       string
	BootID     string
	// PGID is the process group of the command running now (0 before one
	// started); LeaderStart the group leader's start time in clock ticks
	// since boot, so that a recycled group id is not taken for it.
	PGID        int
	LeaderStart int64
	StartedAt   time.Time
}

// ProcessGroup is a process group an executor started for an action: its
// id and its leader's start time in clock ticks since boot.
type ProcessGroup struct {
	PGID        int
	LeaderStart int64
}

// Processes is what brabo can do with the processes of its own host: it
// knows this process's identity, tells whether another instance of this
// host is alive, and stops every process an action left. The pipeline
// uses it to recover what a dead instance left running; the implementation
// reads /proc.
type Processes interface {
	// Self is this process as an instance (ID, Host, BootID, PID,
	// PIDStart; the lease fields are the caller's).
	Self() Instance
	// Alive reports whether the instance runs now. Only an instance of
	// this host can be checked (same host and boot id, a live pid with the
	// same start time); for another host it reports whether its lease
	// holds at now.
	Alive(in *Instance, now time.Time) bool
	// StopAction stops every process of the action left on this host:
	// those carrying BRABO_ACTION_ID=<id> in their environment and those of
	// its recorded process group (when its leader is the one recorded, or
	// gone). It sends SIGTERM, then SIGKILL after grace, and returns how
	// many processes it signalled. It signals nothing when r names another
	// host or boot. For a record of this host (any boot) it then removes
	// the private temp folders the action's commands had, in this
	// process's temp folder.
	StopAction(ctx context.Context, r *RunningAction, grace time.Duration) (int, error)
}
