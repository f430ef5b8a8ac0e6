package enginetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// Go runs fn in a goroutine until the returned stop is called (or the
// test ends); stop cancels fn's context and waits for fn to return, once.
func Go(t testing.TB, fn func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// WaitFor polls cond until it holds, failing the test after 15 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Task reads a task.
func Task(t testing.TB, s brabo.Store, id string) *brabo.Task {
	t.Helper()
	return read(t, s, func(ctx context.Context, tx brabo.Tx) (*brabo.Task, error) { return tx.Task(ctx, id) })
}

// Run reads a run.
func Run(t testing.TB, s brabo.Store, id string) *brabo.Run {
	t.Helper()
	return read(t, s, func(ctx context.Context, tx brabo.Tx) (*brabo.Run, error) { return tx.Run(ctx, id) })
}

// read runs one read in a view, failing the test on an error.
func read[T any](t testing.TB, s brabo.Store, get func(context.Context, brabo.Tx) (T, error)) T {
	t.Helper()
	ctx := context.Background()
	var v T
	if err := s.View(ctx, func(tx brabo.Tx) error {
		var err error
		v, err = get(ctx, tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// Clock is a fake clock for the wait caps: its time moves only when the
// test says so (Advance). Now is its method value to hand to a Now field.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a Clock at the real time now.
func NewClock() *Clock { return &Clock{now: time.Now().UTC()} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
