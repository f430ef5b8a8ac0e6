package executor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"github.com/brabo-dev/brabo/internal/sshtest"
)

// TestSSHPushRunsInTheSandboxThroughItsTunnel: with a sandbox and a
// Network, a git_push to an ssh remote (a real sshd of the test's, the
// user's default identity and known_hosts in HOME) lands exactly the
// approved commit, runs no hook (gitHooks on), from an ssh client in the sandbox's pid namespace with
// brabo's own options (no configuration file, no agent, strict host
// keys, the egress tunnel as ProxyCommand); the private key is on no
// command line and in no environment while it runs. pr_open reads the
// remote the same way. A host no known_hosts line names is refused with
// ErrSSHHostUnknown before anything runs, and a known_hosts line with
// another key for it pushes nothing.
func TestSSHPushRunsInTheSandboxThroughItsTunnel(t *testing.T) {
	proxy := &egress.Proxy{}
	if os.Geteuid() == 0 {
		proxy.SocketUID, proxy.SocketGID = (&sandbox.Sandbox{}).User()
	}
	e := sandboxedWith(t, executor.Options{Network: &executor.Network{Proxy: proxy, Forwarder: os.Args[0]}})
	srv := sshtest.Start(t, 700*time.Millisecond)
	work, bare := repo(t)
	home := os.Getenv("HOME")
	sshDir := filepath.Join(home, ".ssh")
	t.Cleanup(func() { os.RemoveAll(sshDir) })
	os.MkdirAll(sshDir, 0o700)
	if err := os.WriteFile(filepath.Join(sshDir, "id_ed25519"), []byte(srv.Key), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sshDir, "known_hosts"), "other.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"+srv.KnownHost+"\n")

	git(t, work, "remote", "add", "box", srv.URL(bare))
	hash := commitOn(t, work, "feat/ssh", "s.txt", "s\n")
	git(t, work, "branch", "--quiet", "feat/later", "feat/ssh")
	commitOn(t, work, "feat/later", "l.txt", "l\n")
	// The maintainer turned hooks on; a pre-push hook in the push's
	// sandbox would read the key: it does not run.
	report := filepath.Join(work, "hook-report")
	writeFile(t, filepath.Join(work, ".git", "hooks", "pre-push"), "#!/bin/sh\ncat /run/brabo/ssh-id_ed25519 >> '"+report+"' 2>&1; echo ran >> '"+report+"'\n")
	os.Chmod(filepath.Join(work, ".git", "hooks", "pre-push"), 0o755)
	req := request(work, brabo.GitPush, brabo.Payload{Branch: "feat/ssh", Remote: "box"})
	req.Bound = map[string]string{"commit": hash}
	req.Project = &brabo.Project{GitHooks: true}
	w := sshtest.Watch(sshtest.KeySecret(t, srv.Key), egress.ConnectSubcommand)
	res := mustSucceed(t, e, req)
	clients, held := w.Stop()
	if got := git(t, bare, "rev-parse", "refs/heads/feat/ssh"); got != hash {
		t.Fatalf("the remote's feat/ssh is %q, want the approved %q\n%s", got, hash, res.Output)
	}
	if gitOK(bare, "rev-parse", "--verify", "--quiet", "refs/heads/feat/later") {
		t.Errorf("the push landed more than the approved branch")
	}
	self, _ := os.Readlink("/proc/self/ns/pid")
	if len(clients) == 0 {
		t.Errorf("no ssh client was seen during the push (sshd log:\n%s)", srv.LogText())
	}
	for _, c := range clients {
		cmdline := c.Cmdline
		if c.PidNS == self {
			t.Errorf("an ssh process of the push ran in the host's pid namespace: %s", cmdline)
		}
		if strings.HasPrefix(cmdline, "ssh ") && (!strings.Contains(cmdline, "-F /dev/null") ||
			!strings.Contains(cmdline, "IdentityAgent=none") || !strings.Contains(cmdline, "StrictHostKeyChecking=yes") ||
			!strings.Contains(cmdline, "ProxyCommand=/run/brabo/egress "+egress.ConnectSubcommand)) {
			t.Errorf("the ssh client ran without brabo's options: %s", cmdline)
		}
	}
	if len(held) > 0 {
		t.Errorf("the private key was in the process table during the push: %v", held)
	}
	if strings.Contains(res.Output, sshtest.KeySecret(t, srv.Key)) {
		t.Errorf("the transcript holds the private key:\n%s", res.Output)
	}
	if b, err := os.ReadFile(report); err == nil {
		t.Errorf("the pre-push hook ran in the push's sandbox, with the key in reach:\n%s", b)
	}
	mustSucceed(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "feat/ssh", Base: "main", Remote: "box"}))

	// An unknown host: nothing runs, and the result says why.
	writeFile(t, filepath.Join(sshDir, "known_hosts"), "other.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
	later := git(t, work, "rev-parse", "feat/later")
	res = mustRun(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat/later", Remote: "box"}))
	if res.Code != brabo.CodeRepositoryConfigRefused || !strings.Contains(res.Error, executor.ErrSSHHostUnknown.Error()) ||
		!strings.Contains(res.Error, srv.KnownHost[:strings.IndexByte(srv.KnownHost, ' ')]) {
		t.Errorf("a push to a host not in known_hosts: code %q, error %q\n%s", res.Code, res.Error, res.Output)
	}
	if gitOK(bare, "rev-parse", "--verify", "--quiet", "refs/heads/feat/later") {
		t.Errorf("a push to an unknown host landed %s", later)
	}
	// A line for the host with another key: ssh refuses it strictly.
	writeFile(t, filepath.Join(sshDir, "known_hosts"), srv.KnownHost[:strings.IndexByte(srv.KnownHost, ' ')]+
		" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
	res = mustRun(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat/later", Remote: "box"}))
	if res.ExitCode == 0 || gitOK(bare, "rev-parse", "--verify", "--quiet", "refs/heads/feat/later") ||
		!strings.Contains(res.Output, "Host key verification failed") {
		t.Errorf("a push to a host whose key is not the known one: %+v", res)
	}
}
