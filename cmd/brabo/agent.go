package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/pipeline"
)

// runAgent runs the dev agents on a real model, without the HTTP API: a
// second process beside `brabo serve` on the same PostgreSQL database, or
// on its own over a SQLite file that no server holds.
func runAgent(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("agent")
	var sf storeFlags
	sf.register(fl)
	modelSpec := fl.String("model", os.Getenv("BRABO_MODEL"), "openai:<model> (OPENAI_BASE_URL, OPENAI_API_KEY), anthropic:<model> (ANTHROPIC_API_KEY) or scripted:<path> (env BRABO_MODEL)")
	workspaces := fl.String("workspaces", os.Getenv("BRABO_WORKSPACES"), "the folder of container and runner projects (default <data>/workspaces)")
	passEnv := fl.String("pass-env", os.Getenv("BRABO_PASS_ENV"), "comma-separated names of more variables approved commands may see")
	var cf containerFlags
	cf.register(fl)
	var lim limits
	lim.registerWaitCap(fl)
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	if _, err := sf.isSQLite(); err != nil {
		return usageError(stderr, "agent", "%v", err)
	}
	if err := lim.checkWaitCap(); err != nil {
		return usageError(stderr, "agent", "%v", err)
	}
	if err := checkPassEnv(*passEnv, sf); err != nil {
		return usageError(stderr, "agent", "%v", err)
	}
	if *modelSpec == "" {
		return usageError(stderr, "agent", "no model: set --model or BRABO_MODEL (e.g. openai:gpt-4.1 with OPENAI_API_KEY)")
	}
	m, err := openModel(*modelSpec)
	if err != nil {
		return usageError(stderr, "agent", "--model: %v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	release, _, err := sf.lock()
	defer release()
	if err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	store, _, err := sf.open(ctx)
	if err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	defer store.Close()
	data, err := sf.dataDir()
	if err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	if *workspaces == "" {
		*workspaces = filepath.Join(data, "workspaces")
	}
	ws, _ := filepath.Abs(*workspaces)
	sb, unsandboxed := sandboxing(false, sf.hidden(), log, io.Discard)
	ex := newExecutor(procenv.Filter(os.Environ(), strings.Split(*passEnv, ",")), data, store, sb, nil)
	svc := &pipeline.Service{Store: store, WorkspacesRoot: ws, Log: log, Executor: ex, Unsandboxed: unsandboxed}
	svc.Protect = protection(data, procenv.Filter(os.Environ(), strings.Split(*passEnv, ",")))
	if err := cf.apply(svc); err != nil {
		return usageError(stderr, "agent", "%v", err)
	}
	landlockStatus(log)
	inst, err := startInstance(ctx, svc, ex, false, log)
	if err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	defer inst.close()
	if err := migrateClickAutonomy(ctx, svc, log); err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	// The agents stop after their running actions, which end with the
	// shutdown's reason.
	actx, stopAgents := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAgents()
	ag, err := startAgents(actx, store, svc, m, false, lim.waitCap, log)
	if err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	fmt.Fprintf(stdout, "brabo agent: dev agents run on %s; stop with Ctrl-C\n", *modelSpec)
	<-ctx.Done()
	inst.stopActions("brabo agent was stopped (" + context.Cause(ctx).Error() + ")")
	stopAgents()
	ag.Wait()
	return 0
}
