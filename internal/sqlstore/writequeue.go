package sqlstore

import (
	"context"
	"runtime"
	"sync"

	"github.com/brabo-dev/brabo"
)

// Group commit, the part both stores share. Each store runs every Update
// on one writer goroutine, which takes the calls waiting at that moment
// and runs them in one transaction (each in a savepoint): the queue below
// hands the calls to the writer, groups them into batches, and lets Close
// stop the writer without losing or stranding a call. How a batch runs is
// the store's (runBatch in store/sqlite and store/postgres).

// WriteReq is one Update call waiting for a store's writer.
type WriteReq struct {
	Ctx context.Context
	Fn  func(brabo.Tx) error
	// Err is the call's answer. Touched names the projects it wrote
	// events or outbox messages for, published once it committed.
	Err     error
	Touched []string
	// ReadOnly marks a read (View): the writer runs Fn like a write's and
	// then rolls its savepoint back, whatever Fn did; the call is
	// answered with the rest of its batch, a failed commit included.
	ReadOnly bool
	// Own marks a request of the store itself, which the writer runs
	// between two batches rather than as a function in one (SQLite's WAL
	// restart); it is answered with Done.
	Own  bool
	done chan struct{}
}

// Done answers an Own request.
func (r *WriteReq) Done() { close(r.done) }

// WriteQueue hands a store's Update calls to its writer goroutine. Every
// call sent before Stop is answered: by the writer, or with the queue's
// closed error.
type WriteQueue struct {
	// YieldBeforeBatch makes Next yield the processor once before it
	// fills a batch, so that callers about to write join it.
	YieldBeforeBatch bool

	closed error
	writes chan *WriteReq
	// sending is held (read) while a request is put on writes, and
	// (write) by Stop while it sets stopping: every request sent before
	// that is in the channel when the writer drains it at quit.
	sending  sync.RWMutex
	stopping bool
	quit     chan struct{}
}

// NewWriteQueue returns a queue whose calls made after Stop fail with
// closed.
func NewWriteQueue(closed error) *WriteQueue {
	return &WriteQueue{closed: closed, writes: make(chan *WriteReq, 256), quit: make(chan struct{})}
}

// Update sends fn to the writer and returns its answer. It waits even if
// ctx ends first: once queued, fn may be running, and the caller must
// learn whether it committed.
func (q *WriteQueue) Update(ctx context.Context, fn func(brabo.Tx) error) error {
	return q.send(&WriteReq{Ctx: ctx, Fn: fn})
}

// View sends fn to the writer as a read (WriteReq.ReadOnly) and returns
// its answer, as Update does. Only a store whose writer rolls a read back
// offers it (SQLite's ViewLatest).
func (q *WriteQueue) View(ctx context.Context, fn func(brabo.Tx) error) error {
	return q.send(&WriteReq{Ctx: ctx, Fn: fn, ReadOnly: true})
}

// Own sends the writer a request of the store's own (WriteReq.Own) and
// waits until the writer answered it.
func (q *WriteQueue) Own() error {
	return q.send(&WriteReq{Own: true})
}

func (q *WriteQueue) send(req *WriteReq) error {
	req.done = make(chan struct{})
	q.sending.RLock()
	if q.stopping {
		q.sending.RUnlock()
		return q.closed
	}
	q.writes <- req // the writer runs until stopping is set, so this ends
	q.sending.RUnlock()
	<-req.done
	return req.Err
}

// Quit is closed by Stop: the store's background loops end on it.
func (q *WriteQueue) Quit() <-chan struct{} { return q.quit }

// Stop refuses the calls made from now on and tells the writer to end:
// Next then answers what is still queued with the closed error.
func (q *WriteQueue) Stop() {
	q.sending.Lock()
	q.stopping = true
	q.sending.Unlock()
	close(q.quit)
}

// Next waits for the next batch: the first call, and up to max in all of
// those waiting now, in arrival order. An Own request ends the batch and
// comes apart (the batch may then be empty); the writer runs it after the
// batch. ok is false once the queue is stopped and every call left in it
// was answered with the closed error.
func (q *WriteQueue) Next(max int) (batch []*WriteReq, own *WriteReq, ok bool) {
	var first *WriteReq
	select {
	case first = <-q.writes:
	case <-q.quit:
		for {
			select {
			case r := <-q.writes:
				r.Err = q.closed
				close(r.done)
			default:
				return nil, nil, false
			}
		}
	}
	if first.Own {
		return nil, first, true
	}
	batch = []*WriteReq{first}
	if q.YieldBeforeBatch {
		runtime.Gosched()
	}
	for len(batch) < max {
		select {
		case r := <-q.writes:
			if r.Own {
				return batch, r, true
			}
			batch = append(batch, r)
		default:
			return batch, nil, true
		}
	}
	return batch, nil, true
}

// Answer answers every call of a batch. A non-nil err (the commit failed,
// or the transaction is gone) becomes the answer of every call that had
// none; the projects of the calls that committed are published on hub.
func Answer(batch []*WriteReq, err error, hub *Hub) {
	for _, r := range batch {
		if err != nil && r.Err == nil {
			r.Err, r.Touched = err, nil
		}
		if r.Err == nil {
			hub.Publish(r.Touched...)
		}
		close(r.done)
	}
}
