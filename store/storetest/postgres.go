package storetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var schemaSeq atomic.Int64

// PostgresURL is a connection string for a fresh schema of the PostgreSQL
// server named by BRABO_TEST_POSTGRES, dropped when the test ends, so
// tests never see each other's rows. Without the variable the test is
// skipped, or failed under CI (.ci/run sets it).
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("BRABO_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("BRABO_TEST_POSTGRES is not set, and CI is: .ci/run sets it")
		}
		t.Skip("BRABO_TEST_POSTGRES is not set; .ci/run sets it, and under CI this fails")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("BRABO_TEST_POSTGRES=%s: %v", base, err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("t_%d_%d", time.Now().UnixNano(), schemaSeq.Add(1))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), base); err == nil {
			c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("BRABO_TEST_POSTGRES=%s: %v", base, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
