package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/sqlite"
	"github.com/brabo-dev/brabo/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) brabo.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "brabo.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	m := &brabo.Member{ID: "m1", Name: "ana", TokenHash: "h1"}
	if err := s.Update(ctx, func(tx brabo.Tx) error { return tx.CreateMember(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(ctx, path) // migrations run again: a no-op
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(ctx, func(tx brabo.Tx) error {
		_, err := tx.Member(ctx, "m1")
		return err
	}); err != nil {
		t.Fatalf("member lost across reopen: %v", err)
	}
}
