package gitrepo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/gitrepo"
	"github.com/brabo-dev/brabo/internal/gitguard"
)

// git runs the real git in dir, with no user or system configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Ana Tester", "-c", "user.email=t@x",
		"-c", "init.defaultBranch=main", "-c", "core.quotepath=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "XDG_CONFIG_HOME=/nonexistent")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
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

func open(t *testing.T, root, dir string) brabo.GitRepo {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", "/nonexistent")
	g, err := (&gitrepo.Reader{}).OpenRepo(context.Background(), root, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// gitStat is the stat real git gives: `git diff --numstat HEAD` then the
// untracked files from the top.
func gitStat(t *testing.T, dir, base string) string {
	t.Helper()
	var b strings.Builder
	for _, rec := range strings.Split(git(t, dir, "diff", "--numstat", "-z", "--no-renames", base, "--"), "\x00") {
		if rec != "" {
			b.WriteString(rec + "\n")
		}
	}
	for _, p := range strings.Split(git(t, dir, "ls-files", "--others", "--exclude-standard", "-z"), "\x00") {
		if p != "" {
			b.WriteString("new\t" + p + "\n")
		}
	}
	return b.String()
}

func ourStat(st *brabo.DiffStat) string {
	var b strings.Builder
	for _, f := range st.Files {
		switch {
		case f.New:
			b.WriteString("new\t" + f.Path + "\n")
		case f.Binary:
			b.WriteString("-\t-\t" + f.Path + "\n")
		default:
			fmt.Fprintf(&b, "%d\t%d\t%s\n", f.Added, f.Removed, f.Path)
		}
	}
	return b.String()
}

// TestWorktreeStatIsGits builds a working tree with every kind of change
// and compares the reader's stat with real git's.
func TestWorktreeStatIsGits(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q")
	// Before the first commit: the empty tree is the base.
	write(t, filepath.Join(root, "a.txt"), "one\ntwo\n")
	git(t, root, "add", "a.txt")
	write(t, filepath.Join(root, "b.txt"), "x\n")
	if got, want := ourStat(must(open(t, root, "").WorktreeStat(100))), gitStat(t, root, "4b825dc642cb6eb9a060e54bf8d69288fbee4904"); got != want {
		t.Fatalf("without a commit:\n%s\nwant (git):\n%s", got, want)
	}
	write(t, filepath.Join(root, ".gitignore"), "*.log\nbuild/\n!keep.log\n")
	write(t, filepath.Join(root, "sub", ".gitignore"), "secret\n")
	write(t, filepath.Join(root, "m.txt"), strings.Repeat("line\n", 50))
	write(t, filepath.Join(root, "gone.txt"), "bye\n")
	write(t, filepath.Join(root, "bin.dat"), "a\x00b")
	write(t, filepath.Join(root, "exec.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(root, "noeol.txt"), "end\n")
	write(t, filepath.Join(root, "staged.txt"), "s\n")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "first")

	lines := strings.Split(strings.Repeat("line\n", 50), "\n")
	lines[3], lines[20] = "changed", "changed too"
	write(t, filepath.Join(root, "m.txt"), strings.Join(append(lines[:30], append([]string{"inserted"}, lines[30:]...)...), "\n"))
	os.Remove(filepath.Join(root, "gone.txt"))
	write(t, filepath.Join(root, "bin.dat"), "a\x00c")
	os.Chmod(filepath.Join(root, "exec.sh"), 0o755)
	write(t, filepath.Join(root, "noeol.txt"), "end")
	write(t, filepath.Join(root, "staged.txt"), "s\nt\n")
	git(t, root, "add", "staged.txt")
	write(t, filepath.Join(root, "staged.txt"), "s\nt\nu\n")
	write(t, filepath.Join(root, "x.log"), "ignored\n")
	write(t, filepath.Join(root, "keep.log"), "kept\n")
	write(t, filepath.Join(root, "build", "out.o"), "ignored\n")
	write(t, filepath.Join(root, "sub", "secret"), "ignored\n")
	write(t, filepath.Join(root, "sub", "deep", "new.go"), "package x\n")
	write(t, filepath.Join(root, ".git", "info", "exclude"), "local-only\n")
	write(t, filepath.Join(root, "local-only"), "ignored\n")
	os.MkdirAll(filepath.Join(root, "nested"), 0o755)
	git(t, filepath.Join(root, "nested"), "init", "-q")
	write(t, filepath.Join(root, "nested", "f"), "in a repository of its own\n")
	os.Symlink("a.txt", filepath.Join(root, "link"))
	// A file whose stat matches the index but whose time is as new as
	// the index ("racy"): read, not trusted.
	time.Sleep(10 * time.Millisecond)
	got := ourStat(must(open(t, root, "").WorktreeStat(100)))
	if want := gitStat(t, root, "HEAD"); got != want {
		t.Fatalf("the stat:\n%s\nwant (git):\n%s", got, want)
	}
	// From a folder inside the repository: the same repository, paths
	// from its top.
	if got2 := ourStat(must(open(t, root, "sub").WorktreeStat(100))); got2 != got {
		t.Errorf("from sub:\n%s\nwant\n%s", got2, got)
	}
	st := must(open(t, root, "").WorktreeStat(3))
	if len(st.Files) != 3 || st.More == 0 {
		t.Errorf("capped at 3: %d files, %d more", len(st.Files), st.More)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestLogAndRangesAreGits compares commits, ranges and ancestry with real
// git's on a history with branches and a merge.
func TestLogAndRangesAreGits(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q")
	commit := func(file, msg string) {
		write(t, filepath.Join(root, file), msg+"\n")
		git(t, root, "add", "-A")
		git(t, root, "commit", "-q", "-m", msg)
	}
	commit("a", "first")
	commit("b", "second\n\nwith a body")
	git(t, root, "checkout", "-q", "-b", "feature")
	commit("c", "feature one")
	commit("d", "feature two\nsame paragraph")
	git(t, root, "checkout", "-q", "main")
	commit("e", "main moves")
	git(t, root, "checkout", "-q", "feature")
	git(t, root, "merge", "-q", "--no-edit", "main")
	commit("f", "after the merge")
	git(t, root, "tag", "-a", "-m", "t", "v1", "main")
	g := open(t, root, "")

	logOf := func(tip string, not ...string) string {
		args := []string{"log", "--format=%h %an|%s", tip}
		if len(not) > 0 {
			args = append(append(args, "--not"), not...)
		}
		return strings.TrimSpace(git(t, root, args...))
	}
	for _, tc := range [][]string{{"refs/heads/feature"}, {"refs/heads/feature", "refs/heads/main"}, {"refs/heads/main", "refs/heads/feature"}, {"refs/tags/v1"}} {
		cs, total, err := g.Log(tc[0], tc[1:], 50)
		if err != nil {
			t.Fatal(err)
		}
		var b []string
		for _, c := range cs {
			b = append(b, c.Hash+" "+c.Author+"|"+c.Subject)
		}
		if got, want := strings.Join(b, "\n"), logOf(tc[0], tc[1:]...); got != want || total != len(cs) {
			t.Errorf("log %v:\n%s\nwant (git):\n%s", tc, got, want)
		}
	}
	if cs, total, _ := g.Log("refs/heads/feature", nil, 2); len(cs) != 2 || total != 7 {
		t.Errorf("capped log: %d of %d", len(cs), total)
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"refs/heads/main", "refs/heads/feature", true}, {"refs/heads/feature", "refs/heads/main", false}, {"refs/heads/main", "refs/heads/main", true}} {
		if got, err := g.IsAncestor(tc.a, tc.b); err != nil || got != tc.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v", tc.a, tc.b, got, err)
		}
	}
	st, err := g.RangeStat("refs/heads/main", "refs/heads/feature", 100)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, rec := range strings.Split(git(t, root, "diff", "--numstat", "-z", "main...feature", "--"), "\x00") {
		if rec != "" {
			want.WriteString(rec + "\n")
		}
	}
	if got := ourStat(st); got != want.String() {
		t.Errorf("main...feature:\n%s\nwant (git):\n%s", got, want.String())
	}
	if h, _ := g.Commit("refs/heads/nope"); h != "" {
		t.Errorf("a missing branch names %q", h)
	}
	if h, _ := g.Commit("refs/tags/v1"); h != strings.TrimSpace(git(t, root, "rev-parse", "main")) {
		t.Errorf("the tag peels to %q", h)
	}
	if refs, _ := g.Refs("refs/heads/"); strings.Join(refs, " ") != "refs/heads/feature refs/heads/main" {
		t.Errorf("refs: %q", refs)
	}
}

// TestReaderRunsNothingFromTheRepository plants a clean filter, a
// textconv, an external diff and an fsmonitor: real git runs them on a
// diff, the reader reads the same stat and runs none.
func TestReaderRunsNothingFromTheRepository(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q")
	write(t, filepath.Join(root, "f.txt"), "one\n")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "first")
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(root, "planted.sh")
	write(t, script, "#!/bin/sh\necho ran >> '"+marker+"'\ncat\n")
	os.Chmod(script, 0o755)
	for _, kv := range [][2]string{{"filter.x.clean", script}, {"diff.x.textconv", script}, {"diff.external", script}, {"core.fsmonitor", script}} {
		git(t, root, "config", kv[0], kv[1])
	}
	write(t, filepath.Join(root, ".gitattributes"), "* filter=x diff=x\n")
	write(t, filepath.Join(root, "f.txt"), "two\n")

	g := open(t, root, "")
	if _, err := g.WorktreeStat(100); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the reader ran the planted program")
	}
	git(t, root, "diff", "HEAD")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the plant does not work with plain git, so the test proves nothing: %v", err)
	}
}

// TestReaderRefusesPointersOutOfTheProject: a gitfile, a commondir and
// alternates that leave the project folder are each refused by name.
func TestReaderRefusesPointersOutOfTheProject(t *testing.T) {
	outside := t.TempDir()
	git(t, outside, "init", "-q")
	for _, tc := range []struct {
		name  string
		plant func(root string)
		want  error
	}{
		{"gitfile", func(root string) {
			write(t, filepath.Join(root, ".git"), "gitdir: "+filepath.Join(outside, ".git")+"\n")
		}, gitguard.ErrGitfileOutside},
		{"symlinked .git", func(root string) { os.Symlink(filepath.Join(outside, ".git"), filepath.Join(root, ".git")) }, gitguard.ErrGitfileOutside},
		{"commondir", func(root string) {
			git(t, root, "init", "-q")
			write(t, filepath.Join(root, ".git", "commondir"), filepath.Join(outside, ".git")+"\n")
		}, gitguard.ErrCommondirOutside},
		{"alternates", func(root string) {
			git(t, root, "init", "-q")
			write(t, filepath.Join(root, ".git", "objects", "info", "alternates"), filepath.Join(outside, ".git", "objects")+"\n")
		}, gitguard.ErrAlternatesOutside},
		{"relative alternates", func(root string) {
			git(t, root, "init", "-q")
			rel, _ := filepath.Rel(filepath.Join(root, ".git", "objects"), filepath.Join(outside, ".git", "objects"))
			write(t, filepath.Join(root, ".git", "objects", "info", "alternates"), rel+"\n")
		}, gitguard.ErrAlternatesOutside},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.plant(root)
			_, err := (&gitrepo.Reader{}).OpenRepo(context.Background(), root, "")
			if !errors.Is(err, tc.want) {
				t.Fatalf("OpenRepo: %v, want %v", err, tc.want)
			}
		})
	}
	// A commondir inside the project (a linked worktree's) is followed.
	root := t.TempDir()
	git(t, root, "init", "-q")
	write(t, filepath.Join(root, "a"), "a\n")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "first")
	git(t, root, "worktree", "add", "-q", "-b", "wt", filepath.Join(root, ".brabo", "wt"))
	write(t, filepath.Join(root, ".brabo", "wt", "b"), "b\n")
	st := must(open(t, root, ".brabo/wt").WorktreeStat(10))
	if ourStat(st) != "new\tb\n" {
		t.Errorf("in the linked worktree: %q", ourStat(st))
	}
	// Never above the project folder.
	inner := filepath.Join(root, "inner")
	os.MkdirAll(inner, 0o755)
	if _, err := (&gitrepo.Reader{}).OpenRepo(context.Background(), inner, ""); !errors.Is(err, gitguard.ErrNoRepository) {
		t.Errorf("a project folder inside a repository: %v", err)
	}
}
