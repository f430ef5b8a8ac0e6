package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// The card of a git_commit binds the tree the execution's own staging
// produces (StageTree), in the sandbox: the same tree the commit then
// records, and nothing written into the repository by the card.
func TestStageTreeIsTheTreeTheCommitRecords(t *testing.T) {
	e := sandboxed(t)
	work, _ := repo(t)
	writeFile(t, filepath.Join(work, "README"), "hello, changed\n")
	writeFile(t, filepath.Join(work, "new.txt"), "new\n")
	objects := func() []string {
		var out []string
		filepath.WalkDir(filepath.Join(work, ".git", "objects"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	before := objects()
	req := request(work, brabo.GitCommit, brabo.Payload{Message: "staged"})
	st, err := e.StageTree(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Paths, []string{"README", "new.txt"}) || st.Tree == "" || st.Head != git(t, work, "rev-parse", "HEAD") {
		t.Fatalf("staged %+v", st)
	}
	if after := objects(); !slices.Equal(before, after) {
		t.Fatalf("the card's staging wrote objects into the repository: %d before, %d after", len(before), len(after))
	}
	if left, _ := filepath.Glob(filepath.Join(work, ".git", "brabo-stage-*")); len(left) != 0 {
		t.Fatalf("the scratch folder is left: %v", left)
	}
	if s := git(t, work, "status", "--porcelain"); !strings.Contains(s, "?? new.txt") {
		t.Fatalf("the card's staging changed the index: %q", s)
	}

	req.Bound = map[string]string{"head": st.Head, "tree": st.Tree}
	res := mustRun(t, e, req)
	if res.Error != "" || git(t, work, "rev-parse", "HEAD^{tree}") != st.Tree {
		t.Fatalf("the commit does not record the staged tree: %+v", res)
	}

	// A tree that moved since is changed_since_approved, and commits nothing.
	writeFile(t, filepath.Join(work, "later.txt"), "later\n")
	head := git(t, work, "rev-parse", "HEAD")
	req = request(work, brabo.GitCommit, brabo.Payload{Message: "unseen"})
	req.Bound = map[string]string{"head": head, "tree": st.Tree}
	res = mustRun(t, e, req)
	if res.Code != brabo.CodeChangedSinceApproved || git(t, work, "rev-parse", "HEAD") != head {
		t.Fatalf("a moved tree committed: %+v", res)
	}
}
