package brabo_test

import (
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// NewID carries its prefix, is unique, and sorts by creation: an id made
// a millisecond later sorts after, whatever its random part.
func TestNewIDSortsByCreation(t *testing.T) {
	seen := map[string]bool{}
	prev := brabo.NewID("act")
	for range 50 {
		time.Sleep(time.Millisecond + 100*time.Microsecond)
		id := brabo.NewID("act")
		if !strings.HasPrefix(id, "act_") || len(id) != len("act_")+32 {
			t.Fatalf("NewID: %q", id)
		}
		if seen[id] || id <= prev {
			t.Fatalf("NewID: %q after %q: not unique, or sorting before it", id, prev)
		}
		seen[id] = true
		prev = id
	}
}
