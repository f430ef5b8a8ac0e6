package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/storetest"
)

// testURL is a fresh schema on the test server (storetest.PostgresURL).
func testURL(t *testing.T) string { return storetest.PostgresURL(t) }

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) brabo.Store {
		s, err := postgres.Open(context.Background(), testURL(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Two stores on one database: a commit through one signals the other's
// subscribers through NOTIFY.
func TestNotifyCrossesInstances(t *testing.T) {
	ctx := context.Background()
	u := testURL(t)
	a, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := &brabo.Member{ID: "m1", Name: "ana", TokenHash: "h1"}
	p := &brabo.Project{ID: "p1", Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: "/srv/shop", WorkspaceDir: "shop-p1", OwnerID: "m1"}
	if err := a.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, m); err != nil {
			return err
		}
		return tx.CreateProject(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	ch, cancel := b.Subscribe("p1")
	defer cancel()
	// The listener connects asynchronously; retry the commit until it hears one.
	deadline := time.After(10 * time.Second)
	for {
		if err := a.Update(ctx, func(tx brabo.Tx) error {
			return tx.AppendEvent(ctx, &brabo.Event{ProjectID: "p1", Type: brabo.EventActionCreated, ActorID: "a"})
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
			return
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("instance b never heard instance a's commit")
		}
	}
}
