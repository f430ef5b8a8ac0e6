package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// TestUpdateDuringCloseReturns is the rule that every Update answers, even
// one that races Close: committed, or ErrClosed, never a wait for a writer
// that is gone (which would hang a server's graceful shutdown).
func TestUpdateDuringCloseReturns(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	var n, committed, refused atomic.Int64
	var callers sync.WaitGroup
	for range 16 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			for range 200 {
				i := n.Add(1)
				m := &brabo.Member{ID: fmt.Sprintf("m%d", i), Name: fmt.Sprintf("member %d", i), TokenHash: fmt.Sprintf("hash %d", i)}
				err := s.Update(ctx, func(tx brabo.Tx) error { return tx.CreateMember(ctx, m) })
				switch {
				case err == nil:
					committed.Add(1)
				case errors.Is(err, ErrClosed):
					refused.Add(1)
				default:
					t.Errorf("Update: %v", err)
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	s.Close()
	returned := make(chan struct{})
	go func() { callers.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatalf("Update calls still waiting 10 s after Close (%d committed, %d refused)", committed.Load(), refused.Load())
	}
	if committed.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("%d committed and %d refused: the race with Close was not exercised", committed.Load(), refused.Load())
	}
}
