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
	"time"

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

	queue  *sqlstore.WriteQueue // Update calls for the writer goroutine
	done   sync.WaitGroup
	closed sync.Once
}

// busyTimeout is how long a connection waits for a lock another process
// holds (a second process on the same file, a backup) before it fails.
const busyTimeout = 10 * time.Second

// maxBatch bounds how many Update calls share one commit.
const maxBatch = 64

// ErrClosed is returned by Update after Close.
var ErrClosed = errors.New("sqlite: the store is closed")

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
	SerialWriter: true,
	IsUnique: func(err error) bool {
		var e *sqlite.Error
		return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
	IsNoRows:     func(err error) bool { return errors.Is(err, sql.ErrNoRows) },
	JSONAgg:      "json_group_array",
	JSONTextRows: func(param string) string { return "json_each(" + param + ")" },
}

func dsn(path string, txlock string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if txlock != "" {
		q.Set("_txlock", txlock)
		// The writer never checkpoints on commit (that would stall every
		// write behind an fsync); the checkpointer does it once a period.
		q.Add("_pragma", "wal_autocheckpoint(0)")
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
	read.SetMaxOpenConns(max(16, runtime.GOMAXPROCS(0)*4))
	read.SetMaxIdleConns(max(16, runtime.GOMAXPROCS(0)*4))
	s.read = read
	s.readStmts.db = read
	s.queue = sqlstore.NewWriteQueue(ErrClosed)
	s.queue.YieldBeforeBatch = true // let callers about to write join a batch
	s.done.Add(2)
	go s.writer()
	go s.checkpointer()
	return s, nil
}

// Migrate applies the embedded migrations that are not applied yet.
func (s *Store) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.write, sub,
		// Migrations written side by side may land in another order than
		// their numbers: a database that has a later one still takes an
		// earlier one it lacks.
		goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("sqlite migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqlite migrations: %w", err)
	}
	return nil
}

// Close stops the writer and closes the database. Update calls still
// queued are answered ErrClosed.
func (s *Store) Close() error {
	s.closed.Do(func() {
		if s.queue != nil {
			s.queue.Stop()
			s.done.Wait()
			s.write.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)")
		}
	})
	for _, c := range []*stmtCache{&s.writeStmts, &s.readStmts} {
		c.m.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
	}
	err := s.write.Close()
	if s.read != nil {
		err = errors.Join(err, s.read.Close())
	}
	return err
}

// Update runs fn atomically and durably, as if in a transaction of its
// own. Concurrent calls are grouped into one BEGIN IMMEDIATE transaction
// (group commit): each fn runs in a savepoint, in arrival order, and sees
// what the ones before it wrote; a fn that fails is rolled back alone; a
// failing commit fails every fn of the batch. It returns after the commit,
// even if ctx ends first; after Close it returns ErrClosed.
func (s *Store) Update(ctx context.Context, fn func(brabo.Tx) error) error {
	return s.queue.Update(ctx, fn)
}

// checkpointPeriod is how often the WAL is copied back into the database.
var checkpointPeriod = time.Second // a variable for tests

// checkpointWait bounds how long a checkpoint waits for readers still on
// the WAL; one that cannot finish in time is tried again a period later.
const checkpointWait = 100 * time.Millisecond

// checkpointer keeps the WAL from growing without bound, once a period.
//
// A PASSIVE checkpoint, which never blocks anybody, does the copying: it
// runs on the read pool while the writer goes on. It is not enough under a
// steady load: it can only copy frames no reader still needs, so it never
// catches up, the WAL never starts again, and the file grows for as long
// as the load lasts (by 80 MB/s in the proposal benchmark). So the writer
// then runs a RESTART (restartWAL), which has only the frames written
// since to copy.
func (s *Store) checkpointer() {
	defer s.done.Done()
	t := time.NewTicker(checkpointPeriod)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.queue.Quit():
			return
		}
		s.read.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		if s.queue.Own() != nil { // the writer runs restartWAL between batches
			return
		}
	}
}

// restartWAL copies what is left of the WAL into the database and starts
// the WAL again from the beginning. It runs on the writer goroutine,
// between batches, so it never waits for the writer; writes wait while it
// runs. It waits up to checkpointWait for readers to leave the WAL, so a
// read transaction longer than that costs the writers up to
// checkpointWait once a period; one that cannot finish is tried again a
// period later.
func (s *Store) restartWAL() {
	ctx := context.Background()
	s.write.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", checkpointWait.Milliseconds()))
	s.write.ExecContext(ctx, "PRAGMA wal_checkpoint(RESTART)")
	s.write.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds()))
}

// writer is the single goroutine that owns the write connection. Its one
// request of its own is restartWAL, run between two batches.
func (s *Store) writer() {
	defer s.done.Done()
	for {
		batch, restart, ok := s.queue.Next(maxBatch)
		if !ok {
			return
		}
		if len(batch) > 0 {
			s.runBatch(batch)
		}
		if restart != nil {
			s.restartWAL()
			restart.Done()
		}
	}
}

func (s *Store) runBatch(batch []*sqlstore.WriteReq) {
	ctx := context.Background()
	answer := func(err error) { sqlstore.Answer(batch, err, &s.hub) }
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		answer(fmt.Errorf("sqlite begin: %w", err))
		return
	}
	q := &querier{tx: tx, stmts: &s.writeStmts}
	defer func() { s.writeStmts.learn(ctx, q.missed) }()
	if len(batch) == 1 { // alone: the transaction itself is the unit
		r := batch[0]
		st := sqlstore.NewTx(q, dialect)
		if r.Err = r.Ctx.Err(); r.Err == nil {
			r.Err = r.Fn(st)
		}
		if r.Err != nil || r.ReadOnly { // a read alone has nothing to commit
			tx.Rollback()
			answer(nil)
			return
		}
		r.Touched = st.Touched()
		if err := tx.Commit(); err != nil {
			answer(fmt.Errorf("sqlite commit: %w", err))
			return
		}
		answer(nil)
		return
	}
	for _, r := range batch {
		if err := r.Ctx.Err(); err != nil {
			r.Err = err
			continue
		}
		if _, err := q.Exec(ctx, "SAVEPOINT brabo_update"); err != nil {
			tx.Rollback()
			answer(fmt.Errorf("sqlite savepoint: %w", err))
			return
		}
		st := sqlstore.NewTx(q, dialect)
		if r.Err = r.Fn(st); r.Err != nil || r.ReadOnly {
			_, rerr := q.Exec(ctx, "ROLLBACK TO brabo_update")
			if rerr == nil {
				_, rerr = q.Exec(ctx, "RELEASE brabo_update")
			}
			if rerr != nil { // the transaction itself is gone: nothing of the batch holds
				tx.Rollback()
				answer(fmt.Errorf("sqlite rollback to savepoint: %w (after: %v)", rerr, r.Err))
				return
			}
			continue
		}
		if _, err := q.Exec(ctx, "RELEASE brabo_update"); err != nil {
			tx.Rollback()
			answer(fmt.Errorf("sqlite release: %w", err))
			return
		}
		r.Touched = st.Touched()
	}
	if err := tx.Commit(); err != nil {
		answer(fmt.Errorf("sqlite commit: %w", err))
		return
	}
	answer(nil)
}

// ViewLatest runs fn on the writer connection, in the next batch, as a
// read (sqlstore.WriteQueue.View): its savepoint is always rolled back, so
// that nothing fn writes stays, and it is answered with the batch, so that
// a read that saw an earlier call's write gets the batch's failed commit
// rather than what it read. Its page cache is warm, where a read
// connection's is emptied by every commit (brabo.LatestViewer).
func (s *Store) ViewLatest(ctx context.Context, fn func(brabo.Tx) error) error {
	return s.queue.View(ctx, fn)
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

var (
	_ brabo.Store        = (*Store)(nil)
	_ brabo.LatestViewer = (*Store)(nil)
)
