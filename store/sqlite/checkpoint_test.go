package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// TestWALStaysBoundedUnderSteadyReads is the rule that the WAL is started
// again while readers never stop: with only PASSIVE checkpoints from the
// read pool it grew by every commit's pages for as long as the load
// lasted, since a reader always held a frame the checkpoint could not
// pass.
func TestWALStaysBoundedUnderSteadyReads(t *testing.T) {
	defer func(p time.Duration) { checkpointPeriod = p }(checkpointPeriod)
	checkpointPeriod = 20 * time.Millisecond
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "brabo.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	var stop atomic.Bool
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for !stop.Load() {
				s.View(ctx, func(tx brabo.Tx) error {
					tx.Member(ctx, "m0")
					time.Sleep(100 * time.Microsecond) // a reader is always inside a transaction
					return nil
				})
				reads.Add(1)
			}
		}()
	}
	// At least 1,000 commits and 50 checkpoint periods: on a busy machine
	// a restart may miss a few periods (it waits at most checkpointWait
	// for the readers), never all of them.
	commits := 0
	start := time.Now()
	for ; commits < 1000 || time.Since(start) < 50*checkpointPeriod; commits++ {
		i := commits
		m := &brabo.Member{ID: fmt.Sprintf("m%d", i), Name: fmt.Sprintf("member %d", i), TokenHash: fmt.Sprintf("hash %d", i)}
		if err := s.Update(ctx, func(tx brabo.Tx) error { return tx.CreateMember(ctx, m) }); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	stop.Store(true)
	readers.Wait()
	// The WAL's frame count since it last started: a WAL that was never
	// started again holds at least one frame per commit.
	// It reads -1 while the store's own checkpoint runs: ask again.
	busy, frames, copied := 0, -1, 0
	for try := 0; frames < 0 && try < 100; try++ {
		if try > 0 {
			time.Sleep(time.Millisecond)
		}
		if err := s.read.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
			t.Fatal(err)
		}
	}
	if frames < 0 {
		t.Fatal("the WAL's frame count could not be read")
	}
	if frames >= commits/2 {
		t.Fatalf("the WAL holds %d frames after %d commits in %v with %d reads alongside: it was not started again",
			frames, commits, elapsed, reads.Load())
	}
	t.Logf("the WAL holds %d frames after %d commits in %v (%d reads alongside)", frames, commits, elapsed, reads.Load())
}
