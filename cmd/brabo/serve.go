package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo"
	brabohttp "github.com/brabo-dev/brabo/http"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// storeFlags are the flags every subcommand that opens the store shares.
type storeFlags struct {
	data string
	db   string
}

func (f *storeFlags) register(fl *flag.FlagSet) {
	fl.StringVar(&f.data, "data", envOr("BRABO_DATA", ".brabo"), "the data folder: the SQLite file and the workspaces live here (env BRABO_DATA)")
	fl.StringVar(&f.db, "db", os.Getenv("BRABO_DB"), "the database: empty for SQLite in the data folder, or postgres://… (env BRABO_DB)")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// open opens the store the flags name; sqlite reports whether it is the
// single-process SQLite store.
func (f *storeFlags) open(ctx context.Context) (s brabo.Store, isSQLite bool, err error) {
	if strings.HasPrefix(f.db, "postgres://") || strings.HasPrefix(f.db, "postgresql://") {
		s, err := postgres.Open(ctx, f.db)
		return s, false, err
	}
	if f.db != "" {
		return nil, false, fmt.Errorf("--db %q: want empty (SQLite in the data folder) or a postgres:// URL", f.db)
	}
	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return nil, false, fmt.Errorf("--data: %w", err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(f.data, "brabo.db"))
	return st, true, err
}

func runMigrate(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var sf storeFlags
	sf.register(fl)
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	s, _, err := sf.open(context.Background())
	if err != nil {
		fmt.Fprintf(stderr, "brabo migrate: %v\n", err)
		return 1
	}
	s.Close()
	fmt.Fprintln(stdout, "brabo migrate: the database is at the latest version")
	return 0
}

func runServe(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var sf storeFlags
	sf.register(fl)
	addr := fl.String("addr", envOr("BRABO_ADDR", "127.0.0.1:8080"), "the address to listen on (env BRABO_ADDR)")
	workspaces := fl.String("workspaces", os.Getenv("BRABO_WORKSPACES"), "the folder of container and runner projects (default <data>/workspaces; env BRABO_WORKSPACES)")
	logLevel := fl.String("log-level", envOr("BRABO_LOG_LEVEL", "info"), "debug, info, warn or error (env BRABO_LOG_LEVEL)")
	modelSpec := fl.String("model", os.Getenv("BRABO_MODEL"), "the model the agents (dev agents, QA leads, dev leads) run on: openai:<model>, anthropic:<model> or scripted:<path>; empty runs no agent (env BRABO_MODEL)")
	passEnv := fl.String("pass-env", os.Getenv("BRABO_PASS_ENV"), "comma-separated names of more variables approved commands may see (env BRABO_PASS_ENV)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "brabo serve: --log-level: %v\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	env := procenv.Filter(os.Environ(), strings.Split(*passEnv, ","))
	var m model.Model
	if *modelSpec != "" {
		var err error
		if m, err = openModel(*modelSpec); err != nil {
			fmt.Fprintf(stderr, "brabo serve: --model: %v\n", err)
			return exitUsage
		}
	}
	if err := serve(sf, *addr, *workspaces, env, m, log, stdout); err != nil {
		log.Error("brabo serve stopped", "err", err)
		return 1
	}
	return 0
}

func serve(sf storeFlags, addr, workspaces string, env []string, m model.Model, log *slog.Logger, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store, isSQLite, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	dataAbs, err := filepath.Abs(sf.data)
	if err != nil {
		return err
	}
	if workspaces == "" {
		workspaces = filepath.Join(dataAbs, "workspaces")
	}
	if workspaces, err = filepath.Abs(workspaces); err != nil {
		return err
	}
	if err := os.MkdirAll(workspaces, 0o755); err != nil {
		return fmt.Errorf("--workspaces: %w", err)
	}
	ex := newExecutor(env, dataAbs)
	svc := &pipeline.Service{Store: store, Executor: ex, WorkspacesRoot: workspaces, Log: log}
	svc.Protect = protection(sf.data, env)
	// One process owns a SQLite file: what it left running is not running
	// anymore. On PostgreSQL only what dead instances left is recovered.
	inst, err := startInstance(ctx, svc, ex, isSQLite, log)
	if err != nil {
		return fmt.Errorf("recovering interrupted actions: %w", err)
	}
	defer inst.close()
	token, err := brabohttp.Bootstrap(ctx, store, "owner")
	if err != nil {
		return err
	}
	if token != "" {
		fmt.Fprintf(stdout, "First start: the admin token is\n\n    %s\n\nIt is shown once; keep it (export BRABO_TOKEN=%s).\n", token, token)
	}
	// The agents stop after the running actions (below), so that theirs
	// end with the shutdown's reason, not a cancelled context.
	actx, stopAgents := context.WithCancel(context.WithoutCancel(ctx))
	ag, err := startAgents(actx, store, svc, m, isSQLite, log)
	if err != nil {
		stopAgents()
		return err
	}
	defer func() { stopAgents(); ag.wait() }()
	api := &brabohttp.Server{Pipeline: svc, Store: store, Log: log, OwnPaths: []string{dataAbs}, DirProbe: probeDir}
	api.Health = map[string]any{"landlock": landlockStatus(log)}
	if ag.leads != nil {
		api.Conversations, api.Gates = ag.leads, ag.leads
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "brabo serving on http://%s\n", ln.Addr())
	log.Info("serving", "addr", ln.Addr().String(), "store", map[bool]string{true: "sqlite", false: "postgres"}[isSQLite])
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// Stop accepting at once; the requests in flight (an approval whose
	// command runs) get their answer once stopActions has ended the
	// commands and settled their actions.
	shutdown, cancel := context.WithTimeout(context.Background(), inst.grace+30*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(shutdown) }()
	inst.stopActions("brabo was stopped (" + context.Cause(ctx).Error() + ")")
	stopAgents()
	if err := <-shut; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// probeDir reports whether path is a directory brabo can write in, by
// creating and removing a file there.
func probeDir(path string) (isDir, writable bool, err error) {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !info.IsDir() {
		return false, false, nil
	}
	f, err := os.CreateTemp(path, ".brabo-probe-*")
	if err != nil {
		return true, false, nil
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true, true, nil
}
