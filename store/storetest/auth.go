package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// signalled reports whether ch receives a signal within d.
func signalled(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// drainSignals empties ch of the echoes of earlier commits.
func drainSignals(ch <-chan struct{}) {
	for signalled(ch, 300*time.Millisecond) {
	}
}

func testTokenRevocation(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	a := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "coder", PrincipalID: m.ID, TokenHash: id("agh"), CreatedAt: now}
	sess := &brabo.Session{ID: id("ses"), MemberID: m.ID, TokenHash: id("sh"), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateAgent(ctx, a); err != nil {
			return err
		}
		return tx.CreateSession(ctx, sess)
	}))
	auth, cancel := s.Subscribe(brabo.AuthSignal)
	defer cancel()
	drainSignals(auth)

	var live bool
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		live, err = tx.RevokeAgentToken(ctx, a.ID, now)
		return err
	}))
	if !live {
		t.Error("RevokeAgentToken of a live token reported it was not live")
	}
	if !signalled(auth, 5*time.Second) {
		t.Error("revoking an agent's token sent no AuthSignal")
	}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		live, err = tx.RevokeMemberToken(ctx, m.ID, now)
		return err
	}))
	if !live {
		t.Error("RevokeMemberToken of a live token reported it was not live")
	}
	if !signalled(auth, 5*time.Second) {
		t.Error("revoking a member's token sent no AuthSignal")
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if _, err := tx.AgentByTokenHash(ctx, a.TokenHash); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("a revoked agent token still finds its agent: %v", err)
		}
		if _, err := tx.MemberByTokenHash(ctx, m.TokenHash); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("a revoked member token still finds its member: %v", err)
		}
		// The rows stay: actions and events name them.
		if got, err := tx.Member(ctx, m.ID); err != nil || !got.RevokedAt.Equal(now) {
			t.Errorf("the revoked member: %+v %v", got, err)
		}
		if got, err := tx.Agent(ctx, a.ID); err != nil || !got.RevokedAt.Equal(now) {
			t.Errorf("the revoked agent: %+v %v", got, err)
		}
		// Revoking the member's token ended its sessions.
		got, err := tx.SessionByTokenHash(ctx, sess.TokenHash)
		if err != nil || got.Live(now) || !got.RevokedAt.Equal(now) {
			t.Errorf("the member's session after its token was revoked: %+v %v", got, err)
		}
		return nil
	}))
	// A second revocation finds nothing live.
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		var err error
		live, err = tx.RevokeAgentToken(ctx, a.ID, now.Add(time.Second))
		return err
	}))
	if live {
		t.Error("revoking a revoked agent token reported it live")
	}
	// A new token replaces the old and lifts the revocation.
	newHash := id("newhash")
	drainSignals(auth)
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SetMemberToken(ctx, m.ID, newHash, now) }))
	if !signalled(auth, 5*time.Second) {
		t.Error("replacing a member's token sent no AuthSignal")
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if got, err := tx.MemberByTokenHash(ctx, newHash); err != nil || got.ID != m.ID || !got.RevokedAt.IsZero() {
			t.Errorf("the new token: %+v %v", got, err)
		}
		if _, err := tx.MemberByTokenHash(ctx, m.TokenHash); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("the replaced token still works: %v", err)
		}
		return nil
	}))
	err := s.Update(ctx, func(tx brabo.Tx) error { return tx.SetMemberToken(ctx, "nobody", id("h"), now) })
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("SetMemberToken of a missing member: %v", err)
	}
	// An agent's new token (a re-installed hook) lifts its revocation too.
	agentHash := id("agenthash")
	drainSignals(auth)
	must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SetAgentToken(ctx, a.ID, agentHash) }))
	if !signalled(auth, 5*time.Second) {
		t.Error("replacing an agent's token sent no AuthSignal")
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if got, err := tx.AgentByTokenHash(ctx, agentHash); err != nil || got.ID != a.ID || !got.RevokedAt.IsZero() {
			t.Errorf("the agent's new token: %+v %v", got, err)
		}
		if _, err := tx.AgentByTokenHash(ctx, a.TokenHash); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("the agent's replaced token still works: %v", err)
		}
		return nil
	}))
	err = s.Update(ctx, func(tx brabo.Tx) error { return tx.SetAgentToken(ctx, "nobody", id("h")) })
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Errorf("SetAgentToken of a missing agent: %v", err)
	}
}

func testAdmins(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, _ := fixture(t, s)
	now := time.Now().UTC()
	first := &brabo.Member{ID: id("mem"), Name: "root", Admin: true, TokenHash: id("h"), CreatedAt: now.Add(-time.Hour)}
	second := &brabo.Member{ID: id("mem"), Name: "root2", Admin: true, TokenHash: id("h"), CreatedAt: now}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, second); err != nil {
			return err
		}
		return tx.CreateMember(ctx, first)
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Admins(ctx)
		if err != nil || len(got) != 2 || got[0].ID != first.ID || got[1].ID != second.ID {
			t.Errorf("Admins = %v %v; want %s then %s, and not %s", got, err, first.ID, second.ID, m.ID)
		}
		return nil
	}))
}

func testSessions(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, _ := fixture(t, s)
	other := &brabo.Member{ID: id("mem"), Name: "bo", TokenHash: id("h"), CreatedAt: time.Now().UTC()}
	now := time.Now().UTC().Truncate(time.Microsecond)
	older := &brabo.Session{ID: id("ses"), MemberID: m.ID, TokenHash: id("sh"), UserAgent: "firefox", CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)}
	newer := &brabo.Session{ID: id("ses"), MemberID: m.ID, TokenHash: id("sh"), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	expired := &brabo.Session{ID: id("ses"), MemberID: m.ID, TokenHash: id("sh"), CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}
	theirs := &brabo.Session{ID: id("ses"), MemberID: other.ID, TokenHash: id("sh"), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, other); err != nil {
			return err
		}
		for _, x := range []*brabo.Session{older, newer, expired, theirs} {
			if err := tx.CreateSession(ctx, x); err != nil {
				return err
			}
		}
		return nil
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.SessionByTokenHash(ctx, older.TokenHash)
		if err != nil || got.ID != older.ID || got.MemberID != m.ID || got.UserAgent != "firefox" ||
			!got.ExpiresAt.Equal(older.ExpiresAt) || !got.Live(now) {
			t.Errorf("session round trip: %+v %v", got, err)
		}
		if got, err := tx.SessionByTokenHash(ctx, expired.TokenHash); err != nil || got.Live(now) {
			t.Errorf("an expired session: %+v %v, want found and not live", got, err)
		}
		if _, err := tx.SessionByTokenHash(ctx, "nope"); !errors.Is(err, brabo.ErrNotFound) {
			t.Errorf("a missing session: %v", err)
		}
		list, err := tx.Sessions(ctx, m.ID, now)
		if err != nil || len(list) != 2 || list[0].ID != newer.ID || list[1].ID != older.ID {
			t.Errorf("Sessions = %v %v; want the newer, then the older, and not the expired one", list, err)
		}
		return nil
	}))
	auth, cancel := s.Subscribe(brabo.AuthSignal)
	defer cancel()
	drainSignals(auth)
	revoke := func(member, session string) bool {
		var ok bool
		must(t, s.Update(ctx, func(tx brabo.Tx) error {
			var err error
			ok, err = tx.RevokeSession(ctx, member, session, now)
			return err
		}))
		return ok
	}
	if revoke(m.ID, theirs.ID) {
		t.Error("a member revoked another member's session")
	}
	if !revoke(m.ID, older.ID) {
		t.Error("a member could not revoke its own live session")
	}
	if !signalled(auth, 5*time.Second) {
		t.Error("revoking a session sent no AuthSignal")
	}
	if revoke(m.ID, older.ID) {
		t.Error("a session was revoked twice")
	}
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		if got, err := tx.SessionByTokenHash(ctx, theirs.TokenHash); err != nil || !got.Live(now) {
			t.Errorf("the other member's session: %+v %v", got, err)
		}
		list, err := tx.Sessions(ctx, m.ID, now)
		if err != nil || len(list) != 1 || list[0].ID != newer.ID {
			t.Errorf("Sessions after a revocation = %v %v", list, err)
		}
		return nil
	}))
}

func testCountAndPages(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	base := time.Now().UTC()
	var ids []string // newest first, the listing's order
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		for i := 0; i < 7; i++ {
			a := newAction(p, "agt_pages")
			a.CreatedAt = base.Add(time.Duration(i) * time.Second)
			if i == 3 {
				a.Status = brabo.StatusDenied
			}
			if err := tx.InsertAction(ctx, a); err != nil {
				return err
			}
			if i != 3 {
				ids = append([]string{a.ID}, ids...)
			}
		}
		return nil
	}))
	must(t, s.View(ctx, func(tx brabo.Tx) error {
		f := brabo.ActionFilter{ProjectIDs: []string{p.ID}, Status: brabo.StatusPending, Limit: 4}
		n, err := tx.CountActions(ctx, f)
		if err != nil || n != 6 {
			t.Errorf("CountActions = %d %v, want 6 (the limit does not cut the count)", n, err)
		}
		var got []string
		for f.Offset = 0; f.Offset < 8; f.Offset += 4 {
			page, err := tx.Actions(ctx, f)
			if err != nil {
				return err
			}
			for _, a := range page {
				got = append(got, a.ID)
			}
		}
		if len(got) != len(ids) {
			t.Fatalf("two pages hold %d actions, want %d", len(got), len(ids))
		}
		for i := range ids {
			if got[i] != ids[i] {
				t.Errorf("page order: %d is %s, want %s", i, got[i], ids[i])
			}
		}
		if n, err := tx.CountActions(ctx, brabo.ActionFilter{ProjectIDs: []string{p.ID}}); err != nil || n != 7 {
			t.Errorf("CountActions of every status = %d %v, want 7", n, err)
		}
		return nil
	}))
}

func testPendingOfAgent(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	m, p := fixture(t, s)
	a := &brabo.Agent{ID: id("agt"), ProjectID: p.ID, Name: "flood", PrincipalID: m.ID, TokenHash: id("agh"), CreatedAt: time.Now().UTC()}
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateAgent(ctx, a); err != nil {
			return err
		}
		done := newAction(p, a.ID)
		done.Status = brabo.StatusExecuted
		if err := tx.InsertAction(ctx, done); err != nil {
			return err
		}
		return tx.InsertAction(ctx, newAction(p, "someone-else"))
	}))
	// Twenty concurrent proposals, each counting then inserting under a
	// limit of five: the count orders them, so exactly five get in.
	const limit = 5
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(ctx, func(tx brabo.Tx) error {
				n, err := tx.PendingOfAgent(ctx, a.ID)
				if err != nil || n >= limit {
					return err
				}
				return tx.InsertAction(ctx, newAction(p, a.ID))
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	must(t, s.Update(ctx, func(tx brabo.Tx) error {
		n, err := tx.PendingOfAgent(ctx, a.ID)
		if err != nil || n != limit {
			t.Errorf("PendingOfAgent = %d %v, want %d: the limit did not hold under concurrent proposals", n, err, limit)
		}
		return nil
	}))
}
