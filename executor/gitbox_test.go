package executor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// TestSandboxedGitActionsWorkAndWriteOnlyTheirGitFolders: with a sandbox,
// git_commit, git_branch_create, git_push, pr_open, git_merge and
// open_adr_pr do what they do on the host; a hook (turned on) of the
// commit cannot write the git folder's control files (config, hooks/,
// info/), which stay read-only over the writable git folder; and a
// sandbox that cannot be set up fails the git action with sandbox_failed,
// nothing committed.
func TestSandboxedGitActionsWorkAndWriteOnlyTheirGitFolders(t *testing.T) {
	e := sandboxed(t)
	work, bare := repo(t)
	for _, d := range []string{"info", "hooks"} {
		os.MkdirAll(filepath.Join(work, ".git", d), 0o755)
	}
	hook := filepath.Join(work, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\nfor f in .git/config .git/hooks/x .git/info/x .git/objects/info/alternates; do\n"+
		"  (echo x >> \"$f\") 2>/dev/null && echo \"wrote $f\" >> hook-report\ndone\necho ran >> hook-report\nexit 0\n")
	os.Chmod(hook, 0o755)
	config, _ := os.ReadFile(filepath.Join(work, ".git", "config"))

	writeFile(t, filepath.Join(work, "a.txt"), "a\n")
	req := request(work, brabo.GitCommit, brabo.Payload{Message: "in the sandbox"})
	req.Project = &brabo.Project{GitHooks: true}
	res := mustSucceed(t, e, req)
	if got := git(t, work, "rev-parse", "HEAD"); got != res.Detail["commit"] {
		t.Errorf("HEAD %s, the result's commit %s", got, res.Detail["commit"])
	}
	report, _ := os.ReadFile(filepath.Join(work, "hook-report"))
	if !strings.Contains(string(report), "ran") || strings.Contains(string(report), "wrote") {
		t.Errorf("the hook's report: %q", report)
	}
	if now, _ := os.ReadFile(filepath.Join(work, ".git", "config")); string(now) != string(config) {
		t.Errorf(".git/config changed:\n%s", now)
	}
	os.Remove(filepath.Join(work, "hook-report"))
	os.Remove(hook) // the test's own git below would run it

	mustSucceed(t, e, request(work, brabo.GitBranchCreate, brabo.Payload{Branch: "feat"}))
	commitOn(t, work, "feat", "f.txt", "f\n")
	mustSucceed(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat"}))
	mustSucceed(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "main"}))
	mustSucceed(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "feat", Base: "main"}))
	merged := mustSucceed(t, e, mergeReq(work, &brabo.PullRequest{Number: 1, Title: "f", Head: "feat", Base: "main"}))
	if got := git(t, bare, "rev-parse", "refs/heads/main"); got != merged.Detail["merge_commit"] {
		t.Errorf("the remote's main %s, the merge %s", got, merged.Detail["merge_commit"])
	}
	adr := request(work, brabo.OpenAdrPr, brabo.Payload{Title: "Use bwrap", Content: "# Use bwrap\n"})
	mustSucceed(t, e, adr)

	broken := executor.New(executor.Options{Sandbox: &sandbox.Sandbox{Helper: os.Args[0], Bwrap: "/nonexistent/bwrap"}})
	head := git(t, work, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(work, "b.txt"), "b\n")
	res = mustRun(t, broken, request(work, brabo.GitCommit, brabo.Payload{Message: "never"}))
	if res.Code != brabo.CodeSandboxFailed || git(t, work, "rev-parse", "HEAD") != head {
		t.Errorf("a git_commit whose sandbox failed: %+v", res)
	}
}

// TestSandboxedCommitInAWorktreeOfTheProject: a dev agent's git_commit
// runs in its worktree inside the project (.brabo/worktrees/<agent>),
// whose gitfile names the project's .git/worktrees/<agent>: both git
// folders are writable in the sandbox, and the commit lands on the
// worktree's branch.
func TestSandboxedCommitInAWorktreeOfTheProject(t *testing.T) {
	e := sandboxed(t)
	work, _ := repo(t)
	git(t, work, "worktree", "add", "-q", "-b", "agent/1", filepath.Join(work, ".brabo", "worktrees", "agt_1"))
	wt := filepath.Join(work, ".brabo", "worktrees", "agt_1")
	writeFile(t, filepath.Join(wt, "w.txt"), "w\n")
	res := mustSucceed(t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "in the worktree", Cwd: ".brabo/worktrees/agt_1"}))
	if got := git(t, work, "rev-parse", "refs/heads/agent/1"); got != res.Detail["commit"] {
		t.Errorf("agent/1 is at %s, the commit %s", got, res.Detail["commit"])
	}
}
