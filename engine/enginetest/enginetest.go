// Package enginetest is what the agents' tests share: a real store on a
// temporary SQLite file, a project owned by a member, and reading back
// actions and events. It is imported by _test.go files only (imports_test
// keeps it so), and wires real adapters as tests do.
package enginetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// Store opens a store on a SQLite file of the test's own, closed when the
// test ends.
func Store(t testing.TB) brabo.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Project records a local project in root, owned by a new member with the
// owner role.
func Project(t testing.TB, s brabo.Store, root string) (*brabo.Member, *brabo.Project) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	owner := &brabo.Member{ID: pipeline.NewID("mem"), Name: "ana", TokenHash: pipeline.NewID("h"), CreatedAt: now}
	p := &brabo.Project{ID: pipeline.NewID("prj"), Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: root,
		WorkspaceDir: "shop-12345678", OwnerID: owner.ID, CreatedAt: now}
	err := s.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, owner); err != nil {
			return err
		}
		if err := tx.CreateProject(ctx, p); err != nil {
			return err
		}
		return tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: owner.ID, Role: brabo.Owner})
	})
	if err != nil {
		t.Fatal(err)
	}
	return owner, p
}

// Action reads an action.
func Action(t testing.TB, s brabo.Store, id string) *brabo.ProposedAction {
	t.Helper()
	ctx := context.Background()
	var a *brabo.ProposedAction
	if err := s.View(ctx, func(tx brabo.Tx) error {
		var err error
		a, err = tx.Action(ctx, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

// Events returns the project's events of one type, in order ("" for all).
func Events(t testing.TB, s brabo.Store, projectID, typ string) []brabo.Event {
	t.Helper()
	ctx := context.Background()
	var evs []brabo.Event
	if err := s.View(ctx, func(tx brabo.Tx) error {
		var err error
		evs, err = tx.Events(ctx, projectID, 0, 1000)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var out []brabo.Event
	for _, e := range evs {
		if typ == "" || e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
