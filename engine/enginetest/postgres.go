package enginetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/jackc/pgx/v5"
)

// Postgres opens a store on a fresh schema of the PostgreSQL server named
// by BRABO_TEST_POSTGRES, closed and dropped when the test ends; the test
// is skipped when the variable is not set.
func Postgres(t testing.TB) brabo.Store {
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
	schema := fmt.Sprintf("e_%d", time.Now().UnixNano())
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
	s, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Stores names the stores a test should run on: SQLite on a file, and
// PostgreSQL (skipped without BRABO_TEST_POSTGRES).
var Stores = []struct {
	Name string
	Open func(t testing.TB) brabo.Store
}{
	{"sqlite", Store},
	{"postgres", Postgres},
}
