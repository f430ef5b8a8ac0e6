package executor_test

import (
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
)

// pr_open and git_merge run the head and base their card bound
// (ExecRequest.Bound): a remote that moved since runs nothing.

func TestGitMergeRunsTheBoundHeadIntoTheBoundBase(t *testing.T) {
	e := executor.New(executor.Options{})
	work, bare := repo(t)
	shown := commitOn(t, work, "feat", "f.txt", "feature")
	git(t, work, "push", "--quiet", "origin", "feat")
	base := git(t, bare, "rev-parse", "refs/heads/main")
	pr := &brabo.PullRequest{Number: 3, Title: "f", Head: "feat", Base: "main"}
	later := commitOn(t, work, "feat", "g.txt", "unseen")
	git(t, work, "push", "--quiet", "origin", "feat")

	req := mergeReq(work, pr)
	req.Bound = map[string]string{"head": shown, "base": base}
	if res := mustRun(t, e, req); res.Code != brabo.CodeChangedSinceApproved {
		t.Fatalf("a merge whose head moved: %+v, want changed_since_approved", res)
	}
	if got := git(t, bare, "rev-parse", "refs/heads/main"); got != base {
		t.Fatalf("the remote's main moved to %s", got)
	}
	req.Bound = map[string]string{"head": later, "base": "0000000000000000000000000000000000000000"}
	if res := mustRun(t, e, req); res.Code != brabo.CodeChangedSinceApproved {
		t.Fatalf("a merge whose base moved: %+v, want changed_since_approved", res)
	}
	req.Bound = map[string]string{"head": later, "base": base}
	res := mustSucceed(t, e, req)
	if got := git(t, bare, "log", "-1", "--format=%P", "refs/heads/main"); got != base+" "+later || res.Detail["head_commit"] != later {
		t.Fatalf("the merge's parents %q (head_commit %q), want %s %s", got, res.Detail["head_commit"], base, later)
	}
	assertNoMergeClones(t)
}

func TestPROpenChecksTheBoundHeadAndBase(t *testing.T) {
	e := executor.New(executor.Options{})
	work, bare := repo(t)
	shown := commitOn(t, work, "feat", "f.txt", "feature")
	git(t, work, "push", "--quiet", "origin", "feat")
	base := git(t, bare, "rev-parse", "refs/heads/main")
	req := request(work, brabo.PrOpen, brabo.Payload{Branch: "feat", Base: "main"})
	req.Bound = map[string]string{"head": shown, "base": base}
	if res := mustSucceed(t, e, req); res.Detail["head_commit"] != shown || res.Detail["base_commit"] != base {
		t.Fatalf("pr_open's detail %v, want head %s base %s", res.Detail, shown, base)
	}
	commitOn(t, work, "feat", "g.txt", "unseen")
	git(t, work, "push", "--quiet", "origin", "feat")
	if res := mustRun(t, e, req); res.Code != brabo.CodeChangedSinceApproved {
		t.Fatalf("pr_open whose head moved: %+v, want changed_since_approved", res)
	}
}
