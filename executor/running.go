package executor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procs"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// ErrStopping refuses an action that arrives while the executor stops.
var ErrStopping = errors.New("executor: brabo is stopping; the action was not started")

// run is one action the executor runs now.
type run struct {
	id      string
	since   int64 // NowTicks before it began: older processes are none of its own
	started func(brabo.ProcessGroup)
	cancel  context.CancelCauseFunc

	mu      sync.Mutex
	group   brabo.ProcessGroup
	stopped string // why Stop ended it, "" while it was not stopped
}

type runKey struct{}

// runOf returns the run ctx belongs to, nil outside Execute.
func runOf(ctx context.Context) *run {
	r, _ := ctx.Value(runKey{}).(*run)
	return r
}

// target names the run's processes: its BRABO_ACTION_ID, the group g, and
// none started before it began.
func (r *run) target(g brabo.ProcessGroup) procs.Target {
	return procs.Target{ActionID: r.id, PGID: g.PGID, LeaderStart: g.LeaderStart, Since: r.since}
}

// stopReason is why Stop ended the run, "" when it did not.
func (r *run) stopReason() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// begin registers a run for req; it fails once Stop has begun.
func (e *Executor) begin(ctx context.Context, req brabo.ExecRequest) (context.Context, *run, error) {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.stopping {
		return nil, nil, ErrStopping
	}
	r := &run{id: req.Action.ID, since: procs.NowTicks() - 1, started: req.Started}
	ctx, r.cancel = context.WithCancelCause(context.WithValue(ctx, runKey{}, r))
	if e.running == nil {
		e.running = map[*run]bool{}
	}
	e.running[r] = true
	e.runWG.Add(1)
	return ctx, r, nil
}

// leftBehindGrace is how long an action's orphans (Orphans) get to end by
// themselves once its command returned, before they are stopped.
const leftBehindGrace = 2 * time.Second

// end stops whatever the action left running, then unregisters it. A
// command is over when its runner returns: a descendant that left the
// process group (setsid, a double fork) still carries BRABO_ACTION_ID
// and is killed here, so nothing of an action outlives it.
func (e *Executor) end(r *run) {
	r.mu.Lock()
	g := r.group
	r.mu.Unlock()
	_, _ = procs.Stop(context.Background(), r.target(g), 0)
	// What shed both its group and its BRABO_ACTION_ID (env -i setsid …)
	// is still brabo's as a subreaper: the action ends, and the pipeline's
	// integrity check runs, only once that has ended too.
	_, _ = procs.EndOrphans(context.Background(), r.id, r.since, leftBehindGrace)
	r.cancel(nil)
	e.runMu.Lock()
	delete(e.running, r)
	e.runMu.Unlock()
	e.runWG.Done()
}

// start starts cmd for the action of ctx (through procs.Start, so that a
// subreaper's reaper leaves it alone) and records its process group: cmd
// runs in a session of its own, so its group id is its pid. A sandboxed
// command (prep, applied to cmd) starts through prep.Start, which under
// root does the root helper's work in a thread of this process instead of
// starting the helper: one process start less per command.
func (e *Executor) start(ctx context.Context, cmd *exec.Cmd, prep *sandbox.Prepared) error {
	start := procs.Start
	if prep != nil {
		start = prep.Start
	}
	if err := start(cmd); err != nil {
		return err
	}
	r := runOf(ctx)
	if r == nil {
		return nil
	}
	g := brabo.ProcessGroup{PGID: cmd.Process.Pid, LeaderStart: procs.StartTicks(cmd.Process.Pid)}
	r.mu.Lock()
	r.group = g
	stopped := r.stopped != ""
	r.mu.Unlock()
	if stopped {
		// Stop began before the group was known: its SIGTERM may have
		// missed this one, so it gets its own. Its SIGKILL comes with
		// the rest of the action's, once Stop's grace is over (Stop ends
		// the run's context, and the context's Cancel kills the group),
		// so a command that was already running when Stop looked keeps
		// its grace period.
		_ = syscall.Kill(-g.PGID, syscall.SIGTERM)
	}
	if r.started != nil {
		r.started(g)
	}
	return nil
}

// Stop stops the executor (a graceful shutdown of brabo): it refuses new
// actions (ErrStopping) and ends the running ones. Each gets SIGTERM on
// every process (its group and every process carrying its
// BRABO_ACTION_ID), SIGKILL to what is left after grace, and its Result
// says why: "interrupted: <why>; …". Stop returns when every runner has
// returned, or when ctx ends.
func (e *Executor) Stop(ctx context.Context, grace time.Duration, why string) error {
	e.runMu.Lock()
	e.stopping = true
	runs := make([]*run, 0, len(e.running))
	for r := range e.running {
		runs = append(runs, r)
	}
	e.runMu.Unlock()

	reason := fmt.Sprintf("interrupted: %s while this action ran; its processes were stopped (SIGTERM, then SIGKILL after %s); it may have run partly", why, grace)
	var wg sync.WaitGroup
	for _, r := range runs {
		r.mu.Lock()
		r.stopped = reason
		g := r.group
		r.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = procs.Stop(ctx, r.target(g), grace)
			// The runner's context ends too: a git action between two
			// steps starts none, and a process started meanwhile dies.
			r.cancel(errors.New(reason))
		}()
	}
	wg.Wait()
	done := make(chan struct{})
	go func() { e.runWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("executor: stopping: %w", ctx.Err())
	}
}
