// Package postgres is the PostgreSQL store (pgx v5 + pgxpool). Commits
// that append events or outbox messages NOTIFY inside the transaction, and
// a pgxlisten listener turns the notifications of every instance sharing the
// database into local signals: any instance can wake any waiting run.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jackc/pgxlisten"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// channel is the NOTIFY channel; the payload is the project id.
const channel = "brabo_events"

// Store is a brabo.Store on a PostgreSQL database.
type Store struct {
	pool   *pgxpool.Pool // writes (writer.go), migrations
	read   *pgxpool.Pool // View's statements: read-only sessions
	hub    sqlstore.Hub
	cancel context.CancelFunc
	done   sync.WaitGroup

	queue   *sqlstore.WriteQueue // Update calls for the writer (writer.go)
	closed  sync.Once
	commits atomic.Int64 // batches the writer committed (tests)
}

var dialect = &sqlstore.Dialect{
	SkipLocked: " FOR UPDATE SKIP LOCKED",
	IsUnique: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && e.Code == "23505"
	},
	IsNoRows: func(err error) bool { return errors.Is(err, pgx.ErrNoRows) },
	JSONAgg:  "json_agg",
	JSONTextRows: func(param string) string {
		return "jsonb_array_elements_text(CAST(" + param + " AS jsonb)) AS ids(value)"
	},
	Notify: func(ctx context.Context, q sqlstore.Querier, projectID string) error {
		_, err := q.Exec(ctx, `SELECT pg_notify('`+channel+`', $1)`, projectID)
		return err
	},
}

// Open connects to the database at url (postgres://…), migrates it, and
// starts listening for other instances' commits.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	// A View's statements run outside a transaction, each on any
	// connection of a pool whose sessions refuse writes: at read committed
	// a transaction gave a new snapshot to each statement anyway, and
	// BEGIN and ROLLBACK cost two round trips of every read.
	readCfg := cfg.Copy()
	readCfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	read, err := pgxpool.NewWithConfig(ctx, readCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool, read: read}
	if err := s.Migrate(ctx); err != nil {
		read.Close()
		pool.Close()
		return nil, err
	}
	s.queue = sqlstore.NewWriteQueue(ErrClosed)
	s.done.Add(1)
	go s.writer()
	lctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	listener := &pgxlisten.Listener{
		Connect: func(ctx context.Context) (*pgx.Conn, error) {
			return pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
		},
		ReconnectDelay: 500 * time.Millisecond,
	}
	listener.Handle(channel, notifications{&s.hub})
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		_ = listener.Listen(lctx) // returns when lctx is cancelled
	}()
	return s, nil
}

// notifications turns the NOTIFYs of every instance into local signals.
type notifications struct{ hub *sqlstore.Hub }

// HandleNotification signals the subscribers of the notified project (or
// of brabo.AuthSignal).
func (n notifications) HandleNotification(_ context.Context, note *pgconn.Notification, _ *pgx.Conn) error {
	n.hub.Publish(note.Payload)
	return nil
}

// HandleBacklog runs each time the listener (re)connects. A revocation
// notified while it was away is lost, so the credentials every
// subscriber cached are dropped now, as if one had been notified; the
// projects' subscribers poll, and need nothing.
func (n notifications) HandleBacklog(context.Context, string, *pgx.Conn) error {
	n.hub.Publish(brabo.AuthSignal)
	return nil
}

// Migrate applies the embedded migrations that are not applied yet.
func (s *Store) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		// Migrations written side by side may land in another order than
		// their numbers: a database that has a later one still takes an
		// earlier one it lacks.
		goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("postgres migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("postgres migrations: %w", err)
	}
	return nil
}

// Close stops the writer and the listener and closes the pool. Update
// calls still queued are answered ErrClosed.
func (s *Store) Close() error {
	s.closed.Do(func() {
		s.queue.Stop()
		if s.cancel != nil {
			s.cancel()
		}
		s.done.Wait()
		s.read.Close()
		s.pool.Close()
	})
	return nil
}

// View runs fn's statements on read-only sessions, each seeing what was
// committed when it started (as each statement of a read-committed
// transaction would). A write in fn fails.
func (s *Store) View(ctx context.Context, fn func(brabo.Tx) error) error {
	return fn(sqlstore.NewTx(readQuerier{s.read}, dialect))
}

// Subscribe signals after commits of this instance and, through NOTIFY,
// of every other instance on the database.
func (s *Store) Subscribe(projectID string) (<-chan struct{}, func()) {
	return s.hub.Subscribe(projectID)
}

// readQuerier runs each statement on a connection of the read pool.
type readQuerier struct{ pool *pgxpool.Pool }

func (q readQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.pool.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q readQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return q.pool.QueryRow(ctx, query, args...)
}

func (q readQuerier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return q.pool.Query(ctx, query, args...)
}
