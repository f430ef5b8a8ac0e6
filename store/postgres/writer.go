package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Group commit. Every Update of an instance goes to one writer goroutine,
// which runs the calls waiting at that moment in one transaction on one
// connection: each call in a savepoint of its own, in arrival order, seeing
// what the calls before it wrote; a call that fails is rolled back to its
// savepoint alone; the commit answers them all. Why: an event takes the
// project row's lock (its event_seq counter) until the commit, so the
// proposals of a project were serialised on one fsync each; in one
// transaction they share it, and the NOTIFY of the batch's projects is one
// statement.
//
// The savepoint bookkeeping costs no round trip of its own: BEGIN, RELEASE
// and SAVEPOINT wait in prefix and go out in one pgx.Batch (one pipelined
// round trip) with the call's first statement; the notifications and the
// COMMIT go out together too.

// maxBatch bounds how many Update calls share one commit.
const maxBatch = 64

// ErrClosed answers an Update made once Close has begun.
var ErrClosed = errors.New("postgres: the store is closed")

// batchDialect is the dialect of a batch's calls: their notifications are
// sent once, for the whole batch, just before its COMMIT.
var batchDialect = func() *sqlstore.Dialect {
	d := *dialect
	d.Notify = nil
	return &d
}()

// Update runs fn atomically and durably, as if in a transaction of its
// own: concurrent calls share one transaction (group commit), each in a
// savepoint; a fn that fails is rolled back alone; a failing commit fails
// every fn of the batch. It returns after the commit, even if ctx ends
// first (fn may be running, and the caller must learn whether it
// committed). The statements fn makes are not cancelled by ctx: they share
// a connection with the rest of the batch. After Close it returns
// ErrClosed.
func (s *Store) Update(ctx context.Context, fn func(brabo.Tx) error) error {
	return s.queue.Update(ctx, fn)
}

// writer is the goroutine that runs every Update of this instance.
func (s *Store) writer() {
	defer s.done.Done()
	for {
		batch, _, ok := s.queue.Next(maxBatch) // this store sends no request of its own
		if !ok {
			return
		}
		s.runBatch(batch)
	}
}

// runBatch runs a batch in one transaction and answers every call.
func (s *Store) runBatch(batch []*sqlstore.WriteReq) {
	ctx := context.Background()
	answer := func(err error) { sqlstore.Answer(batch, err, &s.hub) }
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		answer(fmt.Errorf("postgres: %w", err))
		return
	}
	// A connection left in a transaction (a failure half-way) is closed
	// by the pool rather than reused.
	defer conn.Release()
	q := &pipeQuerier{conn: conn.Conn(), prefix: []string{"BEGIN"}}
	savepoints := len(batch) > 1 // alone, the transaction itself is the unit
	if savepoints {
		q.prefix = append(q.prefix, "SAVEPOINT brabo_update")
	}
	began := false // a statement has gone out: the transaction is open
	var touched []string
	for i, r := range batch {
		if err := r.Ctx.Err(); err != nil {
			r.Err = err
			continue
		}
		if savepoints && i > 0 && len(q.prefix) == 0 {
			q.prefix = append(q.prefix, "RELEASE SAVEPOINT brabo_update", "SAVEPOINT brabo_update")
		}
		sent := q.sent
		st := sqlstore.NewTx(q, batchDialect)
		r.Err = r.Fn(st)
		if q.broken != nil {
			q.rollback(ctx)
			answer(q.broken)
			return
		}
		if q.sent > sent {
			began = true
		}
		if r.Err != nil {
			if q.sent == sent {
				continue // it sent nothing: there is nothing to undo
			}
			undo := "ROLLBACK TO SAVEPOINT brabo_update"
			if !savepoints {
				undo = "ROLLBACK"
			}
			if _, err := q.conn.Exec(ctx, undo); err != nil {
				q.rollback(ctx)
				answer(fmt.Errorf("postgres %s: %w (after: %v)", undo, err, r.Err))
				return
			}
			if !savepoints {
				answer(nil)
				return
			}
			continue
		}
		r.Touched = st.Touched()
		touched = append(touched, r.Touched...)
	}
	if !began {
		answer(nil) // no call sent a statement: no transaction to end
		return
	}
	if err := q.commit(ctx, touched); err != nil {
		q.rollback(ctx)
		answer(err)
		return
	}
	s.commits.Add(1)
	answer(nil)
}

// pipeQuerier is a batch's sqlstore.Querier on its connection. The
// statements in prefix are sent in the same round trip as the next
// statement; broken records a failure of the connection or of the
// batch's own bookkeeping, which ends the batch.
type pipeQuerier struct {
	conn   *pgx.Conn
	prefix []string
	sent   int // statements sent for the calls so far
	broken error
}

// send sends the prefix and query in one pipelined round trip and reads
// the prefix's results; the caller reads the query's and closes.
func (q *pipeQuerier) send(ctx context.Context, query string, args []any) (pgx.BatchResults, error) {
	var b pgx.Batch
	for _, p := range q.prefix {
		b.Queue(p)
	}
	b.Queue(query, args...)
	n := len(q.prefix)
	q.prefix = q.prefix[:0]
	q.sent++
	br := q.conn.SendBatch(ctx, &b)
	for i := 0; i < n; i++ {
		if _, err := br.Exec(); err != nil {
			br.Close()
			q.broken = fmt.Errorf("postgres batch: %w", err)
			return nil, q.broken
		}
	}
	return br, nil
}

// Exec runs one statement.
func (q *pipeQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	ctx = context.WithoutCancel(ctx)
	if q.broken != nil {
		return 0, q.broken
	}
	if len(q.prefix) == 0 {
		q.sent++
		tag, err := q.conn.Exec(ctx, query, args...)
		return tag.RowsAffected(), q.check(err)
	}
	br, err := q.send(ctx, query, args)
	if err != nil {
		return 0, err
	}
	tag, err := br.Exec()
	return tag.RowsAffected(), q.check(errors.Join(err, br.Close()))
}

// QueryRow runs a query for one row; like pgx's, the row holds the
// connection until Scan.
func (q *pipeQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	ctx = context.WithoutCancel(ctx)
	if q.broken != nil {
		return errRow{q.broken}
	}
	if len(q.prefix) == 0 {
		q.sent++
		return checkedRow{q, q.conn.QueryRow(ctx, query, args...), nil}
	}
	br, err := q.send(ctx, query, args)
	if err != nil {
		return errRow{err}
	}
	return checkedRow{q, br.QueryRow(), br}
}

// Query runs a query for many rows; the prefix goes first, on its own.
func (q *pipeQuerier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	ctx = context.WithoutCancel(ctx)
	if q.broken != nil {
		return nil, q.broken
	}
	if len(q.prefix) > 0 {
		b := &pgx.Batch{}
		for _, p := range q.prefix {
			b.Queue(p)
		}
		q.prefix = q.prefix[:0]
		if err := q.conn.SendBatch(ctx, b).Close(); err != nil {
			q.broken = fmt.Errorf("postgres batch: %w", err)
			return nil, q.broken
		}
	}
	q.sent++
	rows, err := q.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, q.check(err)
	}
	return rows, nil
}

// check passes a statement's error on to the call, and records it as the
// batch's when the connection itself failed: a server's error (a
// constraint, a deadlock) is the call's alone and its savepoint undoes it.
func (q *pipeQuerier) check(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) && !errors.Is(err, pgx.ErrNoRows) {
		q.broken = fmt.Errorf("postgres: %w", err)
	}
	return err
}

// commit notifies the touched projects and commits, in one round trip. A
// transaction PostgreSQL had aborted answers COMMIT with ROLLBACK: that is
// a failure too.
func (q *pipeQuerier) commit(ctx context.Context, touched []string) error {
	b := &pgx.Batch{}
	if len(touched) > 0 {
		b.Queue(`SELECT pg_notify('`+channel+`', p) FROM unnest($1::text[]) AS p`, dedupe(touched))
	}
	b.Queue("COMMIT")
	br := q.conn.SendBatch(ctx, b)
	if len(touched) > 0 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("postgres notify: %w", err)
		}
	}
	tag, err := br.Exec()
	if err = errors.Join(err, br.Close()); err != nil {
		return fmt.Errorf("postgres commit: %w", err)
	}
	if tag.String() != "COMMIT" {
		return fmt.Errorf("postgres commit: the transaction was rolled back (%s)", tag.String())
	}
	return nil
}

// rollback ends a failed batch's transaction if the connection can still
// say so; the pool closes a connection left in one.
func (q *pipeQuerier) rollback(ctx context.Context) {
	if q.conn.PgConn().TxStatus() != 'I' {
		q.conn.Exec(ctx, "ROLLBACK")
	}
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// checkedRow is a row whose error reaches check, and whose batch (if it
// came in one) is closed after Scan.
type checkedRow struct {
	q   *pipeQuerier
	row pgx.Row
	br  pgx.BatchResults
}

func (r checkedRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if r.br != nil {
		if cerr := r.br.Close(); err == nil {
			err = cerr
		}
	}
	return r.q.check(err)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
