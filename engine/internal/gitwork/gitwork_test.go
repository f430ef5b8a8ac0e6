package gitwork_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo/engine/internal/gitwork"
	"github.com/brabo-dev/brabo/internal/gitguard"
)

// git runs gitwork.Git with an identity for commits, failing the test on
// an error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitwork.Git(context.Background(), dir, dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// List reads git's own listing: the main checkout on its branch, a
// detached worktree with its commit; Git ignores an inherited GIT_DIR.
func TestListNamesBranchesAndDetachedHeads(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "--quiet", "--initial-branch=main", ".")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	git(t, root, "add", "-A")
	git(t, root, "commit", "--quiet", "-m", "a")
	head := git(t, root, "rev-parse", "HEAD")
	dir := filepath.Join(root, ".brabo", "worktrees", "gate-tsk_1")
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "elsewhere"))
	git(t, root, "worktree", "add", "--quiet", "--detach", dir, "main")

	trees, err := gitwork.List(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	main, ok := trees.OnBranch("main")
	if !ok || !gitwork.SamePath(main.Path, root) || main.Head != head {
		t.Fatalf("the main checkout: %+v, %v", main, ok)
	}
	wt, ok := trees.At(dir)
	if !ok || wt.Branch != "" || wt.Head != head || !gitwork.Within(root, wt.Path) {
		t.Fatalf("the detached worktree: %+v, %v (all: %+v)", wt, ok, trees)
	}
	if gitwork.Within(dir, root) || gitwork.Within(root, root) {
		t.Fatal("Within is not strict")
	}
}

// A folder's tools take paths relative to it; leaving it is refused.
func TestFolderRebase(t *testing.T) {
	f := gitwork.Folder{Root: "/srv/shop", Rel: ".brabo/worktrees/gate-tsk_1"}
	for in, want := range map[string]string{
		"": f.Rel, ".": f.Rel, "src": f.Rel + "/src", "/srv/shop/.brabo/worktrees/gate-tsk_1/x": f.Rel + "/x",
	} {
		if got, err := f.Rebase("cwd", in); err != nil || got != want {
			t.Errorf("Rebase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"..", "../agt_1", "/srv/shop"} {
		if got, err := f.Rebase("cwd", in); err == nil {
			t.Errorf("Rebase(%q) = %q; want it refused", in, got)
		}
	}
}

// TestGitRefusesARepositoryThatNamesAProgram: a smudge filter planted in
// the repository's config, which a worktree add's checkout runs with
// plain git, refuses brabo's bookkeeping by name and never runs.
func TestGitRefusesARepositoryThatNamesAProgram(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "--quiet", "--initial-branch=main", ".")
	os.WriteFile(filepath.Join(root, ".gitattributes"), []byte("* filter=x\n"), 0o644)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	git(t, root, "add", "-A")
	git(t, root, "commit", "--quiet", "-m", "a")
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(root, "planted.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho ran >> '"+marker+"'\ncat\n"), 0o755)
	f, _ := os.OpenFile(filepath.Join(root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("[filter \"x\"]\n\tsmudge = " + script + "\n")
	f.Close()
	plain := exec.Command("git", "-C", root, "worktree", "add", "--quiet", "--detach", filepath.Join(t.TempDir(), "plain"), "main")
	if out, err := plain.CombinedOutput(); err != nil {
		t.Fatalf("plain git: %v %s", err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the plant does not work with plain git, so the test proves nothing")
	}
	os.Remove(marker)
	_, err := gitwork.Git(context.Background(), root, root, "worktree", "add", "--quiet", "--detach", filepath.Join(root, ".brabo", "w"), "main")
	var ce *gitguard.ConfigError
	if !errors.As(err, &ce) || ce.Key != "filter.x.smudge" {
		t.Fatalf("worktree add: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the planted filter ran")
	}
}

// Git is bound by the scope root: a project whose .git is a gitfile, or
// whose commondir or alternates, points outside the root is refused with
// gitguard's named error, and git never runs there (a worktree add into
// the outside repository would write its bookkeeping and obey its config).
func TestGitRefusesARepositoryLeavingTheRoot(t *testing.T) {
	outside := t.TempDir()
	git(t, outside, "init", "--quiet", "--initial-branch=main", ".")
	git(t, outside, "commit", "--quiet", "--allow-empty", "-m", "a")
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+filepath.Join(outside, ".git")+"\n"), 0o644)
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--git-dir").CombinedOutput(); err != nil {
		t.Fatalf("plain git does not follow the gitfile, so the test proves nothing: %v %s", err, out)
	}
	_, err := gitwork.Git(context.Background(), root, root, "worktree", "add", "--quiet", "--detach", filepath.Join(root, ".brabo", "w"), "main")
	if !errors.Is(err, gitguard.ErrGitfileOutside) {
		t.Fatalf("worktree add through a gitfile leaving the root: %v, want %v", err, gitguard.ErrGitfileOutside)
	}
	if _, err := os.Stat(filepath.Join(outside, ".git", "worktrees")); err == nil {
		t.Fatal("git wrote the outside repository's worktree bookkeeping")
	}
}
