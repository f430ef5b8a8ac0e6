package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/brabo-dev/brabo"
)

// testInfraAgent: a project has no infra agent until one is named; naming
// another replaces it, "" clears it; an unknown project is ErrNotFound.
func testInfraAgent(t *testing.T, s brabo.Store) {
	ctx := context.Background()
	_, p := fixture(t, s)
	read := func() string {
		t.Helper()
		var got string
		must(t, s.View(ctx, func(tx brabo.Tx) error {
			var err error
			got, err = tx.InfraAgent(ctx, p.ID)
			return err
		}))
		return got
	}
	if got := read(); got != "" {
		t.Fatalf("a new project's infra agent: %q", got)
	}
	for _, want := range []string{"agt_one", "agt_two", ""} {
		must(t, s.Update(ctx, func(tx brabo.Tx) error { return tx.SetInfraAgent(ctx, p.ID, want) }))
		if got := read(); got != want {
			t.Fatalf("after SetInfraAgent(%q): %q", want, got)
		}
	}
	err := s.View(ctx, func(tx brabo.Tx) error { _, err := tx.InfraAgent(ctx, "prj_none"); return err })
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Fatalf("InfraAgent of no project: %v, want ErrNotFound", err)
	}
	err = s.Update(ctx, func(tx brabo.Tx) error { return tx.SetInfraAgent(ctx, "prj_none", "agt_x") })
	if !errors.Is(err, brabo.ErrNotFound) {
		t.Fatalf("SetInfraAgent of no project: %v, want ErrNotFound", err)
	}
}
