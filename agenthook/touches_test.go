package agenthook

import (
	"testing"

	"github.com/brabo-dev/brabo"
)

// The hook's answers say what the card flags, from the one preview.
func TestTouches(t *testing.T) {
	a := &brabo.ProposedAction{Preview: &brabo.Preview{Flags: []brabo.Flag{
		{Kind: brabo.FlagHome, What: "~/.ssh/id_ed25519"}, {Kind: brabo.FlagNetwork, What: "curl"}, {Kind: brabo.FlagHome, What: "~/.netrc"}}}}
	if got := touches(a); got != " (touches the home folder, the network)" {
		t.Errorf("touches: %q", got)
	}
	if got := touches(&brabo.ProposedAction{}); got != "" {
		t.Errorf("no preview: %q", got)
	}
}
