package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// testPermissionsTrust: a project has no trusted version until one is
// recorded; the first is recorded once, as entry 1 of the history;
// trusting a version makes it current, keeps its bytes and appends it to
// the history (unless it is current already); a content seen on disk is
// reported once per content and history entry, an older accepted version
// too once a later one is current.
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
	history := func() []brabo.PermissionsHistoryEntry {
		var h []brabo.PermissionsHistoryEntry
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			var err error
			h, err = tx.PermissionsHistory(ctx, p.ID)
			return err
		}))
		return h
	}
	if h := history(); len(h) != 1 || h[0].Seq != 1 || h[0].Hash != "h-empty" || h[0].Source != brabo.TrustCreated || !h[0].At.Equal(now) {
		t.Fatalf("the history after init: %+v", h)
	}
	if pt.Seq != 1 {
		t.Fatalf("the first trusted version is entry %d of the history, want 1", pt.Seq)
	}
	report := func(hash string, seq int64) bool {
		var ok bool
		must(t, s.Update(ctx, func(tx brabo.Tx) error {
			var err error
			ok, err = tx.ReportPermissions(ctx, p.ID, hash, seq, now)
			return err
		}))
		return ok
	}
	if first, second := report("h-loose", 1), report("h-loose", 1); !first || second {
		t.Errorf("ReportPermissions twice: %v %v, want true then false", first, second)
	}
	if v := version("h-loose"); v.Trusted || v.Content != nil || v.Source != brabo.TrustReported || v.ReportedSeq != 1 {
		t.Errorf("a reported version: %+v", v)
	}
	if pt, _ := read(); pt.Hash != "h-empty" || pt.Seq != 1 {
		t.Errorf("a report moved the trust: %+v", pt)
	}

	// Accepting it: trusted, with its bytes and who accepted it, current,
	// and the next entry of the history.
	later := now.Add(time.Second)
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if _, err := tx.LockPermissionsTrust(ctx, p.ID); err != nil {
			return err
		}
		return tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "h-loose",
			Content: []byte(`{"allow":["Terminal(bash)"]}`), Source: brabo.TrustAccepted, ActorID: m.ID, TrustedAt: later})
	}))
	if pt, err := read(); err != nil || pt.Hash != "h-loose" || pt.Seq != 2 || !pt.UpdatedAt.Equal(later) {
		t.Fatalf("trust after accept: %+v %v", pt, err)
	}
	if ft := factsTrust(); ft == nil || ft.Hash != "h-loose" || ft.Seq != 2 {
		t.Fatalf("the proposal's facts after accept: %+v", ft)
	}
	v := version("h-loose")
	if !v.Trusted || !bytes.Equal(v.Content, []byte(`{"allow":["Terminal(bash)"]}`)) || v.Source != brabo.TrustAccepted ||
		v.ActorID != m.ID || !v.TrustedAt.Equal(later) || !v.CreatedAt.Equal(now) {
		t.Errorf("the accepted version: %+v", v)
	}
	// Trusting the current version again keeps where it came from, and is
	// no new entry of the history.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		return tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "h-loose",
			Content: []byte(`{"allow":["Terminal(bash)"]}`), Source: brabo.TrustPut, TrustedAt: later.Add(time.Second)})
	}))
	if v := version("h-loose"); v.Source != brabo.TrustAccepted {
		t.Errorf("a second trust rewrote the source: %+v", v)
	}
	if pt, _ := read(); pt.Seq != 2 {
		t.Errorf("trusting the current version again moved the history to %d", pt.Seq)
	}

	// The first version made current again (a PUT of it): a third entry.
	// The older accepted h-loose is no longer trusted: seen on disk now, it
	// is reported again, once, against the new entry; a report against an
	// older entry is not a new one.
	latest := later.Add(2 * time.Second)
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if _, err := tx.LockPermissionsTrust(ctx, p.ID); err != nil {
			return err
		}
		return tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "h-empty", Content: nil,
			Source: brabo.TrustPut, ActorID: m.ID, TrustedAt: latest})
	}))
	if pt, _ := read(); pt == nil || pt.Hash != "h-empty" || pt.Seq != 3 {
		t.Errorf("trust after making the first version current again: %+v", pt)
	}
	h := history()
	if len(h) != 3 || h[0].Hash != "h-empty" || h[1].Hash != "h-loose" || h[2].Hash != "h-empty" ||
		h[1].Source != brabo.TrustAccepted || h[1].ActorID != m.ID || h[2].Source != brabo.TrustPut || !h[2].At.Equal(latest) {
		t.Errorf("the history: %+v", h)
	}
	for i, e := range h {
		if e.Seq != int64(i+1) {
			t.Errorf("history entry %d has seq %d", i, e.Seq)
		}
	}
	if v := version("h-empty"); v.Source != brabo.TrustCreated {
		t.Errorf("making the first version current again rewrote its source: %+v", v)
	}
	if stale := report("h-loose", 1); stale {
		t.Error("a report against an older history entry counted as new")
	}
	if first, second := report("h-loose", 3), report("h-loose", 3); !first || second {
		t.Errorf("reporting the older accepted version against the new entry: %v %v, want true then false", first, second)
	}
	if v := version("h-loose"); !v.Trusted || v.Content == nil || v.ReportedSeq != 3 || v.Source != brabo.TrustAccepted {
		t.Errorf("the reported older version lost what it was: %+v", v)
	}
	var list []*brabo.PermissionsVersion
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		var err error
		list, err = tx.PermissionsVersions(ctx, p.ID)
		return err
	}))
	if len(list) != 2 || list[0].Hash != "h-empty" || list[1].Hash != "h-loose" || list[0].Content != nil {
		t.Errorf("accepted versions: %+v", list)
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
		if h, err := tx.PermissionsHistory(ctx, q.ID); err != nil || len(h) != 0 {
			t.Errorf("another project's history: %+v %v", h, err)
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
	if len(pt.Hash) != len("v0")+writers || pt.Seq != writers+1 {
		t.Errorf("current %q (history entry %d) after %d locked read-modify-writes: an update was lost", pt.Hash, pt.Seq, writers)
	}
}

// PermissionsHistoryMigration checks migration 00012 on a store: with the
// store taken back below it (down), trust rows as they were before (three
// accepted versions, the oldest current again after a switch back, and a
// reported one) written with exec, and the store migrated again (up), the
// accepted versions are a history in the order they were trusted with the
// current one last, the trust row names its entry, the reported version
// counts as reported against it, and an older accepted one as never
// reported (so its return to disk is reported).
func PermissionsHistoryMigration(t *testing.T, s brabo.Store, down func(), exec func(query string, args ...any), up func()) {
	t.Helper()
	ctx := context.Background()
	m, p := fixture(t, s)
	down()
	at := func(sec int64) int64 { return time.Unix(1_700_000_000+sec, 0).UnixMicro() }
	for _, v := range []struct {
		hash, source string
		trusted      bool
		sec          int64
	}{{"h-a", brabo.TrustCreated, true, 1}, {"h-b", brabo.TrustAccepted, true, 2}, {"h-c", brabo.TrustPut, true, 3},
		{"h-r", brabo.TrustReported, false, 4}} {
		var trustedAt any
		var content any
		if v.trusted {
			trustedAt, content = at(v.sec), []byte("{}")
		}
		exec(`INSERT INTO permissions_versions (project_id, hash, trusted, content, source, actor_id, created_at, trusted_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, p.ID, v.hash, v.trusted, content, v.source, m.ID, at(v.sec), trustedAt)
	}
	exec(`INSERT INTO permissions_trust (project_id, current_hash, updated_at) VALUES ($1, 'h-a', $2)`, p.ID, at(5))
	up()
	var h []brabo.PermissionsHistoryEntry
	var pt *brabo.PermissionsTrust
	versions := map[string]*brabo.PermissionsVersion{}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		var err error
		if h, err = tx.PermissionsHistory(ctx, p.ID); err != nil {
			return err
		}
		if pt, err = tx.PermissionsTrust(ctx, p.ID); err != nil {
			return err
		}
		for _, hash := range []string{"h-a", "h-b", "h-r"} {
			if versions[hash], err = tx.PermissionsVersion(ctx, p.ID, hash); err != nil {
				return err
			}
		}
		return nil
	}))
	var got []string
	for i, e := range h {
		got = append(got, e.Hash)
		if e.Seq != int64(i+1) {
			t.Errorf("migrated history entry %d has seq %d", i, e.Seq)
		}
	}
	if strings.Join(got, " ") != "h-b h-c h-a" || h[0].Source != brabo.TrustAccepted || h[0].ActorID != m.ID ||
		h[0].At.UnixMicro() != at(2) {
		t.Errorf("the migrated history: %+v, want h-b h-c h-a (the current one last)", h)
	}
	if pt.Hash != "h-a" || pt.Seq != 3 {
		t.Errorf("the migrated trust row: %+v, want h-a at entry 3", pt)
	}
	if v := versions["h-r"]; v.ReportedSeq != 3 || v.Trusted {
		t.Errorf("the migrated reported version: %+v, want reported against entry 3", v)
	}
	if v := versions["h-b"]; v.ReportedSeq != 0 || !v.Trusted || v.Content == nil {
		t.Errorf("the migrated older accepted version: %+v, want accepted and never reported", v)
	}
	// The next trusted version is entry 4.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		return tx.TrustPermissions(ctx, &brabo.PermissionsVersion{ProjectID: p.ID, Hash: "h-d", Content: []byte("{}"),
			Source: brabo.TrustPut, TrustedAt: time.Now().UTC()})
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		var err error
		pt, err = tx.PermissionsTrust(ctx, p.ID)
		return err
	}))
	if pt.Hash != "h-d" || pt.Seq != 4 {
		t.Errorf("trusting after the migration: %+v, want h-d at entry 4", pt)
	}
}
