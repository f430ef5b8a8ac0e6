package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo/store/storetest"
)

// TestUpdateDuringCloseReturns: an Update that races Close is committed or
// answered ErrClosed, never left waiting.
func TestUpdateDuringCloseReturns(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.UpdateDuringCloseReturns(t, s, ErrClosed)
}
