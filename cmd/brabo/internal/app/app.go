// Package app is brabo's one wiring: a Config in, an App out (the store,
// the pipeline, the executor, the notifier, the agents and the HTTP
// server), with Open, Start, Wait, Shutdown and Close. brabo serve, brabo
// agent and brabo demo fill a Config and nothing else, so the three run
// the same pipeline: the same notifier, repository reader, limits,
// protection, sandbox and instance lifecycle (docs/processes.md). It is
// the only package that constructs the pipeline (imports_test.go).
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/supervisor"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/gitrepo"
	brabohttp "github.com/brabo-dev/brabo/http"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/notify"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// Config is everything a process of brabo is made of. The zero value of
// a limit is the pipeline's or the HTTP server's default.
type Config struct {
	// Name is the process as its messages name it: "brabo" (serve),
	// "brabo agent", "brabo demo".
	Name string
	// Data is the data folder: the SQLite file, its lock, the workspaces
	// and the caches live here. Never inside a project folder.
	Data string
	// DB is "" for SQLite in Data, or a postgres:// URL.
	DB string
	// Store, when set, is the store to use, open and migrated, of the kind
	// DB names (the system tests wrap one to watch it); Open opens none,
	// and Close closes it.
	Store brabo.Store
	// Hidden are files no sandboxed command may read though their folder
	// is bound (the --db-file).
	Hidden []string
	// Workspaces is the folder of container and runner projects
	// (<Data>/workspaces when "").
	Workspaces string
	// Addr is where the HTTP API and the web page listen; "" serves
	// none (brabo agent).
	Addr string
	// PublicURL is the address people open brabo at, for the links the
	// notifications carry: http://<Addr> when "" and Addr is set,
	// DefaultPublicURL otherwise.
	PublicURL string
	// Env is the environment approved commands run with.
	Env []string
	// Model runs the process's agents; nil runs none.
	Model model.Model
	// NoSandbox runs the agents' commands unsandboxed, by the operator's
	// choice (--no-sandbox); UnsandboxedChosen marks commands that run
	// unsandboxed because bubblewrap is missing as chosen all the same
	// (the demo, whose commands are its own script's).
	NoSandbox, UnsandboxedChosen bool
	// MaxPending, MaxRunning, MaxStreams, SessionTTL and WaitCap are the
	// limits of docs/operations.md.
	MaxPending, MaxRunning, MaxStreams int
	SessionTTL, WaitCap                time.Duration
	// ContainerEngine and ContainerImage are the projects' container
	// engine (a Docker Engine API address; "" fails container actions)
	// and the image a container_start that names none runs.
	ContainerEngine, ContainerImage string
	// AdminName, when set, creates the first admin member under that
	// name on an empty store (App.AdminToken holds its token).
	AdminName string
	// Log is the process's log (discarded when nil); Stdout, when set,
	// is where the start-up lines people read go (the data folder, the
	// sandbox, the first admin token).
	Log    *slog.Logger
	Stdout io.Writer
	// NotSubreaper keeps the process from becoming a child subreaper
	// (procs.BecomeSubreaper): for a process that starts programs outside
	// procs.Start, whose exit status the reaper would take (the system
	// tests open brabo in their own process). Its commands' escaped
	// descendants then become init's children, and are still found by
	// their BRABO_ACTION_ID.
	NotSubreaper bool
}

// DefaultPublicURL is the links' address of a process that serves no
// API (brabo agent) and is given none: brabo serve's default address.
const DefaultPublicURL = "http://127.0.0.1:8080"

// The limits' defaults, for the commands' flags (each names its adapter's
// own default, so a flag and the package never disagree).
const (
	// DefaultMaxPending is how many pending actions one agent may have.
	DefaultMaxPending = pipeline.DefaultMaxPending
	// DefaultMaxRunning is how many commands one project runs at once.
	DefaultMaxRunning = pipeline.DefaultMaxRunning
	// DefaultMaxStreams caps the event streams one member holds open.
	DefaultMaxStreams = brabohttp.DefaultMaxStreams
	// DefaultSessionTTL is how long a web session lasts.
	DefaultSessionTTL = brabohttp.DefaultSessionTTL
)

// App is an open brabo process. Its fields are set by Open; HTTP and
// Listener are nil without Config.Addr, Agents before Start or without a
// model.
type App struct {
	Config    Config
	Store     brabo.Store
	Pipeline  *pipeline.Service
	Executor  *executor.Executor
	Notifier  *notify.Notifier
	Agents    *supervisor.Supervisor
	HTTP      *brabohttp.Server
	Listener  net.Listener
	Sandbox   *sandbox.Sandbox
	SoleOwner bool // SQLite: this process alone uses the store
	// AdminToken is the first admin's token when Open created it, ""
	// otherwise.
	AdminToken string

	closers    []func() // run in reverse by Close
	inst       *instance
	srv        *http.Server
	errc       chan error
	stopAgents context.CancelFunc
	shutOnce   bool
	closed     bool
}

// IsSQLite reports whether db names the single-process SQLite store ("")
// or PostgreSQL, and refuses any other value.
func IsSQLite(db string) (bool, error) {
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		return false, nil
	}
	if db != "" {
		return false, fmt.Errorf("--db %q: want empty (SQLite in the data folder) or a postgres:// URL", db)
	}
	return true, nil
}

// Lock takes the data folder's lock when db is SQLite: one process per
// SQLite file. PostgreSQL takes none: several instances share it. release
// is never nil.
func Lock(data, db string) (release func(), err error) {
	release = func() {}
	sqlite, err := IsSQLite(db)
	if err != nil || !sqlite {
		return release, err
	}
	if data == "" {
		return release, errors.New("no data folder: give --data DIR (or BRABO_DATA)")
	}
	if release, err = LockData(data); err != nil {
		return func() {}, err
	}
	return release, nil
}

// OpenStore opens (creating and migrating) the store: PostgreSQL at db,
// or SQLite in data, whose lock the caller holds (Lock).
func OpenStore(ctx context.Context, data, db string) (brabo.Store, error) {
	sqlite_, err := IsSQLite(db)
	if err != nil {
		return nil, err
	}
	if !sqlite_ {
		return postgres.Open(ctx, db)
	}
	return sqlite.Open(ctx, filepath.Join(data, "brabo.db"))
}

// Open wires the process cfg describes and starts what runs beside the
// API: the notifier and the instance's lease. Nothing is created before
// the data folder's lock is held and the port is bound: a start that
// fails on either leaves no database behind, and the next start still
// shows the first admin token. On an error everything opened is closed.
func Open(ctx context.Context, cfg Config) (a *App, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Name == "" {
		cfg.Name = "brabo"
	}
	if cfg.Data == "" {
		return nil, errors.New("no data folder: give --data DIR (or BRABO_DATA); the default needs $XDG_STATE_HOME or a home folder")
	}
	if cfg.Data, err = filepath.Abs(cfg.Data); err != nil {
		return nil, err
	}
	a = &App{Config: cfg}
	defer func() {
		if err != nil {
			a.Close()
			a = nil
		}
	}()
	if a.SoleOwner, err = IsSQLite(cfg.DB); err != nil {
		return a, err
	}
	release, err := Lock(cfg.Data, cfg.DB)
	a.closers = append(a.closers, release)
	if err != nil {
		return a, err
	}
	if cfg.Addr != "" {
		if a.Listener, err = net.Listen("tcp", cfg.Addr); err != nil {
			return a, err
		}
		a.closers = append(a.closers, func() { a.Listener.Close() })
	}
	if a.Store = cfg.Store; a.Store == nil {
		if a.Store, err = OpenStore(ctx, cfg.Data, cfg.DB); err != nil {
			return a, err
		}
	}
	a.closers = append(a.closers, func() { a.Store.Close() })
	if err := dataOutsideProjects(ctx, a.Store, cfg.Data); err != nil {
		return a, err
	}
	log := cfg.Log
	if cfg.Addr != "" {
		fmt.Fprintf(cfg.Stdout, "Data folder: %s (--data to change it)\n", cfg.Data)
	}
	ws := cfg.Workspaces
	if ws == "" {
		ws = filepath.Join(cfg.Data, "workspaces")
	}
	if ws, err = filepath.Abs(ws); err != nil {
		return a, err
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return a, fmt.Errorf("--workspaces: %w", err)
	}
	sb, unsandboxed := sandboxing(cfg.NoSandbox, cfg.Hidden, log, cfg.Stdout)
	a.Sandbox = sb
	var egress *executor.Network
	if a.Listener != nil {
		egress = sandboxNetwork(sb, a.Listener.Addr().String(), cfg.DB, log)
	}
	a.Executor = newExecutor(cfg.Env, cfg.Data, a.Store, sb, egress)
	publicURL := cfg.PublicURL
	switch {
	case publicURL != "":
	case a.Listener != nil:
		publicURL = "http://" + a.Listener.Addr().String()
	default:
		publicURL = DefaultPublicURL
	}
	a.Notifier = notify.New(a.Store, publicURL, log)
	// The one construction of the pipeline (imports_test.go).
	a.Pipeline = &pipeline.Service{Store: a.Store, Executor: a.Executor, Repo: &gitrepo.Reader{}, Notifier: a.Notifier,
		WorkspacesRoot: ws, Log: log, MaxPending: cfg.MaxPending, MaxRunning: cfg.MaxRunning,
		Unsandboxed: unsandboxed, UnsandboxedChosen: cfg.NoSandbox || cfg.UnsandboxedChosen,
		Protect: protection(cfg.Data, cfg.Env)}
	withRules(egress, a.Pipeline)
	if err := applyContainers(cfg, a.Pipeline); err != nil {
		return a, err
	}
	// Notifications: the webhooks of each project are told when an action
	// starts waiting and when it is decided, off the proposal's path.
	nctx, stopNotify := context.WithCancel(context.WithoutCancel(ctx))
	waitNotify := a.Notifier.Start(nctx)
	a.closers = append(a.closers, func() { stopNotify(); waitNotify() })
	landlock := landlockStatus(log)
	// One process owns a SQLite file (the data folder's lock): what it
	// left running is not running anymore. On PostgreSQL only what dead
	// instances left is recovered.
	if a.inst, err = startInstance(ctx, a.Pipeline, a.Executor, a.SoleOwner, !cfg.NotSubreaper, log); err != nil {
		return a, fmt.Errorf("recovering interrupted actions: %w", err)
	}
	a.closers = append(a.closers, a.inst.close)
	if err := migrateClickAutonomy(ctx, a.Pipeline, log); err != nil {
		return a, err
	}
	if cfg.AdminName != "" {
		if a.AdminToken, err = a.Pipeline.Bootstrap(ctx, cfg.AdminName); err != nil {
			return a, err
		}
	}
	if a.Listener != nil {
		a.HTTP = (&brabohttp.Server{Log: log, OwnPaths: []string{cfg.Data}, OwnPathsHint: dataHint,
			DirProbe: probeDir, MaxStreams: cfg.MaxStreams, SessionTTL: cfg.SessionTTL}).Use(a.Pipeline)
		a.HTTP.Health = map[string]any{"landlock": landlock, "sandbox": sandboxHealth(sb, unsandboxed)}
	}
	return a, nil
}

// Start starts the agents (with a model), the sweep of abandoned waits
// and the HTTP server. The agents stop after the running actions
// (Shutdown), so that theirs end with the shutdown's reason, not a
// cancelled context.
func (a *App) Start(ctx context.Context) error {
	actx, stopAgents := context.WithCancel(context.WithoutCancel(ctx))
	a.stopAgents = stopAgents
	if a.Config.Model != nil {
		ag, err := startAgents(actx, a.Store, a.Pipeline, a.Config.Model, a.SoleOwner, a.Config.WaitCap, a.Config.Log)
		if err != nil {
			stopAgents()
			return err
		}
		a.Agents = ag
	}
	a.closers = append(a.closers, func() {
		stopAgents()
		if a.Agents != nil {
			a.Agents.Wait()
		}
	})
	if a.HTTP == nil {
		return nil
	}
	go sweepAbandoned(actx, a.Pipeline, a.Config.Log)
	if a.Agents != nil {
		if c := a.Agents.Conversations(); c != nil {
			a.HTTP.Conversations, a.HTTP.Gates = c, a.Agents.Gates()
		}
	}
	a.srv = a.HTTP.HTTPServer()
	a.errc = make(chan error, 1)
	go func() { a.errc <- a.srv.Serve(a.Listener) }()
	a.closers = append(a.closers, func() { a.srv.Close() })
	return nil
}

// URL is the HTTP server's base URL, "" without one.
func (a *App) URL() string {
	if a.Listener == nil {
		return ""
	}
	return "http://" + a.Listener.Addr().String()
}

// Wait blocks until ctx ends (nil) or the HTTP server fails (its error).
func (a *App) Wait(ctx context.Context) error {
	if a.errc == nil {
		<-ctx.Done()
		return nil
	}
	select {
	case err := <-a.errc:
		return err
	case <-ctx.Done():
		return nil
	}
}

// Shutdown stops the process gracefully: the HTTP server stops accepting
// at once, and the requests in flight (an approval whose command runs)
// get their answer once the running commands are ended (SIGTERM, SIGKILL
// after the grace period) and their actions settled failed with why; then
// the agents stop.
func (a *App) Shutdown(why string) error {
	if a.shutOnce {
		return nil
	}
	a.shutOnce = true
	shut := make(chan error, 1)
	if a.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), a.inst.grace+30*time.Second)
		defer cancel()
		go func() { shut <- a.srv.Shutdown(ctx) }()
	} else {
		shut <- nil
	}
	a.inst.stopActions(why)
	if a.stopAgents != nil {
		a.stopAgents()
	}
	if err := <-shut; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// Close releases what Open and Start took, in reverse: the agents, the
// HTTP server, the instance's row, the notifier, the store, the port, the
// data folder's lock. It may be called once, after Shutdown or without.
func (a *App) Close() {
	if a.closed {
		return
	}
	a.closed = true
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}
