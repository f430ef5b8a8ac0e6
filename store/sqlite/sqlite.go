// Package sqlite is the embedded default store: modernc.org/sqlite (pure Go)
// on one file in WAL mode.
//
// Every write transaction is BEGIN IMMEDIATE on a single writer connection:
// deferred transactions with concurrent writers fail with "database is
// locked" whatever the busy timeout (DESIGN §2). Reads use their own pool.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"sync"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/sqlstore"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a brabo.Store on one SQLite file.
type Store struct {
	write *sql.DB
	read  *sql.DB
	hub   sqlstore.Hub
	// Prepared statements, per pool: SQLite spends more time parsing SQL
	// than running these small statements, so each is prepared once per
	// connection and reused.
	writeStmts, readStmts stmtCache
}

// stmtCache holds each query prepared once on its pool. A query is
// prepared on the pool only between transactions (learn): preparing inside
// one would wait for a connection the transaction itself holds.
type stmtCache struct {
	db *sql.DB
	m  sync.Map // query → *sql.Stmt
}

func (c *stmtCache) get(query string) *sql.Stmt {
	if st, ok := c.m.Load(query); ok {
		return st.(*sql.Stmt)
	}
	return nil
}

// learn prepares the queries a finished transaction had to prepare alone.
func (c *stmtCache) learn(ctx context.Context, queries []string) {
	for _, q := range queries {
		if c.get(q) != nil {
			continue
		}
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue // the transaction already reported it; stay uncached
		}
		if _, loaded := c.m.LoadOrStore(q, st); loaded {
			st.Close()
		}
	}
}

var dialect = &sqlstore.Dialect{
	IsUnique: func(err error) bool {
		var e *sqlite.Error
		return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
	IsNoRows: func(err error) bool { return errors.Is(err, sql.ErrNoRows) },
}

func dsn(path string, txlock string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if txlock != "" {
		q.Set("_txlock", txlock)
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database file at path and migrates it
// to the latest version.
func Open(ctx context.Context, path string) (*Store, error) {
	write, err := sql.Open("sqlite", dsn(path, "immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	s := &Store{write: write}
	s.writeStmts.db = write
	if err := s.Migrate(ctx); err != nil {
		write.Close()
		return nil, err
	}
	read, err := sql.Open("sqlite", dsn(path, ""))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	read.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)*2))
	s.read = read
	s.readStmts.db = read
	return s, nil
}

// Migrate applies the embedded migrations that are not applied yet.
func (s *Store) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.write, sub)
	if err != nil {
		return fmt.Errorf("sqlite migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqlite migrations: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	for _, c := range []*stmtCache{&s.writeStmts, &s.readStmts} {
		c.m.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
	}
	err := s.write.Close()
	if s.read != nil {
		err = errors.Join(err, s.read.Close())
	}
	return err
}

// Update runs fn in one BEGIN IMMEDIATE transaction.
func (s *Store) Update(ctx context.Context, fn func(brabo.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite begin: %w", err)
	}
	q := &querier{tx: tx, stmts: &s.writeStmts}
	defer func() { s.writeStmts.learn(ctx, q.missed) }()
	st := sqlstore.NewTx(q, dialect)
	if err := fn(st); err != nil {
		return errors.Join(err, ignoreDone(tx.Rollback()))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite commit: %w", err)
	}
	s.hub.Publish(st.Touched()...)
	return nil
}

// View runs fn in a read transaction.
func (s *Store) View(ctx context.Context, fn func(brabo.Tx) error) error {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite begin: %w", err)
	}
	q := &querier{tx: tx, stmts: &s.readStmts}
	err = fn(sqlstore.NewTx(q, dialect))
	tx.Rollback()
	s.readStmts.learn(ctx, q.missed)
	return err
}

// Subscribe is the in-process fast path of DESIGN §7.3.
func (s *Store) Subscribe(projectID string) (<-chan struct{}, func()) {
	return s.hub.Subscribe(projectID)
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// querier adapts *sql.Tx to sqlstore.Querier, through prepared statements.
type querier struct {
	tx     *sql.Tx
	stmts  *stmtCache
	missed []string
}

func (q *querier) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := q.stmts.get(query); st != nil {
		return q.tx.StmtContext(ctx, st), nil
	}
	q.missed = append(q.missed, query)
	return q.tx.PrepareContext(ctx, query)
}

func (q *querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	r, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (q *querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

func (q *querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	r, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type rows struct{ *sql.Rows }

func (r rows) Close() { r.Rows.Close() }

var _ brabo.Store = (*Store)(nil)
