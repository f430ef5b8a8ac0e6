package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
	"github.com/brabo-dev/brabo/internal/procenv"
)

// runAgent runs the dev agents on a real model, without the HTTP API: a
// second process beside `brabo serve` on the same PostgreSQL database, or
// on its own over a SQLite file that no server holds. It is wired as
// brabo serve is (app.Open): the projects' webhooks are told of its
// actions, and the pending and running caps hold.
func runAgent(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("agent")
	var sf storeFlags
	sf.register(fl)
	modelSpec := fl.String("model", os.Getenv("BRABO_MODEL"), "openai:<model> (OPENAI_BASE_URL, OPENAI_API_KEY), anthropic:<model> (ANTHROPIC_API_KEY) or scripted:<path> (env BRABO_MODEL)")
	workspaces := fl.String("workspaces", os.Getenv("BRABO_WORKSPACES"), "the folder of container and runner projects (default <data>/workspaces)")
	passEnv := fl.String("pass-env", os.Getenv("BRABO_PASS_ENV"), "comma-separated names of more variables approved commands may see")
	publicURL := fl.String("public-url", os.Getenv("BRABO_PUBLIC_URL"), "the address people open brabo serve at, for the links notifications carry (default "+app.DefaultPublicURL+"; env BRABO_PUBLIC_URL)")
	var cf containerFlags
	cf.register(fl)
	var lim limits
	lim.registerPipeline(fl)
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	if _, err := sf.isSQLite(); err != nil {
		return usageError(stderr, "agent", "%v", err)
	}
	if err := lim.check(); err != nil {
		return usageError(stderr, "agent", "%v", err)
	}
	if err := checkPassEnv(*passEnv, sf); err != nil {
		return usageError(stderr, "agent", "%v", err)
	}
	if *modelSpec == "" {
		return usageError(stderr, "agent", "no model: set --model or BRABO_MODEL (e.g. openai:gpt-4.1 with OPENAI_API_KEY)")
	}
	m, err := app.OpenModel(*modelSpec)
	if err != nil {
		return usageError(stderr, "agent", "--model: %v", err)
	}
	data, err := sf.dataDir()
	if err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg := app.Config{Name: "brabo agent", Data: data, DB: sf.db, Hidden: sf.hidden(), Workspaces: *workspaces, PublicURL: *publicURL,
		Env: procenv.Filter(os.Environ(), strings.Split(*passEnv, ",")), Model: m,
		ContainerEngine: cf.engine, ContainerImage: cf.image, Log: log}
	lim.apply(&cfg)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	defer a.Close()
	if err := a.Start(ctx); err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	fmt.Fprintf(stdout, "brabo agent: dev agents run on %s; stop with Ctrl-C\n", *modelSpec)
	a.Wait(ctx)
	if err := a.Shutdown("brabo agent was stopped (" + context.Cause(ctx).Error() + ")"); err != nil {
		return fail(stderr, "agent", "%v", err)
	}
	return 0
}
