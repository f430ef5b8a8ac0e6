package postgres

import (
	"context"
	"io/fs"
	"testing"

	"github.com/brabo-dev/brabo/store/storetest"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// Migration 00012 (trust is the latest accepted version) on PostgreSQL.
func TestPermissionsHistoryMigration(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub)
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
			if _, err := s.pool.Exec(ctx, q, args...); err != nil {
				t.Fatal(err)
			}
		},
		func() {
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		})
}
