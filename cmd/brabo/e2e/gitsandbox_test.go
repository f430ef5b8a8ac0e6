package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTypedGitActionsRunInTheSandbox (issue 23 item 1): the git of an
// approved git_commit runs in the sandbox of a real `brabo serve`. The
// project's maintainer turned the repository's hooks on, and the
// pre-commit hook (code the agent could have written) reports what it
// reaches: a secret file outside the project, brabo's data folder and
// its database, brabo's /proc (its environment) and a write to
// .git/config. In the sandbox it reaches none of them, and the commit is
// made. On a --no-sandbox server the same hook never runs: hooks run only
// in the sandbox.
func TestTypedGitActionsRunInTheSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	needBwrap(t)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("the-planted-secret\n"), 0o644)
	for _, v := range []struct {
		name    string
		flags   []string
		hookRan bool
	}{{"sandboxed", nil, true}, {"no-sandbox", []string{"--no-sandbox"}, false}} {
		t.Run(v.name, func(t *testing.T) {
			data := t.TempDir()
			gitHookScene(t, startServe(t, data, v.flags...), data, filepath.Join(t.TempDir(), "shop"), secret, v.hookRan, func() {})
		})
	}
	t.Run("unprivileged server", func(t *testing.T) {
		u := newUnprivileged(t, "brabo-gitbox-user-")
		data := filepath.Join(u.base, "data")
		os.MkdirAll(data, 0o755)
		secret := filepath.Join(u.base, "secret")
		os.WriteFile(secret, []byte("the-planted-secret\n"), 0o644)
		chown := func() { t.Helper(); u.chown(t, u.base) }
		chown()
		gitHookScene(t, u.serve(t, data), data, filepath.Join(u.base, "shop"), secret, true, chown)
	})
}

// gitHookScene is TestTypedGitActionsRunInTheSandbox against srv, whose
// data folder is data, in a project made at root; fix runs once the
// test's own git has written the project (the unprivileged server's
// files must be its user's).
func gitHookScene(t *testing.T, srv *server, data, root, secret string, hookRan bool, fix func()) {
	gitIn := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.MkdirAll(root, 0o755)
	gitIn("init", "-q", "--initial-branch=main")
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"ask": ["GitCommit()"]}`), 0o644)
	gitIn("add", "-A")
	gitIn("commit", "-q", "-m", "initial")
	fix()
	project := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", srv.token, map[string]any{"name": "coder"}, 201)["token"].(string)
	srv.must(t, "PATCH", "/v1/projects/"+project, srv.token, map[string]any{"gitHooks": true}, 200)

	report := filepath.Join(root, "hook-report")
	brabo := strconv.Itoa(srv.cmd.Process.Pid)
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	os.WriteFile(hook, []byte(`#!/bin/sh
r='`+report+`'
echo ran >> "$r"
cat '`+secret+`' >> "$r" 2>/dev/null || echo secret-unreadable >> "$r"
test -e '`+filepath.Join(data, "brabo.db")+`' && echo sees-the-database >> "$r"
ls '`+data+`' >/dev/null 2>&1 && echo sees-the-data-folder >> "$r"
tr '\0' '\n' < /proc/`+brabo+`/environ >/dev/null 2>&1 && echo reads-brabos-environ >> "$r"
test -e /proc/`+brabo+` && echo sees-brabos-pid >> "$r"
(echo '[core]' >> .git/config) 2>/dev/null && echo wrote-git-config >> "$r"
exit 0
`), 0o755)
	// The plant works with plain git: the hook reads all of it.
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	gitIn("add", "-A")
	gitIn("commit", "-q", "-m", "control")
	if b, _ := os.ReadFile(report); !strings.Contains(string(b), "the-planted-secret") || !strings.Contains(string(b), "sees-the-database") {
		t.Fatalf("the hook does not reach them with plain git, so the test proves nothing:\n%s", b)
	}
	os.Remove(report)
	// The control's hook appended to .git/config: take it out.
	cfg := filepath.Join(root, ".git", "config")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.TrimSuffix(string(b), "[core]\n")), 0o644)
	fix()

	os.WriteFile(filepath.Join(root, "b.txt"), []byte("b\n"), 0o644)
	a := srv.must(t, "POST", "/v1/projects/"+project+"/actions", agent,
		map[string]any{"type": "git_commit", "payload": map[string]any{"message": "b"}}, 201)
	done := srv.must(t, "POST", "/v1/actions/"+a["id"].(string)+"/approve", srv.token, nil, 200)["action"].(map[string]any)
	if done["status"] != "executed" {
		t.Fatalf("the git_commit: %v %v", done["status"], done["result"])
	}
	got, err := os.ReadFile(report)
	if !hookRan {
		if err == nil {
			t.Fatalf("the hook ran on a --no-sandbox server:\n%s", got)
		}
		return
	}
	if !strings.Contains(string(got), "ran") || !strings.Contains(string(got), "secret-unreadable") {
		t.Fatalf("the hook did not run in the sandbox, or did not report: %v\n%s", err, got)
	}
	for _, bad := range []string{"the-planted-secret", "sees-the-database", "sees-the-data-folder", "reads-brabos-environ", "sees-brabos-pid", "wrote-git-config"} {
		if strings.Contains(string(got), bad) {
			t.Errorf("the git_commit's process %s:\n%s", bad, got)
		}
	}
}
