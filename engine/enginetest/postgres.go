package enginetest

import (
	"context"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/storetest"
)

// Postgres opens a store on a fresh schema of the PostgreSQL server named
// by BRABO_TEST_POSTGRES, closed and dropped when the test ends; the test
// is skipped when the variable is not set.
func Postgres(t testing.TB) brabo.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), storetest.PostgresURL(t))
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
