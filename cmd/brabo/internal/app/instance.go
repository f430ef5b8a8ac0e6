package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/internal/procs"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"github.com/brabo-dev/brabo/pipeline"
)

// confinement is how the terminal commands of a process whose data folder
// is data are confined (docs/processes.md): by brabo itself as the
// launcher (brabo-sandbox beside it when there is one, sandboxBinary),
// out of reach of the data folder, with a cache folder per project under
// <data>/caches. Nil (unconfined) when data is "" or the
// binary cannot be found.
func confinement(data string) *executor.Confinement {
	if data == "" {
		return nil
	}
	bin := sandboxBinary()
	if bin.err != nil {
		return nil
	}
	abs, err := filepath.Abs(data)
	if err != nil {
		return nil
	}
	return &executor.Confinement{Launcher: bin.path, Hide: []string{abs}, CacheRoot: filepath.Join(abs, "caches")}
}

// landlockStatus logs whether terminal commands are confined and returns
// what /healthz says of it.
func landlockStatus(log *slog.Logger) string {
	abi, err := confine.ABI()
	if err != nil {
		log.Warn("Landlock is missing: terminal commands run unconfined (they can write wherever brabo's user can)", "err", err)
		return "unavailable: " + err.Error()
	}
	log.Info("terminal commands are confined with Landlock", "abi", abi)
	return fmt.Sprintf("abi %d", abi)
}

// sandboxing is the sandbox the agents' commands run in, and, when they
// run outside one, why (pipeline.Service.Unsandboxed): --no-sandbox (the
// operator's choice, said at start), or a machine where bubblewrap cannot
// run one (said at start and logged; terminal actions then ask a human).
//
// hide are paths of the server's no command may read though they lie in a
// system folder the sandbox binds (the --db-file in /etc).
func sandboxing(noSandbox bool, hide []string, log *slog.Logger, stdout io.Writer) (*sandbox.Sandbox, string) {
	if noSandbox {
		fmt.Fprintln(stdout, "Sandbox: OFF (--no-sandbox): the agents' commands run unsandboxed; they can read what brabo's user reads, reach the network and other projects; every card says so")
		log.Warn("--no-sandbox: the agents' commands run unsandboxed")
		return nil, pipeline.UnsandboxedChosen
	}
	bin := sandboxBinary()
	if bin.err != nil {
		log.Error("the sandbox needs brabo's own binary", "err", bin.err)
		return nil, pipeline.UnsandboxedMissing
	}
	if bin.why != "" {
		log.Warn("brabo-sandbox is passed over: sandboxed commands start brabo's own binary, which is slower", "why", bin.why)
	}
	sb := &sandbox.Sandbox{Helper: bin.path, Hide: hide}
	if err := sb.Check(); err != nil {
		fmt.Fprintf(stdout, "Sandbox: unavailable (%v): every terminal action asks a human, and its card says it runs unsandboxed\n", err)
		log.Warn("bubblewrap cannot run a sandbox here: terminal actions are never auto-approved", "err", err)
		return nil, pipeline.UnsandboxedMissing
	}
	log.Info("the agents' commands run in the bubblewrap sandbox")
	return sb, ""
}

// sandboxHealth is what /healthz says of the sandbox.
func sandboxHealth(sb *sandbox.Sandbox, unsandboxed string) string {
	if sb != nil {
		return "bubblewrap"
	}
	return unsandboxed
}

// defaultStopGrace is how long a running command gets between SIGTERM and
// SIGKILL when brabo stops (BRABO_STOP_GRACE).
const defaultStopGrace = 5 * time.Second

// stopGrace reads BRABO_STOP_GRACE (a Go duration); an unreadable value is
// logged and the default used.
func stopGrace(log *slog.Logger) time.Duration {
	v := os.Getenv("BRABO_STOP_GRACE")
	if v == "" {
		return defaultStopGrace
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		log.Warn("BRABO_STOP_GRACE is not a positive duration; using the default", "value", v, "default", defaultStopGrace)
		return defaultStopGrace
	}
	return d
}

// instance is the process bookkeeping of a process that executes actions
// (serve, agent), see docs/processes.md: it is a child subreaper, so the
// descendants of its commands stay its children; it is an instance of the
// store, with a lease it renews; and every action it executes is recorded
// as running until it settles.
type instance struct {
	svc   *pipeline.Service
	ex    *executor.Executor
	log   *slog.Logger
	grace time.Duration
	stop  context.CancelFunc
	done  chan struct{}
}

// startInstance sets svc up as an instance of its store and registers
// it, a child subreaper unless told not (subreaper). soleOwner (SQLite) recovers every action a previous process left
// claimed; otherwise only those of dead instances (RecoverDead), since
// other live instances share the database.
func startInstance(ctx context.Context, svc *pipeline.Service, ex *executor.Executor, soleOwner, subreaper bool, log *slog.Logger) (*instance, error) {
	if !subreaper {
		log.Info("not a child subreaper (Config.NotSubreaper): a command's escaped descendants become init's children")
	} else if err := procs.BecomeSubreaper(); err != nil {
		log.Warn("brabo cannot be a child subreaper: a command's escaped descendants become init's children; they are still found by their BRABO_ACTION_ID", "err", err)
	}
	in := &instance{svc: svc, ex: ex, log: log, grace: stopGrace(log), done: make(chan struct{})}
	svc.Processes = &procs.Host{}
	svc.InstanceID = brabo.NewID("inst")
	svc.StopGrace = in.grace
	if err := svc.Register(ctx); err != nil {
		return nil, err
	}
	recoverFn := svc.RecoverDead
	if soleOwner {
		recoverFn = svc.Recover
	}
	if n, err := recoverFn(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		log.Warn("actions interrupted by the last stop were marked failed", "count", n)
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	in.stop = cancel
	go func() { defer close(in.done); svc.Heartbeat(hctx) }()
	return in, nil
}

// stopActions ends the actions running now (graceful shutdown): SIGTERM to
// every process of each, SIGKILL after the grace period; each settles
// failed with the reason and its approver gets that answer.
func (in *instance) stopActions(why string) {
	ctx, cancel := context.WithTimeout(context.Background(), in.grace+30*time.Second)
	defer cancel()
	if err := in.ex.Stop(ctx, in.grace, why); err != nil {
		in.log.Error("stopping the running actions", "err", err)
	}
}

// close stops the lease's renewal and removes the instance's row, once
// every action it ran has settled; what is left of the commands' processes
// (descendants that shed both their group and BRABO_ACTION_ID, still
// brabo's as a subreaper) is stopped too.
func (in *instance) close() {
	sctx, scancel := context.WithTimeout(context.Background(), in.grace+10*time.Second)
	if n, err := procs.StopDescendants(sctx, in.grace); err != nil || n > 0 {
		in.log.Warn("stopped what the commands left running outside their actions", "count", n, "err", err)
	}
	scancel()
	in.stop()
	<-in.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := in.svc.Unregister(ctx); err != nil {
		in.log.Warn("removing this instance's row", "err", err)
	}
}
