package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
)

func TestGitCommitIsMadeAsTheCredential(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, _ := repo(t)
	writeFile(t, filepath.Join(work, "src", "a.go"), "package a\n")
	if err := os.Remove(filepath.Join(work, "README")); err != nil {
		t.Fatal(err)
	}
	res := mustSucceed(t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "add a, drop README"}))
	head := git(t, work, "rev-parse", "HEAD")
	if res.Detail["commit"] != head {
		t.Errorf("Detail[commit] = %q, HEAD is %q", res.Detail["commit"], head)
	}
	// The committer is the credential; the author is the repository's
	// own configured user.
	if got := git(t, work, "log", "-1", "--format=%cn|%ce|%an|%ae|%s"); got != "Ada Lovelace|m-ada@brabo.local|Repo User|repo@example.com|add a, drop README" {
		t.Errorf("commit = %q", got)
	}
	// add -A: the new file and the deletion are both in it.
	if got := git(t, work, "show", "--name-status", "--format=", "HEAD"); got != "D\tREADME\nA\tsrc/a.go" {
		t.Errorf("committed changes = %q", got)
	}
	if !strings.Contains(res.Output, "$ git add -A") || !strings.Contains(res.Output, "$ git commit") {
		t.Errorf("the transcript lacks the git steps: %q", res.Output)
	}
}

func TestGitCommitAuthorIsTheCredentialWithoutRepoConfig(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, _ := repo(t)
	git(t, work, "config", "--unset", "user.name")
	git(t, work, "config", "--unset", "user.email")
	writeFile(t, filepath.Join(work, "sub", "b.txt"), "b")
	// From a cwd inside the repository, add -A still stages everything.
	writeFile(t, filepath.Join(work, "top.txt"), "top")
	req := request(work, brabo.GitCommit, brabo.Payload{Message: "b", Cwd: "sub"})
	req.Credential = &brabo.Member{ID: "m-2", Name: ""}
	res := mustRun(t, e, req)
	if res.Error != "" {
		t.Fatalf("commit failed: %s\n%s", res.Error, res.Output)
	}
	if got := git(t, work, "log", "-1", "--format=%cn|%ce|%an|%ae"); got != "m-2|m-2@brabo.local|m-2|m-2@brabo.local" {
		t.Errorf("commit identity = %q", got)
	}
	if got := git(t, work, "status", "--porcelain"); got != "" {
		t.Errorf("not everything was committed: %q", got)
	}
}

func TestGitCommitWithNothingToCommitFails(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, _ := repo(t)
	before := git(t, work, "rev-parse", "HEAD")
	res := mustRun(t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "empty"}))
	if !strings.Contains(res.Error, "nothing to commit") || res.ExitCode == 0 {
		t.Errorf("Result = %+v; want a failure naming nothing to commit", res)
	}
	if after := git(t, work, "rev-parse", "HEAD"); after != before {
		t.Errorf("HEAD moved from %s to %s", before, after)
	}
}

func TestGitCommitRefusals(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, _ := repo(t)
	mustRefuse[*executor.PayloadError](t, e, request(work, brabo.GitCommit, brabo.Payload{Message: " "}))
	mustRefuse[*executor.ScopeError](t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "m", Cwd: ".."}))
	req := request(work, brabo.GitCommit, brabo.Payload{Message: "m"})
	req.Credential = nil
	pe := mustRefuse[*executor.PayloadError](t, e, req)
	if pe.Field != "credential" {
		t.Errorf("refused for %q, want credential", pe.Field)
	}
}

// A root that is a folder inside a repository, not a repository itself,
// must not let git act on the repository around it.
func TestGitDoesNotReachARepositoryAboveTheRoot(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, _ := repo(t)
	root := filepath.Join(work, "nested")
	writeFile(t, filepath.Join(root, "x"), "x")
	writeFile(t, filepath.Join(work, "outside-the-scope"), "y")
	before := git(t, work, "rev-parse", "HEAD")
	res := mustRun(t, e, request(root, brabo.GitCommit, brabo.Payload{Message: "escape"}))
	if res.Error == "" || !strings.Contains(res.Output, "not a git repository") {
		t.Errorf("git acted above the root: %+v", res)
	}
	if after := git(t, work, "rev-parse", "HEAD"); after != before {
		t.Errorf("the enclosing repository got a commit")
	}
}

func TestGitBranchCreate(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, _ := repo(t)
	first := git(t, work, "rev-parse", "HEAD")
	second := commitOn(t, work, "main", "more.txt", "more")

	res := mustSucceed(t, e, request(work, brabo.GitBranchCreate, brabo.Payload{Branch: "feature/one"}))
	if got := git(t, work, "rev-parse", "refs/heads/feature/one"); got != second || res.Detail["branch"] != "feature/one" || res.Detail["commit"] != second {
		t.Errorf("feature/one at %s, Detail %v; want HEAD %s", got, res.Detail, second)
	}
	res = mustSucceed(t, e, request(work, brabo.GitBranchCreate, brabo.Payload{Branch: "old", From: first}))
	if got := git(t, work, "rev-parse", "refs/heads/old"); got != first || res.Detail["from"] != first {
		t.Errorf("old at %s, Detail %v; want %s", got, res.Detail, first)
	}
	// Existing branch, unknown start point: failures, nothing moved.
	res = mustRun(t, e, request(work, brabo.GitBranchCreate, brabo.Payload{Branch: "old"}))
	if res.Error == "" || git(t, work, "rev-parse", "refs/heads/old") != first {
		t.Errorf("re-creating a branch: %+v", res)
	}
	res = mustRun(t, e, request(work, brabo.GitBranchCreate, brabo.Payload{Branch: "x", From: "no-such-ref"}))
	if !strings.Contains(res.Error, "not a commit") || gitOK(work, "rev-parse", "--verify", "--quiet", "refs/heads/x") {
		t.Errorf("unknown start point: %+v", res)
	}
	for _, from := range []string{"--orphan", "-f", "a b", "x\ny"} {
		pe := mustRefuse[*executor.PayloadError](t, e, request(work, brabo.GitBranchCreate, brabo.Payload{Branch: "y", From: from}))
		if pe.Field != "from" {
			t.Errorf("from %q: refused for %q", from, pe.Field)
		}
	}
}

func TestGitPushToALocalBareRemote(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, bare := repo(t)
	hash := commitOn(t, work, "feat/push", "f.txt", "f")
	res := mustSucceed(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat/push"}))
	if got := git(t, bare, "rev-parse", "refs/heads/feat/push"); got != hash {
		t.Errorf("bare remote has feat/push at %q, want %q", got, hash)
	}
	if res.Detail["remote"] != "origin" || res.Detail["branch"] != "feat/push" || res.Detail["commit"] != hash {
		t.Errorf("Detail = %v", res.Detail)
	}

	// A named remote other than origin.
	other := filepath.Join(filepath.Dir(bare), "other.git")
	git(t, work, "init", "--quiet", "--bare", other)
	git(t, work, "remote", "add", "upstream", other)
	mustSucceed(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat/push", Remote: "upstream"}))
	if got := git(t, other, "rev-parse", "refs/heads/feat/push"); got != hash {
		t.Errorf("upstream has %q", got)
	}

	// Never forced: a rewritten branch is refused and the remote keeps it.
	git(t, work, "branch", "-f", "feat/push", "main")
	res = mustRun(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat/push"}))
	if res.Error == "" || git(t, bare, "rev-parse", "refs/heads/feat/push") != hash {
		t.Errorf("a non-fast-forward push went through: %+v", res)
	}
}

func TestGitPushFailuresAndRefusals(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, bare := repo(t)
	res := mustRun(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "no-such-branch"}))
	if !strings.Contains(res.Error, "does not exist") {
		t.Errorf("missing branch: %+v", res)
	}
	res = mustRun(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "main", Remote: "nowhere"}))
	if !strings.Contains(res.Error, "not configured") {
		t.Errorf("unknown remote: %+v", res)
	}
	// A URL or path is not a remote name: the push goes only where the
	// repository is configured to push.
	for _, remote := range []string{bare, "../remote.git", "file:///tmp/x", "-oProxyCommand=x", "--mirror", "ext::sh -c x"} {
		pe := mustRefuse[*executor.PayloadError](t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "main", Remote: remote}))
		if pe.Field != "remote" {
			t.Errorf("remote %q: refused for %q", remote, pe.Field)
		}
	}
	// "main:other" would push elsewhere, the others are options. ("+main"
	// is a valid name and cannot force: the refspec is always spelled out
	// as refs/heads/B:refs/heads/B.)
	for _, b := range []string{"main:other", ":main", "-d", "--all"} {
		mustRefuse[*executor.PayloadError](t, e, request(work, brabo.GitPush, brabo.Payload{Branch: b}))
	}
}

func TestPROpenChecksBothBranchesOnTheRemote(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	work, _ := repo(t)
	commitOn(t, work, "feat", "f.txt", "f")
	git(t, work, "push", "--quiet", "origin", "feat")
	res := mustSucceed(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "feat", Base: "main", Title: "Add f"}))
	if res.Detail["head"] != "feat" || res.Detail["base"] != "main" || res.Detail["title"] != "Add f" {
		t.Errorf("Detail = %v", res.Detail)
	}
	res = mustSucceed(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "feat", Base: "main"}))
	if res.Detail["title"] != "feat" {
		t.Errorf("default title = %q", res.Detail["title"])
	}

	// A head that exists only locally is not on the remote.
	commitOn(t, work, "local-only", "l.txt", "l")
	res = mustRun(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "local-only", Base: "main"}))
	if !strings.Contains(res.Error, `head branch "local-only" is not on remote`) {
		t.Errorf("missing head: %+v", res)
	}
	res = mustRun(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "feat", Base: "dev"}))
	if !strings.Contains(res.Error, `base branch "dev" is not on remote`) {
		t.Errorf("missing base: %+v", res)
	}
	mustRefuse[*executor.PayloadError](t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "feat"}))
	mustRefuse[*executor.PayloadError](t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "main", Base: "main"}))
}

func TestGitCommandsTimeOut(t *testing.T) {
	work, _ := repo(t)
	// A pre-commit hook that hangs: the git step's timeout ends it.
	hook := filepath.Join(work, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\nsleep 30\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "x"), "x")
	// Hooks run only in the sandbox.
	e := sandboxedWith(t, executor.Options{GitTimeout: 500 * time.Millisecond})
	start := time.Now()
	req := request(work, brabo.GitCommit, brabo.Payload{Message: "m"})
	req.Project = &brabo.Project{GitHooks: true} // the hook runs only when turned on
	res := mustRun(t, e, req)
	if !res.TimedOut || !strings.Contains(res.Error, "timed out") || time.Since(start) > 10*time.Second {
		t.Errorf("%+v after %v", res, time.Since(start))
	}
}

func TestGitMissingBinaryIsAnError(t *testing.T) {
	t.Parallel()
	work, _ := repo(t)
	e := executor.New(executor.Options{GitPath: "/nonexistent/git"})
	res, err := e.Execute(context.Background(), request(work, brabo.GitBranchCreate, brabo.Payload{Branch: "b"}))
	if err == nil || res != nil {
		t.Errorf("got %+v, %v; want an error", res, err)
	}
}
