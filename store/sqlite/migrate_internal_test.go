package sqlite

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo/store/storetest"
	"github.com/pressly/goose/v3"
)

// Migration 00012 (trust is the latest accepted version) on SQLite.
func TestPermissionsHistoryMigration(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, s.write, sub)
	if err != nil {
		t.Fatal(err)
	}
	storetest.PermissionsHistoryMigration(t, s,
		func() {
			if _, err := p.DownTo(ctx, 11); err != nil {
				t.Fatal(err)
			}
		},
		func(q string, args ...any) {
			if _, err := s.write.ExecContext(ctx, q, args...); err != nil {
				t.Fatal(err)
			}
		},
		func() {
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		})
}
