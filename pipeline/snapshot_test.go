package pipeline

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// exhaustiveSnapshot is what the snapshot took before it listed folders:
// every protected name tried, every protected folder walked.
func exhaustiveSnapshot(root string) map[string]fileState {
	sn := &snapshot{root: root, files: map[string]fileState{}, worktrees: map[string]bool{}}
	for _, base := range projectRoots(root) {
		for _, rel := range protectedFiles {
			p := filepath.Join(base, rel)
			sn.files[p] = readState(p)
		}
		for _, rel := range append(append([]string(nil), protectedFolders...), gitConfigPaths(base)...) {
			sn.takeFolder(filepath.Join(base, rel))
		}
	}
	return sn.files
}

func existing(m map[string]fileState) []string {
	var out []string
	for p, st := range m {
		if st.exists {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Listing folders finds exactly the protected paths that trying every
// name found: every protected file and folder present, in the project and
// in a worktree, through a symlinked folder, and a hooks folder .git/config
// names.
func TestSnapshotTakesWhatTryingEveryNameTook(t *testing.T) {
	root := t.TempDir()
	for _, rel := range protectedFiles {
		if rel == ".git" {
			continue
		}
		write(t, filepath.Join(root, rel), "x "+rel)
	}
	for _, rel := range protectedFolders {
		write(t, filepath.Join(root, rel, "inner", "f"), "y "+rel)
	}
	write(t, filepath.Join(root, ".git", "config"), "[core]\n\thooksPath = tools/hooks\n")
	write(t, filepath.Join(root, "tools", "hooks", "pre-commit"), "#!/bin/sh\n")
	write(t, filepath.Join(root, "src", "main.go"), "package main\n")
	wt := filepath.Join(root, ".brabo", "worktrees", "dev-a")
	write(t, filepath.Join(wt, "permissions.json"), "{}")
	write(t, filepath.Join(wt, ".git"), "gitdir: ../../../.git/worktrees/dev-a\n")
	elsewhere := t.TempDir()
	write(t, filepath.Join(elsewhere, "settings.json"), "{}")
	os.MkdirAll(filepath.Join(wt, ".claude"), 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(wt, ".claude", "agents")); err != nil {
		t.Fatal(err)
	}

	got, want := existing(takeSnapshot(root).files), existing(exhaustiveSnapshot(root))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("listing took\n%s\n\ntrying every name took\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(got) < len(protectedFiles)+2*len(protectedFolders) {
		t.Fatalf("only %d paths taken: the test's tree is not what it means to be", len(got))
	}
}

// A protected name in another case is taken (a file system that folds
// case opens it for the protected name; the policy matches it so too).
func TestSnapshotTakesProtectedNamesInAnyCase(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "claude.md"), "be nice")
	write(t, filepath.Join(root, ".Claude", "Settings.json"), "{}")
	sn := takeSnapshot(root)
	for _, p := range []string{filepath.Join(root, "claude.md"), filepath.Join(root, ".Claude", "Settings.json")} {
		if !sn.files[p].exists {
			t.Errorf("%s was not taken", p)
		}
	}
}

// The cache of unchanged files never hides a change: not one made in the
// same second as the read (the kernel's timestamps are coarse), not one
// that keeps the size and sets the modification time back.
func TestSnapshotSeesChangesTheCacheCouldHide(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "permissions.json")
	write(t, path, `{"allow":[]}`)

	// A change right after the snapshot, in the same tick.
	sn := takeSnapshot(root)
	write(t, path, `{"allow":["x"]}`)
	if got := sn.changes(); len(got) != 1 || got[0] != path {
		t.Fatalf("a change in the same second: changes %v", got)
	}

	// Old enough to be cached: same size, the modification time set back.
	old := time.Now().Add(-time.Hour)
	write(t, path, `{"allow":["a"]}`)
	os.Chtimes(path, old, old)
	time.Sleep(racyWindow + 100*time.Millisecond)
	sn = takeSnapshot(root) // reads and caches
	if again := takeSnapshot(root); !again.files[path].same(sn.files[path]) {
		t.Fatal("two snapshots of an unchanged file differ")
	}
	write(t, path, `{"allow":["b"]}`)
	os.Chtimes(path, old, old)
	if got := sn.changes(); len(got) != 1 || got[0] != path {
		t.Fatalf("same size, modification time set back: changes %v", got)
	}
	sn.restore([]string{path})
	if data, _ := os.ReadFile(path); string(data) != `{"allow":["a"]}` {
		t.Fatalf("restored %q", data)
	}

	// A protected file added to a folder whose listing is cached.
	os.Mkdir(filepath.Join(root, ".claude"), 0o755)
	time.Sleep(racyWindow + 100*time.Millisecond)
	sn = takeSnapshot(root)
	takeSnapshot(root) // the listings are cached now
	added := filepath.Join(root, ".claude", "settings.json")
	write(t, added, "{}")
	if got := sn.changes(); len(got) != 1 || got[0] != added {
		t.Fatalf("a protected file added under a cached listing: changes %v", got)
	}
}

func BenchmarkSnapshot(b *testing.B) {
	root := b.TempDir()
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow":["Terminal(pnpm test)"]}`), 0o644)
	for _, h := range []string{"applypatch-msg", "commit-msg", "post-update", "pre-applypatch", "pre-commit",
		"pre-merge-commit", "pre-push", "pre-rebase", "pre-receive", "prepare-commit-msg", "push-to-checkout", "update"} {
		p := filepath.Join(root, ".git", "hooks", h+".sample")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat("# a sample hook\n", 100)), 0o755)
	}
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o644)
	for _, c := range []struct {
		name string
		take func(string) map[string]fileState
	}{
		{"listing+cache", func(r string) map[string]fileState { return takeSnapshot(r).files }},
		{"every-name", exhaustiveSnapshot},
	} {
		b.Run(c.name, func(b *testing.B) {
			time.Sleep(racyWindow) // the files are old enough to be cached
			for b.Loop() {
				c.take(root)
			}
		})
	}
}
