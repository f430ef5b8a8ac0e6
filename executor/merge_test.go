package executor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
)

func mergeReq(work string, pr *brabo.PullRequest) brabo.ExecRequest {
	req := request(work, brabo.GitMerge, brabo.Payload{PR: pr.Number, TargetBranch: pr.Base})
	req.PR = pr
	return req
}

// assertNoMergeClones checks that every temporary clone was removed.
func assertNoMergeClones(t *testing.T) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(os.TempDir(), "brabo-merge-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("temporary clones left behind: %v", left)
	}
}

// The merge tests are not parallel, so that no other merge's clone is in
// the temporary directory when they look for leftovers.

func TestGitMergeMergesOnTheRemote(t *testing.T) {
	e := executor.New(executor.Options{})
	work, bare := repo(t)
	headCommit := commitOn(t, work, "feat", "f.txt", "feature")
	git(t, work, "push", "--quiet", "origin", "feat")
	// main moves on too, so the merge is a real one.
	baseCommit := commitOn(t, work, "main", "m.txt", "main")
	git(t, work, "push", "--quiet", "origin", "main")

	pr := &brabo.PullRequest{Number: 7, Title: "Add f", Head: "feat", Base: "main"}
	res := mustSucceed(t, e, mergeReq(work, pr))
	merged := git(t, bare, "rev-parse", "refs/heads/main")
	if res.Detail["merge_commit"] != merged {
		t.Errorf("Detail[merge_commit] = %q, remote main is %q", res.Detail["merge_commit"], merged)
	}
	if !gitOK(bare, "merge-base", "--is-ancestor", headCommit, "refs/heads/main") {
		t.Errorf("remote main does not contain the head commit")
	}
	if got := git(t, bare, "log", "-1", "--format=%P|%s|%cn|%ce|%an", "refs/heads/main"); got !=
		baseCommit+" "+headCommit+"|Merge pull request #7: Add f|Ada Lovelace|m-ada@brabo.local|Ada Lovelace" {
		t.Errorf("merge commit = %q", got)
	}
	if res.Detail["base"] != "main" || res.Detail["head"] != "feat" || res.Detail["pr"] != "7" {
		t.Errorf("Detail = %v", res.Detail)
	}
	// --no-ff: even a head that could fast-forward gets a merge commit.
	git(t, work, "fetch", "--quiet", "origin")
	git(t, work, "checkout", "--quiet", "-b", "ff", "origin/main")
	writeFile(t, filepath.Join(work, "ff.txt"), "ff")
	git(t, work, "add", "-A")
	git(t, work, "commit", "--quiet", "-m", "ff")
	ff := git(t, work, "rev-parse", "HEAD")
	git(t, work, "checkout", "--quiet", "main")
	git(t, work, "push", "--quiet", "origin", "ff")
	mustSucceed(t, e, mergeReq(work, &brabo.PullRequest{Number: 8, Title: "ff", Head: "ff", Base: "main"}))
	if got := git(t, bare, "log", "-1", "--format=%P", "refs/heads/main"); got != merged+" "+ff {
		t.Errorf("fast-forwardable head: parents %q, want a merge commit of %s and %s", got, merged, ff)
	}
	assertNoMergeClones(t)
}

func TestGitMergeConflictFails(t *testing.T) {
	e := executor.New(executor.Options{})
	work, bare := repo(t)
	commitOn(t, work, "feat", "README", "feature version\n")
	git(t, work, "push", "--quiet", "origin", "feat")
	commitOn(t, work, "main", "README", "main version\n")
	git(t, work, "push", "--quiet", "origin", "main")
	before := git(t, bare, "rev-parse", "refs/heads/main")

	res := mustRun(t, e, mergeReq(work, &brabo.PullRequest{Number: 3, Title: "t", Head: "feat", Base: "main"}))
	if res.Error != "merge conflict" || res.ExitCode == 0 {
		t.Errorf("Error = %q, exit %d; want \"merge conflict\"", res.Error, res.ExitCode)
	}
	if !strings.Contains(res.Output, "CONFLICT") || !strings.Contains(res.Output, "README") {
		t.Errorf("git's output is missing: %q", res.Output)
	}
	if after := git(t, bare, "rev-parse", "refs/heads/main"); after != before {
		t.Errorf("remote main moved on a conflict")
	}
	if _, ok := res.Detail["merge_commit"]; ok {
		t.Errorf("a failed merge reports a merge commit: %v", res.Detail)
	}
	assertNoMergeClones(t)
}

func TestGitMergeFailures(t *testing.T) {
	e := executor.New(executor.Options{})
	work, bare := repo(t)
	before := git(t, bare, "rev-parse", "refs/heads/main")

	// A head that is not on the remote.
	commitOn(t, work, "local", "l.txt", "l")
	res := mustRun(t, e, mergeReq(work, &brabo.PullRequest{Number: 1, Head: "local", Base: "main"}))
	if !strings.Contains(res.Error, `head branch "local" is not on remote`) {
		t.Errorf("missing head: %+v", res)
	}
	// A base that is not on the remote.
	git(t, work, "push", "--quiet", "origin", "local")
	res = mustRun(t, e, mergeReq(work, &brabo.PullRequest{Number: 1, Head: "local", Base: "dev"}))
	if res.Error == "" || !strings.Contains(res.Error, "dev") {
		t.Errorf("missing base: %+v", res)
	}
	// A head the base already contains: nothing would be merged.
	git(t, work, "push", "--quiet", "origin", "main:already")
	res = mustRun(t, e, mergeReq(work, &brabo.PullRequest{Number: 2, Head: "already", Base: "main"}))
	if !strings.Contains(res.Error, "nothing to merge") {
		t.Errorf("already merged: %+v", res)
	}
	if after := git(t, bare, "rev-parse", "refs/heads/main"); after != before {
		t.Errorf("remote main moved")
	}
	assertNoMergeClones(t)
}

func TestGitMergeRefusals(t *testing.T) {
	e := executor.New(executor.Options{})
	work, _ := repo(t)
	ok := &brabo.PullRequest{Number: 5, Head: "feat", Base: "main"}

	req := mergeReq(work, ok)
	req.PR = nil
	if pe := mustRefuse[*executor.PayloadError](t, e, req); pe.Field != "pr" {
		t.Errorf("no PR: refused for %q", pe.Field)
	}
	// The target branch the policy decided on must be the PR's base.
	req = mergeReq(work, ok)
	req.Action.Payload.TargetBranch = "feature-sandbox"
	if pe := mustRefuse[*executor.PayloadError](t, e, req); pe.Field != "targetBranch" {
		t.Errorf("target mismatch: refused for %q", pe.Field)
	}
	req = mergeReq(work, ok)
	req.Action.Payload.PR = 6
	if pe := mustRefuse[*executor.PayloadError](t, e, req); pe.Field != "pr" {
		t.Errorf("PR number mismatch: refused for %q", pe.Field)
	}
	req = mergeReq(work, ok)
	req.Credential = nil
	mustRefuse[*executor.PayloadError](t, e, req)
	for _, pr := range []*brabo.PullRequest{
		{Number: 5, Head: "-feat", Base: "main"},
		{Number: 5, Head: "feat", Base: "--upload-pack=x"},
		{Number: 5, Head: "a..b", Base: "main"},
		{Number: 5, Head: "main", Base: "main"},
	} {
		mustRefuse[*executor.PayloadError](t, e, mergeReq(work, pr))
	}
	req = mergeReq(work, ok)
	req.Action.Payload.Remote = "/tmp/elsewhere.git"
	mustRefuse[*executor.PayloadError](t, e, req)
	assertNoMergeClones(t)
}
