package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/model"
)

// storeFlags are the flags every subcommand that opens the store shares.
type storeFlags struct {
	data   string
	db     string
	dbFile string
	loaded bool
}

func (f *storeFlags) register(fl *flag.FlagSet) {
	fl.StringVar(&f.data, "data", envOr("BRABO_DATA", defaultDataDir()), "the data folder: the SQLite file and the workspaces live here; never inside a project folder (env BRABO_DATA)")
	fl.StringVar(&f.db, "db", os.Getenv("BRABO_DB"), "the database: empty for SQLite in the data folder, or postgres://… (env BRABO_DB); prefer BRABO_DB or --db-file, which keep the URL off the command line")
	fl.StringVar(&f.dbFile, "db-file", os.Getenv("BRABO_DB_FILE"), "a file holding the database URL (its first line), so that no password is on a command line (env BRABO_DB_FILE)")
}

// hidden are the store's files no sandboxed command may read even where
// the sandbox binds their folder: the --db-file.
func (f *storeFlags) hidden() []string {
	if f.dbFile == "" {
		return nil
	}
	abs, err := filepath.Abs(f.dbFile)
	if err != nil {
		return nil
	}
	return []string{abs}
}

// loadDBFile reads --db-file into db, once; giving both is refused.
func (f *storeFlags) loadDBFile() error {
	if f.loaded || f.dbFile == "" {
		return nil
	}
	if f.db != "" && os.Getenv("BRABO_DB") != f.db {
		return errors.New("--db and --db-file both name the database: give one")
	}
	b, err := os.ReadFile(f.dbFile)
	if err != nil {
		return fmt.Errorf("--db-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if f.db = strings.TrimSpace(line); f.db == "" {
		return fmt.Errorf("--db-file %s: the file is empty", f.dbFile)
	}
	f.loaded = true
	return nil
}

// defaultDataDir is the user's state folder for brabo: $XDG_STATE_HOME/brabo,
// or ~/.local/state/brabo. Not the working directory: a server started
// in a project folder would put its database inside the agents' scope,
// and no project could be made of that folder.
func defaultDataDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		// The XDG specification ignores a relative value.
		return filepath.Join(x, "brabo")
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return "" // dataDir refuses it, naming --data
	}
	return filepath.Join(home, ".local", "state", "brabo")
}

// dataDir is the data folder, absolute; an empty one (no home folder to
// put the default in) is refused naming the flag.
func (f *storeFlags) dataDir() (string, error) {
	if f.data == "" {
		return "", errors.New("no data folder: give --data DIR (or BRABO_DATA); the default needs $XDG_STATE_HOME or a home folder")
	}
	return filepath.Abs(f.data)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// isSQLite reports whether the flags name the single-process SQLite
// store (no --db) or PostgreSQL, and refuses any other --db.
func (f *storeFlags) isSQLite() (bool, error) {
	if err := f.loadDBFile(); err != nil {
		return false, err
	}
	isSQLite, err := app.IsSQLite(f.db)
	if err != nil && f.dbFile != "" {
		return false, fmt.Errorf("--db-file %s: want a postgres:// URL on its first line", f.dbFile)
	}
	return isSQLite, err
}

// lock takes the data folder's lock when the store is SQLite: one process
// per SQLite file. PostgreSQL takes no lock: several instances share it.
// release is never nil.
func (f *storeFlags) lock() (release func(), isSQLite bool, err error) {
	release = func() {}
	if isSQLite, err = f.isSQLite(); err != nil || !isSQLite {
		return release, isSQLite, err
	}
	if _, err := f.dataDir(); err != nil {
		return release, true, err
	}
	if release, err = app.LockData(f.data); err != nil {
		return func() {}, true, err
	}
	return release, true, nil
}

// open opens (creating and migrating) the store the flags name; on SQLite
// the caller holds the data folder's lock (lock).
func (f *storeFlags) open(ctx context.Context) (s brabo.Store, isSQLite bool, err error) {
	if isSQLite, err = f.isSQLite(); err != nil {
		return nil, false, err
	}
	s, err = app.OpenStore(ctx, f.data, f.db)
	return s, isSQLite, err
}

// noArgs refuses positional arguments: a subcommand that takes flags only
// would otherwise ignore them (`brabo serve 18093` bound 8080).
func noArgs(fl *flag.FlagSet, stderr io.Writer) bool {
	if fl.NArg() == 0 {
		return true
	}
	msg := fmt.Sprintf("unexpected argument(s) %q: it takes flags only", fl.Args())
	if _, err := strconv.Atoi(fl.Arg(0)); err == nil && fl.Name() == "serve" {
		msg += fmt.Sprintf(" (a port is --addr 127.0.0.1:%s)", fl.Arg(0))
	}
	usageError(stderr, fl.Name(), "%s", msg)
	return false
}

// parseNoArgs is parseFlags for a subcommand that takes flags only.
func parseNoArgs(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	if code, done := parseFlags(fl, args, stdout, stderr); done {
		return code, true
	}
	if !noArgs(fl, stderr) {
		return exitUsage, true
	}
	return 0, false
}

func runMigrate(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("migrate")
	var sf storeFlags
	sf.register(fl)
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	if _, err := sf.isSQLite(); err != nil {
		return usageError(stderr, "migrate", "%v", err)
	}
	release, _, err := sf.lock()
	defer release()
	if err != nil {
		return fail(stderr, "migrate", "%v", err)
	}
	s, _, err := sf.open(context.Background())
	if err != nil {
		return fail(stderr, "migrate", "%v", err)
	}
	s.Close()
	fmt.Fprintln(stdout, "brabo migrate: the database is at the latest version")
	return 0
}

func runServe(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("serve")
	var sf storeFlags
	sf.register(fl)
	addr := fl.String("addr", envOr("BRABO_ADDR", "127.0.0.1:8080"), "the address to listen on (env BRABO_ADDR)")
	workspaces := fl.String("workspaces", os.Getenv("BRABO_WORKSPACES"), "the folder of container and runner projects (default <data>/workspaces; env BRABO_WORKSPACES)")
	logLevel := fl.String("log-level", envOr("BRABO_LOG_LEVEL", "info"), "debug, info, warn or error (env BRABO_LOG_LEVEL)")
	modelSpec := fl.String("model", os.Getenv("BRABO_MODEL"), "the model the agents (dev agents, QA leads, dev leads) run on: openai:<model>, anthropic:<model> or scripted:<path>; empty runs no agent (env BRABO_MODEL)")
	publicURL := fl.String("public-url", os.Getenv("BRABO_PUBLIC_URL"), "the address people open brabo at, for the links notifications carry (default http://<addr>; env BRABO_PUBLIC_URL)")
	noSandbox := fl.Bool("no-sandbox", false, "run the agents' commands without the bubblewrap sandbox (docs/sandbox.md): they can read what brabo's user reads and reach the network; every card says so")
	passEnv := fl.String("pass-env", os.Getenv("BRABO_PASS_ENV"), "comma-separated names of more variables approved commands may see (env BRABO_PASS_ENV)")
	var lim limits
	lim.register(fl)
	var cf containerFlags
	cf.register(fl)
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	if _, err := sf.isSQLite(); err != nil {
		return usageError(stderr, "serve", "%v", err)
	}
	if err := lim.check(); err != nil {
		return usageError(stderr, "serve", "%v", err)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageError(stderr, "serve", "--log-level: %v", err)
	}
	if err := checkPassEnv(*passEnv, sf); err != nil {
		return usageError(stderr, "serve", "%v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var m model.Model
	if *modelSpec != "" {
		var err error
		if m, err = app.OpenModel(*modelSpec); err != nil {
			return usageError(stderr, "serve", "--model: %v", err)
		}
	}
	data, err := sf.dataDir()
	if err != nil {
		return fail(stderr, "serve", "%v", err)
	}
	warnAllInterfaces(*addr, stderr)
	warnOldDefault(fl, stderr)
	cfg := app.Config{Name: "brabo", Data: data, DB: sf.db, Hidden: sf.hidden(), Workspaces: *workspaces, Addr: *addr,
		PublicURL: *publicURL, Env: procenv.Filter(os.Environ(), strings.Split(*passEnv, ",")), Model: m, NoSandbox: *noSandbox,
		ContainerEngine: cf.engine, ContainerImage: cf.image, AdminName: "owner", Log: log, Stdout: stdout}
	lim.apply(&cfg)
	if err := serve(cfg, stdout); err != nil {
		return fail(stderr, "serve", "%v", err)
	}
	return 0
}

// checkPassEnv refuses a --pass-env that names a variable brabo holds a
// secret in, or one holding the value of one: the database URL (--db or
// BRABO_DB), the models' keys, the admin token of brabo's own commands.
func checkPassEnv(passEnv string, sf storeFlags) error {
	return procenv.CheckPass(os.Environ(), strings.Split(passEnv, ","),
		sf.db, os.Getenv("BRABO_DB"), os.Getenv("OPENAI_API_KEY"), os.Getenv("ANTHROPIC_API_KEY"), os.Getenv("BRABO_TOKEN"))
}

// warnAllInterfaces says so when the address listens on every interface
// (":8080", "0.0.0.0:8080", "[::]:8080"): the approval page and the API are
// then open to whoever reaches the machine, which is rarely what a
// developer on a laptop means.
func warnAllInterfaces(addr string, stderr io.Writer) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return // net.Listen names what is wrong with it
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		fmt.Fprintf(stderr, "brabo serve: warning: --addr %s listens on every network interface: anyone who reaches this machine reaches the API and the approval page; use 127.0.0.1:%s unless you mean it\n", addr, port)
	}
}

// serve runs the server until SIGINT or SIGTERM (app.Open says what it
// wires, and in which order).
func serve(cfg app.Config, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	if a.AdminToken != "" {
		fmt.Fprintf(stdout, "First start: the admin token is\n\n    %s\n\nIt is shown once; keep it (export BRABO_TOKEN=%s).\n", a.AdminToken, a.AdminToken)
	}
	if err := a.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "brabo serving on %s\n", a.URL())
	cfg.Log.Info("serving", "addr", a.Listener.Addr().String(), "store", map[bool]string{true: "sqlite", false: "postgres"}[a.SoleOwner])
	if err := a.Wait(ctx); err != nil {
		return err
	}
	cfg.Log.Info("shutting down")
	return a.Shutdown("brabo was stopped (" + context.Cause(ctx).Error() + ")")
}

// warnOldDefault points at a database the old default (./.brabo in the
// working directory) left, when the new default is in use: without the
// hint a server would start empty beside it, with a new admin token.
func warnOldDefault(fl *flag.FlagSet, stderr io.Writer) {
	set := os.Getenv("BRABO_DATA") != ""
	fl.Visit(func(f *flag.Flag) { set = set || f.Name == "data" })
	if set {
		return
	}
	if _, err := os.Stat(filepath.Join(".brabo", "brabo.db")); err == nil {
		fmt.Fprintf(stderr, "brabo %s: warning: ./.brabo holds a database of an earlier brabo, whose default data folder was ./.brabo; to keep using it, move it out of the project folder and pass --data\n", fl.Name())
	}
}
