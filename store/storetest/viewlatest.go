package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/brabo-dev/brabo"
)

// testViewLatest attacks what brabo.LatestViewer promises, on a store that
// offers it: the read sees every write committed before the call, what its
// function writes never stays (alone, or in a batch with writes that do),
// its function's error comes back unchanged, and a read that shares a
// batch with a failing write sees nothing of that write.
func testViewLatest(t *testing.T, s brabo.Store) {
	lv, ok := s.(brabo.LatestViewer)
	if !ok {
		t.Skip("the store reads only with View") // not a missing part: a store without LatestViewer has nothing to test here
	}
	ctx := context.Background()
	m, p := fixture(t, s)

	// Committed before the call: seen.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		return tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: m.ID, Role: brabo.Maintainer})
	}))
	var role brabo.Role
	must(t, lv.ViewLatest(ctx, func(tx brabo.Tx) error {
		f, err := tx.ProposalFacts(ctx, p.ID, m.ID, "", brabo.Terminal)
		if err == nil {
			role = f.Role
		}
		return err
	}))
	if role != brabo.Maintainer {
		t.Fatalf("ViewLatest read role %q, want the committed %q", role, brabo.Maintainer)
	}

	// Its function's own write is rolled back, alone and in a batch.
	written := func(i int) *brabo.Member {
		return &brabo.Member{ID: id(fmt.Sprint("viewwrite", i)), Name: id("viewwrite"), TokenHash: id("hash")}
	}
	var wg sync.WaitGroup
	var sneaked []*brabo.Member
	var kept []*brabo.Member
	for i := 0; i < 24; i++ {
		w := written(i)
		if i%2 == 0 {
			sneaked = append(sneaked, w)
		} else {
			kept = append(kept, w)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%2 == 0 {
				if err := lv.ViewLatest(ctx, func(tx brabo.Tx) error { return tx.CreateMember(ctx, w) }); err != nil {
					t.Errorf("ViewLatest %d: %v", i, err)
				}
				return
			}
			if err := s.Update(ctx, func(tx brabo.Tx) error { return tx.CreateMember(ctx, w) }); err != nil {
				t.Errorf("Update %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		for _, w := range sneaked {
			if _, err := tx.Member(ctx, w.ID); !errors.Is(err, brabo.ErrNotFound) {
				t.Errorf("member %s written inside ViewLatest stayed (err %v)", w.ID, err)
			}
		}
		for _, w := range kept {
			if _, err := tx.Member(ctx, w.ID); err != nil {
				t.Errorf("member %s written by an Update of the same batches is missing: %v", w.ID, err)
			}
		}
		return nil
	}))

	// Its function's error comes back as it was.
	mine := errors.New("the reader's own error")
	if err := lv.ViewLatest(ctx, func(tx brabo.Tx) error { return mine }); err != mine {
		t.Fatalf("ViewLatest returned %v, want the function's error", err)
	}
	if err := lv.ViewLatest(ctx, func(tx brabo.Tx) error {
		_, err := tx.Project(ctx, "no-such-project")
		return err
	}); !errors.Is(err, brabo.ErrNotFound) {
		t.Fatalf("ViewLatest of a missing project: %v, want ErrNotFound", err)
	}

	// A failing write next to the read: the read never sees it.
	for round := 0; round < 20; round++ {
		ghost := written(1000 + round)
		var seen error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			s.Update(ctx, func(tx brabo.Tx) error {
				if err := tx.CreateMember(ctx, ghost); err != nil {
					return err
				}
				return errors.New("this write fails after writing")
			})
		}()
		go func() {
			defer wg.Done()
			seen = lv.ViewLatest(ctx, func(tx brabo.Tx) error {
				_, err := tx.Member(ctx, ghost.ID)
				return err
			})
		}()
		wg.Wait()
		if !errors.Is(seen, brabo.ErrNotFound) {
			t.Fatalf("round %d: ViewLatest read a member that a failed Update wrote (err %v)", round, seen)
		}
	}
}
