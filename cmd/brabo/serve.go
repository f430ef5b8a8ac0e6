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
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/gitrepo"
	brabohttp "github.com/brabo-dev/brabo/http"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/notify"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
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
	if strings.HasPrefix(f.db, "postgres://") || strings.HasPrefix(f.db, "postgresql://") {
		return false, nil
	}
	if f.db != "" {
		if f.dbFile != "" {
			return false, fmt.Errorf("--db-file %s: want a postgres:// URL on its first line", f.dbFile)
		}
		return false, fmt.Errorf("--db %q: want empty (SQLite in the data folder) or a postgres:// URL", f.db)
	}
	return true, nil
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
	if release, err = lockData(f.data); err != nil {
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
	if !isSQLite {
		s, err := postgres.Open(ctx, f.db)
		return s, false, err
	}
	st, err := sqlite.Open(ctx, filepath.Join(f.data, "brabo.db"))
	return st, true, err
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
	env := procenv.Filter(os.Environ(), strings.Split(*passEnv, ","))
	var m model.Model
	if *modelSpec != "" {
		var err error
		if m, err = openModel(*modelSpec); err != nil {
			return usageError(stderr, "serve", "--model: %v", err)
		}
	}
	warnAllInterfaces(*addr, stderr)
	warnOldDefault(fl, stderr)
	if err := serve(sf, lim, cf, *addr, *workspaces, *publicURL, env, m, *noSandbox, log, stdout); err != nil {
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

// serve runs the server until SIGINT or SIGTERM. Nothing is created before
// the data folder's lock is held and the port is bound: a start that fails
// on either leaves no database behind, and the next start still shows the
// first admin token.
func serve(sf storeFlags, lim limits, cf containerFlags, addr, workspaces, publicURL string, env []string, m model.Model, noSandbox bool, log *slog.Logger, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	release, _, err := sf.lock()
	defer release()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	store, isSQLite, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	dataAbs, err := sf.dataDir()
	if err != nil {
		return err
	}
	if err := dataOutsideProjects(ctx, store, dataAbs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Data folder: %s (--data to change it)\n", dataAbs)
	if workspaces == "" {
		workspaces = filepath.Join(dataAbs, "workspaces")
	}
	if workspaces, err = filepath.Abs(workspaces); err != nil {
		return err
	}
	if err := os.MkdirAll(workspaces, 0o755); err != nil {
		return fmt.Errorf("--workspaces: %w", err)
	}
	sb, unsandboxed := sandboxing(noSandbox, sf.hidden(), log, stdout)
	net := sandboxNetwork(sb, ln.Addr().String(), sf.db, log)
	ex := newExecutor(env, dataAbs, store, sb, net)
	svc := &pipeline.Service{Store: store, Executor: ex, Repo: &gitrepo.Reader{}, WorkspacesRoot: workspaces, Log: log,
		MaxPending: lim.maxPending, MaxRunning: lim.maxRunning, Unsandboxed: unsandboxed, UnsandboxedChosen: noSandbox}
	withRules(net, svc)
	// Notifications: the webhooks of each project are told when an action
	// starts waiting and when it is decided, off the proposal's path.
	if publicURL == "" {
		publicURL = "http://" + ln.Addr().String()
	}
	notifier := notify.New(store, publicURL, log)
	nctx, stopNotify := context.WithCancel(context.WithoutCancel(ctx))
	waitNotify := notifier.Start(nctx)
	defer func() { stopNotify(); waitNotify() }()
	svc.Notifier = notifier
	svc.Protect = protection(sf.data, env)
	if err := cf.apply(svc); err != nil {
		return err
	}
	// One process owns a SQLite file (the data folder's lock): what it
	// left running is not running anymore. On PostgreSQL only what dead
	// instances left is recovered.
	inst, err := startInstance(ctx, svc, ex, isSQLite, log)
	if err != nil {
		return fmt.Errorf("recovering interrupted actions: %w", err)
	}
	defer inst.close()
	if err := migrateClickAutonomy(ctx, svc, log); err != nil {
		return err
	}
	token, err := svc.Bootstrap(ctx, "owner")
	if err != nil {
		return err
	}
	if token != "" {
		fmt.Fprintf(stdout, "First start: the admin token is\n\n    %s\n\nIt is shown once; keep it (export BRABO_TOKEN=%s).\n", token, token)
	}
	// The agents stop after the running actions (below), so that theirs
	// end with the shutdown's reason, not a cancelled context.
	actx, stopAgents := context.WithCancel(context.WithoutCancel(ctx))
	ag, err := startAgents(actx, store, svc, m, isSQLite, lim.waitCap, log)
	if err != nil {
		stopAgents()
		return err
	}
	defer func() { stopAgents(); ag.Wait() }()
	go sweepAbandoned(actx, svc, log)
	api := (&brabohttp.Server{Log: log, OwnPaths: []string{dataAbs}, OwnPathsHint: dataHint, DirProbe: probeDir,
		MaxStreams: lim.maxStreams, SessionTTL: lim.sessionTTL}).Use(svc)
	api.Health = map[string]any{"landlock": landlockStatus(log), "sandbox": sandboxHealth(sb, unsandboxed)}
	if c := ag.Conversations(); c != nil {
		api.Conversations, api.Gates = c, ag.Gates()
	}
	srv := api.HTTPServer()
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

// dataHint ends the refusal of a project folder that overlaps the data
// folder: the flag that moves it.
const dataHint = "brabo's database must never be inside an agent's scope: serve with --data set to a folder outside the project folder (the default is $XDG_STATE_HOME/brabo or ~/.local/state/brabo)"

// dataOutsideProjects refuses a data folder inside (or holding) a local
// project's folder: the database would be in the agents' scope. Creating
// a project refuses the same overlap; this catches a --data that moved.
func dataOutsideProjects(ctx context.Context, store brabo.Store, data string) error {
	return store.View(ctx, func(tx brabo.Tx) error {
		ps, err := tx.Projects(ctx)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Mode != brabo.ModeLocal || p.Root == "" {
				continue
			}
			root := filepath.Clean(p.Root)
			if within(data, root) || within(root, data) {
				return fmt.Errorf("the data folder %s overlaps the folder of the project %s (%s): %s", data, p.Slug, root, dataHint)
			}
		}
		return nil
	})
}

// within reports whether p is dir or inside it; both clean and absolute.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// migrateClickAutonomy runs before anything is decided: a blanket
// terminal rule an old always-allow click wrote frees every command of its
// agent (pipeline.MigrateClickAutonomy).
func migrateClickAutonomy(ctx context.Context, svc *pipeline.Service, log *slog.Logger) error {
	n, err := svc.MigrateClickAutonomy(ctx)
	if err != nil {
		return fmt.Errorf("migrating click-written autonomy rules: %w", err)
	}
	if n > 0 {
		log.Warn("blanket terminal: auto_approve rules written by always-allow clicks became the agents' own patterns", "count", n)
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

// sweepAbandoned makes abandoned, every pipeline.SweepEvery until ctx
// ends, the external actions whose hook's deadline passed (issue 29).
func sweepAbandoned(ctx context.Context, svc *pipeline.Service, log *slog.Logger) {
	t := time.NewTicker(pipeline.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := svc.SweepAbandoned(ctx); err != nil && ctx.Err() == nil {
			log.Warn("sweeping the abandoned waits", "err", err)
		}
	}
}
