// Package enginetest is what the agents' tests share: a real store on a
// temporary SQLite file, a project owned by a member, and reading back
// actions and events. It is imported by _test.go files only (imports_test
// keeps it so), and wires real adapters as tests do.
package enginetest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/model/scripted"
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
	owner := &brabo.Member{ID: brabo.NewID("mem"), Name: "ana", TokenHash: brabo.NewID("h"), CreatedAt: now}
	p := &brabo.Project{ID: brabo.NewID("prj"), Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: root,
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
	return read(t, s, func(ctx context.Context, tx brabo.Tx) (*brabo.ProposedAction, error) { return tx.Action(ctx, id) })
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

// Recorder wraps a model and keeps a JSON copy of every request it is
// sent: what the model really saw, even if the caller changes its slices
// afterwards.
type Recorder struct {
	Inner model.Model
	mu    sync.Mutex
	reqs  []model.Request
}

// Complete records req and passes it on.
func (r *Recorder) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	raw, _ := json.Marshal(req)
	var cp model.Request
	json.Unmarshal(raw, &cp)
	r.mu.Lock()
	r.reqs = append(r.reqs, cp)
	r.mu.Unlock()
	return r.Inner.Complete(ctx, req)
}

// Calls is how many times the model was called.
func (r *Recorder) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// Req returns request i (from 0), failing the test if there is none.
func (r *Recorder) Req(t testing.TB, i int) model.Request {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < 0 || i >= len(r.reqs) {
		t.Fatalf("the model was called %d times; want request %d", len(r.reqs), i+1)
	}
	return r.reqs[i]
}

// Last returns the latest request.
func (r *Recorder) Last(t testing.TB) model.Request {
	t.Helper()
	return r.Req(t, r.Calls()-1)
}

// Scripted is a Recorder around a scripted model parsed from script.
func Scripted(t testing.TB, name, script string) *Recorder {
	t.Helper()
	m, err := scripted.ParseNamed(name, []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return &Recorder{Inner: m}
}

// Requests returns every request so far, in order.
func (r *Recorder) Requests() []model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.Request(nil), r.reqs...)
}
