package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGitPushRunsInTheSandboxOfTheServer (issue 23 item 1): the git of an
// approved git_push runs in the sandbox of a real `brabo serve`, as root
// and as an unprivileged server user. The maintainer turned hooks on, and
// the pre-push hook (code the agent could have written) reports what it
// reaches: it is in another pid namespace than brabo, does not see
// brabo's /proc, a secret beside the remote, or the data folder, and
// cannot write .git/config, .git/HEAD or the remote's config. The push
// lands on the local bare remote and pr_open finds it there. A remote of
// a kind brabo does not route is refused by name. On a --no-sandbox
// server the push runs on the host as before, and the hook never runs.
func TestGitPushRunsInTheSandboxOfTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	needBwrap(t)
	for _, v := range []struct {
		name    string
		flags   []string
		hookRan bool
	}{{"sandboxed", nil, true}, {"no-sandbox", []string{"--no-sandbox"}, false}} {
		t.Run(v.name, func(t *testing.T) {
			data, base := t.TempDir(), t.TempDir()
			pushScene(t, startServe(t, data, v.flags...), data, base, v.hookRan, func() {})
		})
	}
	t.Run("unprivileged server", func(t *testing.T) {
		u := newUnprivileged(t, "brabo-gitpush-user-")
		data := filepath.Join(u.base, "data")
		os.MkdirAll(data, 0o755)
		chown := func() { t.Helper(); u.chown(t, u.base) }
		chown()
		pushScene(t, u.serve(t, data), data, filepath.Join(u.base, "scene"), true, chown)
	})
}

// pushScene is TestGitPushRunsInTheSandboxOfTheServer against srv, whose
// data folder is data, with the project, its bare remote and the secret
// made in base; fix runs once the test's own git has written them.
func pushScene(t *testing.T, srv *server, data, base string, hookRan bool, fix func()) {
	root, bare, secret := filepath.Join(base, "shop"), filepath.Join(base, "remote.git"), filepath.Join(base, "secret")
	os.MkdirAll(root, 0o755)
	os.WriteFile(secret, []byte("the-planted-secret\n"), 0o644)
	gitIn := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn(base, "init", "-q", "--bare", "--initial-branch=main", bare)
	os.MkdirAll(filepath.Join(bare, "hooks"), 0o755)
	gitIn(root, "init", "-q", "--initial-branch=main")
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"ask": ["GitPush()", "PrOpen()"]}`), 0o644)
	gitIn(root, "add", "-A")
	gitIn(root, "commit", "-q", "-m", "initial")
	gitIn(root, "remote", "add", "origin", bare)
	gitIn(root, "remote", "add", "evil", "brabo-evil://example.com/x")
	gitIn(root, "push", "-q", "origin", "main", "main:base")
	fix()
	project := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", srv.token, map[string]any{"name": "coder"}, 201)["token"].(string)
	srv.must(t, "PATCH", "/v1/projects/"+project, srv.token, map[string]any{"gitHooks": true}, 200)
	approve := func(typ string, payload map[string]any) map[string]any {
		t.Helper()
		a := srv.must(t, "POST", "/v1/projects/"+project+"/actions", agent, map[string]any{"type": typ, "payload": payload}, 201)
		return srv.must(t, "POST", "/v1/actions/"+a["id"].(string)+"/approve", srv.token, nil, 200)["action"].(map[string]any)
	}

	report := filepath.Join(root, "push-report")
	brabo := strconv.Itoa(srv.cmd.Process.Pid)
	braboNS, err := os.Readlink("/proc/" + brabo + "/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(root, ".git", "hooks", "pre-push")
	os.WriteFile(hook, []byte(`#!/bin/sh
r='`+report+`'
echo ran >> "$r"
echo "ns=$(readlink /proc/self/ns/pid)" >> "$r"
cat '`+secret+`' >> "$r" 2>/dev/null || echo secret-unreadable >> "$r"
ls '`+data+`' >/dev/null 2>&1 && echo sees-the-data-folder >> "$r"
test -e /proc/`+brabo+` && echo sees-brabos-pid >> "$r"
for f in .git/config .git/HEAD '`+bare+`/config'; do (echo x >> "$f") 2>/dev/null && echo "wrote $f" >> "$r"; done
exit 0
`), 0o755)
	// The plant works with plain git: the hook reaches all of it (and
	// writes; the writes are taken back).
	cfg, bareCfg := filepath.Join(root, ".git", "config"), filepath.Join(bare, "config")
	clean, _ := os.ReadFile(cfg)
	cleanBare, _ := os.ReadFile(bareCfg)
	head, _ := os.ReadFile(filepath.Join(root, ".git", "HEAD"))
	gitIn(root, "push", "-q", "--receive-pack=git -c safe.directory=* receive-pack", "origin", "main:control")
	if b, _ := os.ReadFile(report); !strings.Contains(string(b), "the-planted-secret") || !strings.Contains(string(b), "sees-brabos-pid") {
		t.Fatalf("the hook does not reach them with plain git, so the test proves nothing:\n%s", b)
	}
	os.Remove(report)
	os.WriteFile(cfg, clean, 0o644)
	os.WriteFile(bareCfg, cleanBare, 0o644)
	os.WriteFile(filepath.Join(root, ".git", "HEAD"), head, 0o644)
	os.WriteFile(filepath.Join(root, "p.txt"), []byte("p\n"), 0o644)
	gitIn(root, "add", "p.txt")
	gitIn(root, "commit", "-q", "-m", "to push")
	hash := gitIn(root, "rev-parse", "HEAD")
	fix()

	done := approve("git_push", map[string]any{"branch": "main"})
	if done["status"] != "executed" {
		t.Fatalf("the git_push: %v %v", done["status"], done["result"])
	}
	if got := gitIn(bare, "rev-parse", "refs/heads/main"); got != hash {
		t.Errorf("the remote's main is %s, the pushed commit %s", got, hash)
	}
	if got := gitIn(root, "rev-parse", "refs/remotes/origin/main"); got != hash {
		t.Errorf("the remote-tracking ref is %s, the pushed commit %s", got, hash)
	}
	if pr := approve("pr_open", map[string]any{"branch": "main", "base": "base", "title": "t"}); pr["status"] != "executed" {
		t.Fatalf("the pr_open: %v %v", pr["status"], pr["result"])
	}
	if refused := approve("git_push", map[string]any{"branch": "main", "remote": "evil"}); refused["status"] != "failed" ||
		refused["result"].(map[string]any)["code"] != "repository_config_refused" ||
		!strings.Contains(refused["result"].(map[string]any)["error"].(string), "does not route") {
		t.Errorf("a git_push to a remote brabo does not route: %v %v", refused["status"], refused["result"])
	}
	got, err := os.ReadFile(report)
	if !hookRan {
		if err == nil {
			t.Fatalf("the hook ran on a --no-sandbox server:\n%s", got)
		}
		return
	}
	if !strings.Contains(string(got), "ran") || !strings.Contains(string(got), "secret-unreadable") || !strings.Contains(string(got), "ns=pid:[") {
		t.Fatalf("the hook did not run in the sandbox, or did not report: %v\n%s", err, got)
	}
	for _, bad := range []string{"ns=" + braboNS, "the-planted-secret", "sees-the-data-folder", "sees-brabos-pid", "wrote"} {
		if strings.Contains(string(got), bad) {
			t.Errorf("the git_push's process: %s:\n%s", bad, got)
		}
	}
}
