package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/storetest"
)

func openTest(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func project(t *testing.T, s *Store, id string) {
	t.Helper()
	ctx := context.Background()
	m := &brabo.Member{ID: "m-" + id, Name: "ana " + id, TokenHash: "h-" + id}
	p := &brabo.Project{ID: id, Slug: id, Name: id, Mode: brabo.ModeLocal, Root: "/srv/" + id, WorkspaceDir: id, OwnerID: m.ID}
	if err := s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, m); err != nil {
			return err
		}
		return tx.CreateProject(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
}

// Concurrent Updates share commits, and each still commits its own work:
// 64 callers appending events make fewer than 64 transactions, and every
// event is there, numbered without a gap.
func TestConcurrentUpdatesShareCommits(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, storetest.PostgresURL(t))
	project(t, s, "p1")
	const n = 64
	start := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Int64
	before := s.commits.Load()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := s.Update(ctx, func(tx brabo.Tx) error {
				return tx.AppendEvent(ctx, &brabo.Event{ProjectID: "p1", Type: brabo.EventActionCreated, ActorID: "a"})
			}); err != nil {
				failed.Add(1)
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if got := s.commits.Load() - before; got >= n {
		t.Errorf("%d concurrent Updates took %d commits: they did not share", n, got)
	}
	var evs []brabo.Event
	if err := s.View(ctx, func(tx brabo.Tx) error {
		var err error
		evs, err = tx.Events(ctx, "p1", 0, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(evs) != n {
		t.Fatalf("%d events, want %d", len(evs), n)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

// An Update whose statement PostgreSQL refuses (a duplicate key) fails
// alone: its savepoint undoes it, and the calls batched with it commit.
func TestAStatementErrorFailsItsUpdateAlone(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, storetest.PostgresURL(t))
	project(t, s, "p1")
	dup := &brabo.Member{ID: "m-p1", Name: "again", TokenHash: "other"}
	for round := range 20 {
		errs := batchOf(8, func(i int) error {
			return s.Update(ctx, func(tx brabo.Tx) error {
				if i == 3 {
					return tx.CreateMember(ctx, dup)
				}
				return tx.CreateMember(ctx, &brabo.Member{ID: fmt.Sprintf("r%d-%d", round, i),
					Name: fmt.Sprintf("r%d-%d", round, i), TokenHash: fmt.Sprintf("h%d-%d", round, i)})
			})
		})
		if !errors.Is(errs[3], brabo.ErrConflict) {
			t.Fatalf("round %d: the duplicate's Update: %v, want ErrConflict", round, errs[3])
		}
		for i, err := range errs {
			if i == 3 {
				continue
			}
			if err != nil {
				t.Fatalf("round %d: Update %d failed with the duplicate: %v", round, i, err)
			}
			var m *brabo.Member
			s.View(ctx, func(tx brabo.Tx) error {
				m, _ = tx.MemberByTokenHash(ctx, fmt.Sprintf("h%d-%d", round, i))
				return nil
			})
			if m == nil {
				t.Fatalf("round %d: Update %d said it committed, and its member is missing", round, i)
			}
		}
	}
}

// An Update that swallows PostgreSQL's error and returns nil does not
// commit a half: it gets an error (PostgreSQL aborted its transaction),
// never success; whatever it wrote is not there.
func TestASwallowedStatementErrorIsNotASuccess(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, storetest.PostgresURL(t))
	project(t, s, "p1")
	dup := &brabo.Member{ID: "m-p1", Name: "again", TokenHash: "other"}
	for round := range 20 {
		n := 4
		if round%2 == 0 {
			n = 1 // alone, or last of its batch: what answers is the COMMIT
		}
		errs := batchOf(n, func(i int) error {
			return s.Update(ctx, func(tx brabo.Tx) error {
				if i == n/2 {
					tx.CreateMember(ctx, &brabo.Member{ID: fmt.Sprintf("s%d", round), Name: fmt.Sprintf("s%d", round),
						TokenHash: fmt.Sprintf("s%d", round)})
					if tx.CreateMember(ctx, dup) == nil {
						return errors.New("the duplicate was accepted")
					}
					return nil // the error is swallowed
				}
				return tx.AppendEvent(ctx, &brabo.Event{ProjectID: "p1", Type: brabo.EventActionCreated, ActorID: "a"})
			})
		})
		if errs[n/2] == nil {
			t.Fatalf("round %d: an Update that swallowed PostgreSQL's error was told it committed", round)
		}
		var m *brabo.Member
		s.View(ctx, func(tx brabo.Tx) error {
			m, _ = tx.MemberByTokenHash(ctx, fmt.Sprintf("s%d", round))
			return nil
		})
		if m != nil {
			t.Fatalf("round %d: half of the failed Update was committed", round)
		}
	}
}

// batchOf runs n calls at once and returns their errors.
func batchOf(n int, call func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = call(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// A caller whose context ends while its function runs does not break the
// connection its batch shares: its statements finish, the batch commits.
func TestACancelledCallerDoesNotBreakTheBatch(t *testing.T) {
	s := openTest(t, storetest.PostgresURL(t))
	project(t, s, "p1")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errs[i] = s.Update(ctx, func(tx brabo.Tx) error {
				if i%2 == 0 {
					cancel()
				}
				return tx.AppendEvent(ctx, &brabo.Event{ProjectID: "p1", Type: brabo.EventActionCreated, ActorID: "a"})
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Update %d: %v", i, err)
		}
	}
}

// Two instances appending to one project at once wait for each other's
// counter lock, and the project's events stay numbered without a gap.
func TestTwoInstancesAppendToOneProject(t *testing.T) {
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	a, b := openTest(t, url), openTest(t, url)
	project(t, a, "p1")
	var wg sync.WaitGroup
	for _, s := range []*Store{a, b} {
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					if err := s.Update(ctx, func(tx brabo.Tx) error {
						return tx.AppendEvent(ctx, &brabo.Event{ProjectID: "p1", Type: brabo.EventActionCreated, ActorID: "a"})
					}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	var evs []brabo.Event
	if err := a.View(ctx, func(tx brabo.Tx) error {
		var err error
		evs, err = tx.Events(ctx, "p1", 0, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 320 {
		t.Fatalf("%d events, want 320", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

// TestUpdateDuringCloseReturns: an Update that races Close is committed or
// answered ErrClosed, never left waiting.
func TestUpdateDuringCloseReturns(t *testing.T) {
	s, err := Open(context.Background(), storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	storetest.UpdateDuringCloseReturns(t, s, ErrClosed)
}

// A View cannot write: its sessions are read-only.
func TestAViewCannotWrite(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, storetest.PostgresURL(t))
	project(t, s, "p1")
	err := s.View(ctx, func(tx brabo.Tx) error {
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: "p1", Type: brabo.EventActionCreated, ActorID: "a"})
	})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write in a View: %v, want PostgreSQL's read-only refusal", err)
	}
	var evs []brabo.Event
	s.View(ctx, func(tx brabo.Tx) error {
		evs, _ = tx.Events(ctx, "p1", 0, 0)
		return nil
	})
	if len(evs) != 0 {
		t.Fatalf("the View wrote %d events", len(evs))
	}
}
