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
	st := sqlstore.NewTx(querier{tx}, dialect)
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
	defer tx.Rollback()
	return fn(sqlstore.NewTx(querier{tx}, dialect))
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

// querier adapts *sql.Tx to sqlstore.Querier.
type querier struct{ tx *sql.Tx }

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	r, err := q.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return q.tx.QueryRowContext(ctx, query, args...)
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	r, err := q.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

type rows struct{ *sql.Rows }

func (r rows) Close() { r.Rows.Close() }

var _ brabo.Store = (*Store)(nil)
