package executor_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
)

// TestGitPushRunsInTheSandbox: with a sandbox, git_push's git runs in it.
// The maintainer turned hooks on, and the pre-push hook (code the agent
// could have written, the one program a push runs from the repository)
// reports what it reaches: it is in another pid namespace than this
// process, does not see this process's /proc, a secret beside the remote,
// and cannot write the project's .git (config, refs/heads, HEAD, hooks/)
// nor the remote's control files (config, hooks/); the push lands on the
// local bare remote, and the remote-tracking ref, the one thing of .git a
// push writes, is updated.
func TestGitPushRunsInTheSandbox(t *testing.T) {
	e := sandboxed(t)
	work, bare := repo(t)
	secret := filepath.Join(filepath.Dir(bare), "secret")
	writeFile(t, secret, "the-planted-secret\n")
	os.MkdirAll(filepath.Join(bare, "hooks"), 0o755)
	report := filepath.Join(work, "push-report")
	hostNS, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(work, ".git", "hooks", "pre-push")
	writeFile(t, hook, "#!/bin/sh\nr='"+report+"'\necho ran >> \"$r\"\n"+
		"echo \"ns=$(readlink /proc/self/ns/pid)\" >> \"$r\"\n"+
		"test -e /proc/"+strconv.Itoa(os.Getpid())+" && echo sees-the-host-pid >> \"$r\"\n"+
		"cat '"+secret+"' >> \"$r\" 2>/dev/null\n"+
		"for f in .git/config .git/HEAD .git/refs/heads/planted .git/hooks/x '"+bare+"/config' '"+bare+"/hooks/x'; do\n"+
		"  (echo x >> \"$f\") 2>/dev/null && echo \"wrote $f\" >> \"$r\"\ndone\nexit 0\n")
	os.Chmod(hook, 0o755)
	config, _ := os.ReadFile(filepath.Join(work, ".git", "config"))
	bareConfig, _ := os.ReadFile(filepath.Join(bare, "config"))
	os.Remove(filepath.Join(work, ".git", "refs", "remotes", "origin", "main")) // the push makes it again

	hash := commitOn(t, work, "main", "p.txt", "p\n")
	req := request(work, brabo.GitPush, brabo.Payload{Branch: "main"})
	req.Project = &brabo.Project{GitHooks: true}
	mustSucceed(t, e, req)
	if got := git(t, bare, "rev-parse", "refs/heads/main"); got != hash {
		t.Errorf("the remote's main is %s, the pushed commit %s", got, hash)
	}
	if got := git(t, work, "rev-parse", "refs/remotes/origin/main"); got != hash {
		t.Errorf("the remote-tracking ref is %s, the pushed commit %s", got, hash)
	}
	got, _ := os.ReadFile(report)
	if !strings.Contains(string(got), "ran") {
		t.Fatalf("the pre-push hook did not run in the sandbox:\n%s", got)
	}
	if strings.Contains(string(got), "ns="+hostNS) || !strings.Contains(string(got), "ns=pid:[") {
		t.Errorf("the push's git is in this process's pid namespace (%s):\n%s", hostNS, got)
	}
	for _, bad := range []string{"sees-the-host-pid", "the-planted-secret", "wrote"} {
		if strings.Contains(string(got), bad) {
			t.Errorf("the push's hook: %s:\n%s", bad, got)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(work, ".git", "config")); string(now) != string(config) {
		t.Errorf(".git/config changed:\n%s", now)
	}
	if now, _ := os.ReadFile(filepath.Join(bare, "config")); string(now) != string(bareConfig) {
		t.Errorf("the remote's config changed:\n%s", now)
	}
	// pr_open's ls-remote reads the remote bound read-only.
	git(t, work, "push", "--quiet", "--no-verify", "origin", "main:base")
	os.Remove(report)
	mustSucceed(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "main", Base: "base"}))
}

// TestUnroutableRemoteIsRefused: a git_push or pr_open whose remote is of
// a kind brabo does not route — an unknown scheme, which makes git start
// git-remote-<scheme> — is refused with repository_config_refused and
// ErrRemoteUnroutable's sentence before git runs, with a sandbox and without one: a
// git-remote-brabo-evil on PATH never runs.
func TestUnroutableRemoteIsRefused(t *testing.T) {
	bin := realDir(t)
	marker := filepath.Join(realDir(t), "marker")
	helper := filepath.Join(bin, "git-remote-brabo-evil")
	writeFile(t, helper, "#!/bin/sh\necho ran >> '"+marker+"'\nexit 1\n")
	os.Chmod(helper, 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	work, _ := repo(t)
	git(t, work, "remote", "add", "evil", "brabo-evil://example.com/x")
	if gitOK(work, "ls-remote", "evil"); !ran(marker) {
		t.Fatal("git does not run the remote helper, so the test proves nothing")
	}
	os.Remove(marker)
	for name, e := range map[string]*executor.Executor{"host": executor.New(executor.Options{}), "sandboxed": sandboxed(t)} {
		t.Run(name, func(t *testing.T) {
			for _, req := range []brabo.ExecRequest{
				request(work, brabo.GitPush, brabo.Payload{Branch: "main", Remote: "evil"}),
				request(work, brabo.PrOpen, brabo.Payload{Branch: "main", Base: "x", Remote: "evil"}),
			} {
				res := mustRun(t, e, req)
				if res.Code != brabo.CodeRepositoryConfigRefused || !strings.Contains(res.Error, executor.ErrRemoteUnroutable.Error()) ||
					!strings.Contains(res.Error, "brabo-evil") || res.Output != "" {
					t.Errorf("%s: %+v", req.Action.Type, res)
				}
			}
			if ran(marker) {
				t.Fatal("the remote helper ran")
			}
		})
	}
}
