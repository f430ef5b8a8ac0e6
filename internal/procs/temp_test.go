package procs_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procs"
)

func TestTempPatternNamesOnlyPlainIDs(t *testing.T) {
	for id, want := range map[string]string{
		"act_0194a1b2c3d4e5f6": "brabo-action-act_0194a1b2c3d4e5f6-*",
		"":                     "brabo-action-*",
		"act_1-2":              "brabo-action-*", // a '-' could make one id's pattern match another's folder
		"../x":                 "brabo-action-*",
		"a*":                   "brabo-action-*",
		"a/b":                  "brabo-action-*",
	} {
		if got := procs.TempPattern(id); got != want {
			t.Errorf("TempPattern(%q) = %q, want %q", id, got, want)
		}
	}
}

// mkTemp makes a temp folder as the executor does, with a file in it.
func mkTemp(t *testing.T, id string) string {
	t.Helper()
	d, err := os.MkdirTemp("", procs.TempPattern(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "scratch"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

func left(t *testing.T) []string {
	t.Helper()
	es, err := os.ReadDir(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestRemoveTempRemovesOnlyThatActionsFolders(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mkTemp(t, "act_1")
	mkTemp(t, "act_1") // a git step's clone and a command's, say
	other := mkTemp(t, "act_10")
	odd := mkTemp(t, "act-odd") // an id that is not plain: "brabo-action-<digits>"
	// A symlink named like the action's folder, pointing at a folder that
	// must survive.
	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, "keep"), []byte("x"), 0o600)
	if err := os.Symlink(victim, filepath.Join(tmp, "brabo-action-act_1-link")); err != nil {
		t.Fatal(err)
	}

	n, err := procs.RemoveTemp("act_1")
	if err != nil || n != 2 {
		t.Fatalf("RemoveTemp(act_1) = %d, %v; want 2 removed", n, err)
	}
	want := []string{"brabo-action-act_1-link", filepath.Base(other), filepath.Base(odd)}
	sort.Strings(want)
	if got := left(t); !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
		t.Fatalf("the symlink's target lost its file: %v", err)
	}
	if n, err := procs.RemoveTemp("act-odd"); n != 0 || err != nil {
		t.Fatalf("RemoveTemp of an id that is not plain = %d, %v; want nothing removed", n, err)
	}
}

func TestStopActionRemovesTheTempFoldersOfAThisHostRecord(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h := &procs.Host{}
	self := h.Self()
	ctx := context.Background()

	mkTemp(t, "act_prevboot")
	mkTemp(t, "act_otherhost")
	// A record of this host from an earlier boot: no process is touched,
	// the folder on disk goes.
	if _, err := h.StopAction(ctx, &brabo.RunningAction{ActionID: "act_prevboot", Host: self.Host, BootID: "an-earlier-boot"}, time.Second); err != nil {
		t.Fatal(err)
	}
	// Another host's record: its folder is that host's, not this one's.
	if _, err := h.StopAction(ctx, &brabo.RunningAction{ActionID: "act_otherhost", Host: self.Host + "-elsewhere", BootID: self.BootID}, time.Second); err != nil {
		t.Fatal(err)
	}
	got := left(t)
	if len(got) != 1 || !strings.HasPrefix(got[0], "brabo-action-act_otherhost-") {
		t.Fatalf("left %v, want only act_otherhost's folder", got)
	}
}
