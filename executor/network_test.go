package executor_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/egress"
)

// gitDaemon serves the bare repositories under base over git:// on
// 127.0.0.1, pushes enabled: the URL prefix.
func gitDaemon(t *testing.T, base string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1",
		fmt.Sprintf("--port=%d", port), "--base-path="+base, base)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return fmt.Sprintf("git://127.0.0.1:%d/", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("git daemon did not listen")
	return ""
}

// Typed actions brabo runs itself use brabo's own network, never the
// egress proxy: a git_push to a git:// remote on 127.0.0.1 goes through
// with no Network rule, while a terminal command of the same executor is
// refused that address.
func TestTypedActionsUseBrabosOwnNetwork(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := executor.New(executor.Options{Network: &executor.Network{Proxy: &egress.Proxy{}, Forwarder: self}})
	work, bare := repo(t)
	url := gitDaemon(t, filepath.Dir(bare)) + filepath.Base(bare)
	git(t, work, "remote", "add", "daemon", url)
	hash := commitOn(t, work, "feat/net", "n.txt", "n")
	mustSucceed(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat/net", Remote: "daemon"}))
	if got := git(t, bare, "rev-parse", "refs/heads/feat/net"); got != hash {
		t.Fatalf("the remote has %q, want %q", got, hash)
	}
	host := strings.Split(url, "/")[2]
	res := mustRun(t, e, request(work, brabo.Terminal, brabo.Payload{Command: "curl -sS --max-time 5 http://" + host + "/"}))
	if !strings.Contains(res.Detail[brabo.DetailNetwork], "network: "+host+" is not allowed") {
		t.Fatalf("the terminal command was not refused: %+v", res)
	}
}
