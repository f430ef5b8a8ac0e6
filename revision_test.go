package brabo_test

import (
	"slices"
	"testing"

	"github.com/brabo-dev/brabo"
)

// A stale revision names by itself which part moved; one brabo did not
// make names every part.
func TestRevisionMovedNamesThePart(t *testing.T) {
	was := []brabo.RevisionPart{{Name: "commit", Value: "aaa"}, {Name: "remote", Value: "none"}, {Name: "ref", Value: "origin refs/heads/main"}}
	now := []brabo.RevisionPart{{Name: "commit", Value: "bbb"}, {Name: "remote", Value: "none"}, {Name: "ref", Value: "origin refs/heads/main"}}
	rev := brabo.MakeRevision(was)
	if got := brabo.RevisionMoved(rev, was); got != nil {
		t.Errorf("the same parts moved %v", got)
	}
	if got := brabo.RevisionMoved(rev, now); !slices.Equal(got, []string{"commit"}) {
		t.Errorf("moved %v, want commit", got)
	}
	if brabo.MakeRevision(now) == rev {
		t.Error("two cards of different commits share a revision")
	}
	if got := brabo.RevisionMoved("", now); len(got) != 3 {
		t.Errorf("no revision moved %v, want every part", got)
	}
	if got := brabo.RevisionMoved("r1.commit-x", now); !slices.Equal(got, []string{"commit", "remote", "ref"}) {
		t.Errorf("a forged revision moved %v", got)
	}
}
