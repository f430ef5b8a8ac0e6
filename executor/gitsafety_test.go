package executor_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
)

// plantScript writes an executable script that appends "ran" to marker,
// as a planted fsmonitor or hook would run the agent's program.
func plantScript(t *testing.T, dir, marker string) string {
	t.Helper()
	script := filepath.Join(dir, "planted.sh")
	writeFile(t, script, "#!/bin/sh\necho ran >> '"+marker+"'\nexit 1\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// plainGitStatus runs `git status` in dir with the test's own environment,
// none of brabo's: the control that proves a plant works.
func plainGitStatus(dir string) {
	cmd := exec.Command("git", "status")
	cmd.Dir = dir
	_ = cmd.Run()
}

// TestGitIgnoresAnEmbeddedBareRepository plants a bare repository in the
// project (x/{HEAD,objects,refs,config}) whose config names a
// core.fsmonitor and a work tree: `cd x && git status` runs the planted
// program with plain git, and not through the executor.
func TestGitIgnoresAnEmbeddedBareRepository(t *testing.T) {
	t.Parallel()
	work, _ := repo(t)
	tmp := realDir(t)
	marker := filepath.Join(tmp, "marker")
	script := plantScript(t, tmp, marker)
	x := filepath.Join(work, "x")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(x, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(x, "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(x, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "+script+"\n")

	plainGitStatus(x)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the plant does not work with plain git, so the test proves nothing: %v", err)
	}
	os.Remove(marker)

	e := executor.New(executor.Options{})
	res := mustRun(t, e, terminal(work, "", "cd x && git status"))
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the planted fsmonitor ran through the executor: %q", res.Output)
	}
	if !strings.Contains(res.Output, "safe.bareRepository") {
		t.Errorf("git did not refuse the bare repository: %q", res.Output)
	}
}

// TestGitIgnoresAFsmonitorInGitConfig: a core.fsmonitor written to
// .git/config runs on `git status` with plain git, and not through the
// executor, in a terminal command or a git action (which refuses the
// repository, naming the key).
func TestGitIgnoresAFsmonitorInGitConfig(t *testing.T) {
	t.Parallel()
	work, _ := repo(t)
	tmp := realDir(t)
	marker := filepath.Join(tmp, "marker")
	git(t, work, "config", "core.fsmonitor", plantScript(t, tmp, marker))

	plainGitStatus(work)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the plant does not work with plain git, so the test proves nothing: %v", err)
	}
	os.Remove(marker)

	e := executor.New(executor.Options{})
	res := mustSucceed(t, e, terminal(work, "", "git status"))
	writeFile(t, filepath.Join(work, "new"), "x")
	commit := mustRun(t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "m"}))
	if commit.Code != brabo.CodeRepositoryConfigRefused || !strings.Contains(commit.Error, "core.fsmonitor") {
		t.Errorf("the git_commit: %+v", commit)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the planted fsmonitor ran through the executor: %q", res.Output)
	}
}

// TestGitHooksRunOnlyWhenTurnedOnAndSeeNoSecret: a pre-commit hook that
// writes its environment and what it can reach to a file does not run on
// a git_commit unless the project turned hooks on, and never on the host
// (an executor without a sandbox), turned on or not; when it runs, it runs
// in the sandbox: it sees PATH and the action's id and none of the
// server's secrets, cannot read a file outside the project, sees its own
// pid namespace (not the test's pid) and cannot write .git/config.
func TestGitHooksRunOnlyWhenTurnedOnAndSeeNoSecret(t *testing.T) {
	secrets := map[string]string{"OPENAI_API_KEY": "sk-test-secret", "DATABASE_URL": "postgres://u:pw@db/x",
		"BRABO_TOKEN": "brb_test_secret", "BRABO_DB": "postgres://u:pw@db/y"}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	work, _ := repo(t)
	secret := filepath.Join(realDir(t), "secret")
	writeFile(t, secret, "the-planted-secret\n")
	out := filepath.Join(work, "hook-env")
	hook := filepath.Join(work, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\nenv > '"+out+"'\n"+
		"cat '"+secret+"' >> '"+out+"' 2>/dev/null || echo secret-unreadable >> '"+out+"'\n"+
		"test -e /proc/"+strconv.Itoa(os.Getpid())+" && echo sees-the-host-pid >> '"+out+"'\n"+
		"echo '[core]' >> .git/config 2>/dev/null && echo wrote-git-config >> '"+out+"'\n"+
		"exit 0\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	host := executor.New(executor.Options{})
	writeFile(t, filepath.Join(work, "a"), "a")
	mustSucceed(t, host, request(work, brabo.GitCommit, brabo.Payload{Message: "hooks off"}))
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the hook ran with hooks off")
	}
	writeFile(t, filepath.Join(work, "b"), "b")
	onHost := request(work, brabo.GitCommit, brabo.Payload{Message: "hooks on, on the host"})
	onHost.Project = &brabo.Project{GitHooks: true}
	mustSucceed(t, host, onHost)
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the hook ran on the host: with hooks on, only a sandboxed git runs them")
	}

	e := sandboxed(t)
	writeFile(t, filepath.Join(work, "c"), "c")
	mustSucceed(t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "hooks off, sandboxed"}))
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the hook ran with hooks off in the sandbox")
	}
	writeFile(t, filepath.Join(work, "d"), "d")
	req := request(work, brabo.GitCommit, brabo.Payload{Message: "hooks on"})
	req.Project = &brabo.Project{GitHooks: true}
	mustSucceed(t, e, req)
	id := req.Action.ID
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the hook did not run with hooks on: %v", err)
	}
	if !strings.Contains(string(env), "\nPATH=") && !strings.HasPrefix(string(env), "PATH=") {
		t.Errorf("the hook's environment has no PATH:\n%s", env)
	}
	if !strings.Contains(string(env), "BRABO_ACTION_ID="+id) {
		t.Errorf("the hook's environment does not name its action:\n%s", env)
	}
	for k, v := range secrets {
		if strings.Contains(string(env), v) || strings.Contains(string(env), k+"=") {
			t.Errorf("the hook saw %s:\n%s", k, env)
		}
	}
	for _, bad := range []string{"the-planted-secret", "sees-the-host-pid", "wrote-git-config"} {
		if strings.Contains(string(env), bad) {
			t.Errorf("the hook ran outside the sandbox (%s):\n%s", bad, env)
		}
	}
	if !strings.Contains(string(env), "secret-unreadable") {
		t.Errorf("the hook's report is incomplete:\n%s", env)
	}
}
