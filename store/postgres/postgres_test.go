package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/storetest"
	"github.com/jackc/pgx/v5"
)

// testURL returns a connection string for a fresh schema on the server
// named by BRABO_TEST_POSTGRES; the schema is dropped when the test ends.
func testURL(t *testing.T) string {
	t.Helper()
	base := os.Getenv("BRABO_TEST_POSTGRES")
	if base == "" {
		t.Skip("BRABO_TEST_POSTGRES is not set; .ci/run sets it")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("BRABO_TEST_POSTGRES=%s: %v", base, err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("t_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

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
