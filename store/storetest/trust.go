package storetest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// testPermissionsTrust: a project has no trusted version until one is
// recorded; the first is recorded once; trusting a version makes it
// current and keeps its bytes; only a trusted version can be made current
// again; a content seen on disk is reported once, and becomes trusted when
// accepted.
func testPermissionsTrust(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	read := func() (*brabo.PermissionsTrust, error) {
		var pt *brabo.PermissionsTrust
		err := s.View(ctx, func(tx brabo.Tx) error {
			var err error
			pt, err = tx.PermissionsTrust(ctx, p.ID)
			return err
		})
		return pt, err
	}
	version := func(hash string) *brabo.PermissionsVersion {
		var v *brabo.PermissionsVersion
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			var err error
			v, err = tx.PermissionsVersion(ctx, p.ID, hash)
			return err
		}))
		return v
	}
	if _, err := read(); !errors.Is(err, brabo.ErrNotFound) {
		t.Fatalf("a new project's trust: %v, want ErrNotFound", err)
	}
	factsTrust := func() *brabo.PermissionsTrust {
		var f *brabo.ProposalFacts
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			var err error
			f, err = tx.ProposalFacts(ctx, p.ID, m.ID, "", brabo.Terminal)
			return err
		}))
		return f.Trust
	}
	if pt := factsTrust(); pt != nil {
		t.Fatalf("a new project's facts carry a trust: %+v", pt)
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		_, err := tx.LockPermissionsTrust(ctx, p.ID)
		if !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("locking a missing trust row: %v, want ErrNotFound", err)
		}
		return nil
	}))

	// The first version: the empty file, recorded once.
	first := &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "h-empty", Content: nil, Source: brabo.TrustCreated, TrustedAt: now}
	var won [2]bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		won[0], err = tx.InitPermissionsTrust(ctx, first)
		return err
	}))
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		won[1], err = tx.InitPermissionsTrust(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "h-other",
			Content: []byte("{}"), Source: brabo.TrustFirstUse, TrustedAt: now})
		return err
	}))
	if !won[0] || won[1] {
		t.Fatalf("InitPermissionsTrust twice: %v, want the first only", won)
	}
	pt, err := read()
	if err != nil || pt.Hash != "h-empty" || !pt.UpdatedAt.Equal(now) {
		t.Fatalf("trust after init: %+v %v", pt, err)
	}
	if ft := factsTrust(); ft == nil || *ft != *pt {
		t.Fatalf("the proposal's facts carry trust %+v, want %+v", ft, pt)
	}
	if v := version("h-empty"); !v.Trusted || v.Content == nil || len(v.Content) != 0 || v.Source != brabo.TrustCreated {
		t.Errorf("the empty first version: %+v", v)
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		_, err := tx.PermissionsVersion(ctx, p.ID, "h-other")
		if !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("the refused init left a version: %v", err)
		}
		return nil
	}))

	// A content seen on disk is reported once, without bytes.
	var reported []bool
	for range 2 {
		must(t, s.Update(ctx, func(tx brabo.Tx) error {
			ok, err := tx.ReportPermissions(ctx, p.ID, "h-loose", now)
			reported = append(reported, ok)
			return err
		}))
	}
	if !reported[0] || reported[1] {
		t.Errorf("ReportPermissions twice: %v, want true then false", reported)
	}
	if v := version("h-loose"); v.Trusted || v.Content != nil || v.Source != brabo.TrustReported {
		t.Errorf("a reported version: %+v", v)
	}
	// A reported version cannot be made current.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.SetPermissionsCurrent(ctx, p.ID, "h-loose", now)
		if ok {
			t.Error("a reported version was made current")
		}
		return err
	}))

	// Accepting it: trusted, with its bytes and who accepted it, and current.
	later := now.Add(time.Second)
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if _, err := tx.LockPermissionsTrust(ctx, p.ID); err != nil {
			return err
		}
		return tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "h-loose",
			Content: []byte(`{"allow":["Terminal(bash)"]}`), Source: brabo.TrustAccepted, ActorID: m.ID, TrustedAt: later})
	}))
	if pt, err := read(); err != nil || pt.Hash != "h-loose" {
		t.Fatalf("trust after accept: %+v %v", pt, err)
	}
	v := version("h-loose")
	if !v.Trusted || !bytes.Equal(v.Content, []byte(`{"allow":["Terminal(bash)"]}`)) || v.Source != brabo.TrustAccepted ||
		v.ActorID != m.ID || !v.TrustedAt.Equal(later) || !v.CreatedAt.Equal(now) {
		t.Errorf("the accepted version: %+v", v)
	}
	// Trusting it again keeps where it came from.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		return tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "h-loose",
			Content: []byte(`{"allow":["Terminal(bash)"]}`), Source: brabo.TrustPut, TrustedAt: later.Add(time.Second)})
	}))
	if v := version("h-loose"); v.Source != brabo.TrustAccepted {
		t.Errorf("a second trust rewrote the source: %+v", v)
	}
	// Back to the first version: it is trusted, so it can be current again.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.SetPermissionsCurrent(ctx, p.ID, "h-empty", later)
		if !ok {
			t.Error("a trusted version could not be made current")
		}
		return err
	}))
	if pt, _ := read(); pt == nil || pt.Hash != "h-empty" {
		t.Errorf("trust after switching back: %+v", pt)
	}
	var list []*brabo.PermissionsVersion
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		var err error
		list, err = tx.PermissionsVersions(ctx, p.ID)
		return err
	}))
	if len(list) != 2 || list[0].Hash != "h-empty" || list[1].Hash != "h-loose" || list[0].Content != nil {
		t.Errorf("trusted versions: %+v", list)
	}

	// Another project's trust is its own.
	_, q := fixture(t, s)
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if _, err := tx.PermissionsTrust(ctx, q.ID); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("another project's trust: %v", err)
		}
		if _, err := tx.PermissionsVersion(ctx, q.ID, "h-empty"); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("another project's version: %v", err)
		}
		return nil
	}))
}

// testPermissionsTrustLock: two transactions that read the trusted version
// under its lock and then change it run one after the other, so neither
// change is lost (on PostgreSQL the row lock orders them; on SQLite the one
// writer does).
func testPermissionsTrustLock(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	now := time.Now().UTC()
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		_, err := tx.InitPermissionsTrust(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "v0", Content: []byte("{}"),
			Source: brabo.TrustCreated, TrustedAt: now})
		return err
	}))
	// Each writer appends its mark to the current hash it read under the
	// lock: a lost update would leave fewer marks than writers.
	const writers = 6
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.Update(ctx, func(tx brabo.Tx) error {
				pt, err := tx.LockPermissionsTrust(ctx, p.ID)
				if err != nil {
					return err
				}
				time.Sleep(5 * time.Millisecond) // widen the window a lost update needs
				next := pt.Hash + string(rune('a'+i))
				return tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: next,
					Content: []byte(next), Source: brabo.TrustPut, TrustedAt: now})
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	var pt *brabo.PermissionsTrust
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		var err error
		pt, err = tx.PermissionsTrust(ctx, p.ID)
		return err
	}))
	if len(pt.Hash) != len("v0")+writers {
		t.Errorf("current %q after %d locked read-modify-writes: an update was lost", pt.Hash, writers)
	}
}
