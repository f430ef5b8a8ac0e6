package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// UpdateDuringCloseReturns is the rule that every Update answers, even
// one that races Close: committed, or closed (the store's ErrClosed),
// never a wait for a writer that is gone, which would hang a server's
// graceful shutdown. s is closed by it.
func UpdateDuringCloseReturns(t *testing.T, s brabo.Store, closed error) {
	ctx := context.Background()
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
				case errors.Is(err, closed):
					refused.Add(1)
				default:
					t.Errorf("Update: %v", err)
					return
				}
			}
		}()
	}
	// Let some calls commit first; 3,200 calls last longer than this on
	// either store.
	for deadline := time.Now().Add(10 * time.Second); committed.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no Update committed in 10 s")
		}
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
