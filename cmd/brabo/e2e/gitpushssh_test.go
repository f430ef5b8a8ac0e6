package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sshtest"
)

// TestSSHPushRunsInTheSandboxOfTheServer (issue 23 item 1): an approved
// git_push to an ssh remote (a real sshd of the test's, on 127.0.0.1,
// with a bare repository) through a real `brabo serve` lands exactly the
// approved commit, with the server user's own default identity and
// known_hosts: the ssh client runs in another pid and network namespace
// than brabo, with brabo's options (no configuration file, no agent,
// strict host keys, the egress tunnel as ProxyCommand), and while it runs
// the private key is on no command line and in no environment, nor in
// the result. The project's pre-push hook (gitHooks on), which would
// read the key in the push's sandbox, does not run. pr_open reads the
// remote the same way. A host no
// known_hosts line names fails with that reason and pushes nothing. As
// root and as an unprivileged server user.
func TestSSHPushRunsInTheSandboxOfTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	needBwrap(t)
	sshtest.Need(t)
	t.Run("root", func(t *testing.T) {
		home := t.TempDir()
		sshPushScene(t, home, t.TempDir(), func() {}, func() *server {
			return startServeEnv(t, t.TempDir(), []string{"HOME=" + home})
		})
	})
	t.Run("unprivileged server", func(t *testing.T) {
		u := newUnprivileged(t, "brabo-sshpush-user-")
		data := filepath.Join(u.base, "data")
		os.MkdirAll(data, 0o755)
		scene := filepath.Join(u.base, "scene")
		chown := func() { t.Helper(); u.chown(t, u.tmp, data, filepath.Join(scene, "shop")) }
		sshPushScene(t, u.tmp, scene, chown, func() *server { return u.serve(t, data) })
	})
}

// sshPushScene is TestSSHPushRunsInTheSandboxOfTheServer with the server
// user's home at home, the project and the remote in base; fix runs once
// the test has written the files the server reads, serve starts it.
func sshPushScene(t *testing.T, home, base string, fix func(), serve func() *server) {
	srv := sshtest.Start(t, 700*time.Millisecond)
	root, bare := filepath.Join(base, "shop"), filepath.Join(base, "remote.git")
	os.MkdirAll(root, 0o755)
	gitIn := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn(base, "init", "-q", "--bare", "--initial-branch=main", bare)
	gitIn(root, "init", "-q", "--initial-branch=main")
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"ask": ["GitPush()", "PrOpen()"]}`), 0o644)
	gitIn(root, "add", "-A")
	gitIn(root, "commit", "-q", "-m", "initial")
	gitIn(root, "remote", "add", "origin", srv.URL(bare))
	gitIn(root, "push", "-q", bare, "main:base")
	os.WriteFile(filepath.Join(root, "p.txt"), []byte("p\n"), 0o644)
	gitIn(root, "add", "p.txt")
	gitIn(root, "commit", "-q", "-m", "to push")
	hash := gitIn(root, "rev-parse", "HEAD")
	report := filepath.Join(root, "hook-report")
	os.WriteFile(filepath.Join(root, ".git", "hooks", "pre-push"), []byte("#!/bin/sh\ncat /run/brabo/ssh-id_ed25519 >> '"+report+"' 2>&1; echo ran >> '"+report+"'\n"), 0o755)
	sshDir := filepath.Join(home, ".ssh")
	os.MkdirAll(sshDir, 0o700)
	os.WriteFile(filepath.Join(sshDir, "id_ed25519"), []byte(srv.Key), 0o600)
	os.WriteFile(filepath.Join(sshDir, "known_hosts"), []byte(srv.KnownHost+"\n"), 0o644)
	fix()
	if os.Getuid() == 0 {
		// The bare remote is written by sshd's git-receive-pack, as root.
		exec.Command("chown", "-R", "0:0", bare).Run()
	}

	s := serve()
	project := s.must(t, "POST", "/v1/projects", s.token, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	agent := s.must(t, "POST", "/v1/projects/"+project+"/agents", s.token, map[string]any{"name": "coder"}, 201)["token"].(string)
	s.must(t, "PATCH", "/v1/projects/"+project, s.token, map[string]any{"gitHooks": true}, 200)
	approve := func(typ string, payload map[string]any) map[string]any {
		t.Helper()
		a := s.must(t, "POST", "/v1/projects/"+project+"/actions", agent, map[string]any{"type": typ, "payload": payload}, 201)
		return s.must(t, "POST", "/v1/actions/"+a["id"].(string)+"/approve", s.token, nil, 200)["action"].(map[string]any)
	}
	pid := strconv.Itoa(s.cmd.Process.Pid)
	braboPid, _ := os.Readlink("/proc/" + pid + "/ns/pid")
	braboNet, _ := os.Readlink("/proc/" + pid + "/ns/net")

	secret := sshtest.KeySecret(t, srv.Key)
	w := sshtest.Watch(secret, egress.ConnectSubcommand)
	done := approve("git_push", map[string]any{"branch": "main"})
	clients, held := w.Stop()
	res, _ := done["result"].(map[string]any)
	if done["status"] != "executed" {
		t.Fatalf("the git_push: %v %v\nsshd:\n%s", done["status"], done["result"], srv.LogText())
	}
	if got := gitIn(bare, "rev-parse", "refs/heads/main"); got != hash {
		t.Errorf("the remote's main is %s, the approved commit %s", got, hash)
	}
	if len(clients) == 0 {
		t.Errorf("no ssh client was seen during the push")
	}
	for _, c := range clients {
		if c.PidNS == braboPid || c.NetNS == braboNet {
			t.Errorf("an ssh process of the push ran in brabo's namespaces: %+v", c)
		}
		if strings.HasPrefix(c.Cmdline, "ssh ") && (!strings.Contains(c.Cmdline, "-F /dev/null") ||
			!strings.Contains(c.Cmdline, "IdentityAgent=none") || !strings.Contains(c.Cmdline, "StrictHostKeyChecking=yes") ||
			!strings.Contains(c.Cmdline, "ProxyCommand=/run/brabo/egress "+egress.ConnectSubcommand)) {
			t.Errorf("the ssh client ran without brabo's options: %s", c.Cmdline)
		}
	}
	if len(held) > 0 {
		t.Errorf("the private key was in the process table during the push: %v", held)
	}
	if out, _ := res["output"].(string); strings.Contains(out, secret) {
		t.Errorf("the result holds the private key: %v", res)
	}
	if b, err := os.ReadFile(report); err == nil {
		t.Errorf("the pre-push hook ran in the push's sandbox, with the key in reach:\n%s", b)
	}
	if pr := approve("pr_open", map[string]any{"branch": "main", "base": "base", "title": "t"}); pr["status"] != "executed" {
		t.Fatalf("the pr_open: %v %v", pr["status"], pr["result"])
	}

	// The host's line gone: the push fails, says why, and lands nothing.
	os.WriteFile(filepath.Join(sshDir, "known_hosts"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "q.txt"), []byte("q\n"), 0o644)
	gitIn(root, "add", "q.txt")
	gitIn(root, "commit", "-q", "-m", "not to land")
	fix()
	refused := approve("git_push", map[string]any{"branch": "main"})
	r, _ := refused["result"].(map[string]any)
	if refused["status"] != "failed" || r["code"] != "repository_config_refused" ||
		!strings.Contains(r["error"].(string), "is not in the known_hosts of brabo's user") ||
		!strings.Contains(r["error"].(string), "[127.0.0.1]:"+strconv.Itoa(srv.Port)) {
		t.Errorf("a git_push to a host not in known_hosts: %v %v", refused["status"], refused["result"])
	}
	if got := gitIn(bare, "rev-parse", "refs/heads/main"); got != hash {
		t.Errorf("a push to an unknown host moved the remote's main to %s", got)
	}
}
