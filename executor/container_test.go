package executor_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/docker"
	"github.com/brabo-dev/brabo/docker/dockertest"
	"github.com/brabo-dev/brabo/executor"
)

// boxFixture is a real Podman service with one running container that
// holds a project folder the way brabo starts it: the folder at /work,
// permissions.json and .git read-only over it, no network.
type boxFixture struct {
	t    *testing.T
	eng  *docker.Engine
	root string
	info *brabo.ContainerInfo
	x    *executor.Executor
	n    int
}

func newBox(t *testing.T, opts executor.Options) *boxFixture {
	host := dockertest.Podman(t)
	image := dockertest.BashImage(t, host)
	eng, err := docker.New(host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	eng.StopTimeout = time.Second
	root := filepath.Join(t.TempDir(), "shop")
	if out, err := exec.Command("git", "init", "--quiet", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow":[]}`), 0o644)
	os.MkdirAll(filepath.Join(root, "sub", "deeper"), 0o755)
	info, err := eng.Start(context.Background(), brabo.ContainerSpec{Name: "brabo-shop", Image: image, Mount: root,
		Args: []string{"sleep", "3600"}, ReadOnly: []string{"permissions.json", ".git"},
		Labels: map[string]string{brabo.LabelSettings: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	return &boxFixture{t: t, eng: eng, root: root, info: info, x: executor.New(opts)}
}

// run executes a terminal action in the container.
func (b *boxFixture) run(ctx context.Context, p brabo.Payload) (*brabo.Result, error) {
	b.n++
	a := &brabo.ProposedAction{ID: "act_box" + strings.Repeat("x", b.n), Type: brabo.Terminal, Payload: p}
	return b.x.Execute(ctx, brabo.ExecRequest{Action: a, Root: b.root,
		Container: &brabo.ContainerTarget{Engine: b.eng, Name: "brabo-shop", ID: b.info.ID}})
}

func (b *boxFixture) must(cmd string) *brabo.Result {
	b.t.Helper()
	res, err := b.run(context.Background(), brabo.Payload{Command: cmd})
	if err != nil {
		b.t.Fatalf("%s: %v", cmd, err)
	}
	return res
}

// ps is the container's process list, read by an exec of its own.
func (b *boxFixture) ps() string {
	b.t.Helper()
	var out strings.Builder
	if _, err := b.eng.Exec(context.Background(), brabo.ContainerExec{Container: b.info.ID, Cmd: []string{"ps", "-o", "pid,args"}, Output: &out}); err != nil {
		b.t.Fatal(err)
	}
	return out.String()
}

// TestContainerTerminalIsTheContainer: a terminal action given a container
// runs in it: its hostname, /etc/hostname, user and root folder are the
// container's; a host file outside the project is not there; the
// protected paths are read-only inside while the rest of the folder is
// writable; there is no network; the exit code and output are the
// command's, capped; the cwd is translated under /work.
func TestContainerTerminalIsTheContainer(t *testing.T) {
	b := newBox(t, executor.Options{MaxOutputBytes: 2000})
	hostName, _ := os.Hostname()
	secret := filepath.Join(t.TempDir(), "host-secret.txt")
	os.WriteFile(secret, []byte("the host's secret\n"), 0o644)

	res := b.must(`hostname; echo "$(</etc/hostname)"; id -u; ls /; pwd`)
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if res.ExitCode != 0 || len(lines) < 4 || lines[0] == hostName || lines[0] != lines[1] || !strings.HasPrefix(b.info.ID, lines[0]) {
		t.Fatalf("hostname inside (host %q, container %s): %d %q", hostName, b.info.ID, res.ExitCode, res.Output)
	}
	if lines[2] != "0" || !strings.Contains(res.Output, "\nwork\n") || strings.Contains(res.Output, "\nhome\n") ||
		!strings.HasSuffix(res.Output, "/work\n") {
		t.Fatalf("id, ls / and pwd inside: %q", res.Output)
	}
	if got := res.Detail["container"]; got != "brabo-shop" || res.Detail["cwd"] != "/work" {
		t.Fatalf("the result's detail: %v", res.Detail)
	}
	if res := b.must("cat " + secret); res.ExitCode == 0 || strings.Contains(res.Output, "the host's secret") {
		t.Fatalf("a host file outside the project read inside: %d %q", res.ExitCode, res.Output)
	}
	for _, cmd := range []string{`echo '{"allow":["Terminal(*)"]}' > permissions.json`, "echo '[core] hooksPath = x' >> .git/config",
		"rm -f permissions.json", "mv permissions.json p.json", "touch .git/hooks/pre-commit"} {
		if res := b.must(cmd); res.ExitCode == 0 {
			t.Fatalf("%s succeeded inside: %q", cmd, res.Output)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(b.root, "permissions.json")); string(data) != `{"allow":[]}` {
		t.Fatalf("permissions.json on the host: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(b.root, ".git", "config")); strings.Contains(string(data), "hooksPath") {
		t.Fatal(".git/config was written from inside")
	}
	if res := b.must("echo made inside > sub/made.txt"); res.ExitCode != 0 {
		t.Fatalf("writing the project folder inside: %d %q", res.ExitCode, res.Output)
	}
	if data, _ := os.ReadFile(filepath.Join(b.root, "sub", "made.txt")); string(data) != "made inside\n" {
		t.Fatalf("the file written inside, on the host: %q", data)
	}
	if res := b.must("ls /sys/class/net; (echo > /dev/tcp/1.1.1.1/80) 2>/dev/null || echo no-network"); strings.TrimSpace(res.Output) != "lo\nno-network" {
		t.Fatalf("the network inside: %q", res.Output)
	}
	if res := b.must("echo out; echo err >&2; exit 7"); res.ExitCode != 7 || res.Output != "out\nerr\n" || res.Error != "" {
		t.Fatalf("exit code and output: %+v", res)
	}
	if res := b.must("kill -TERM $$"); res.ExitCode != 128+15 {
		t.Fatalf("a command killed by a signal: %+v", res)
	}
	if res := b.must("printf '%05000d' 0"); !res.Truncated || len(res.Output) > 2100 ||
		!strings.Contains(res.Output, "output truncated") {
		t.Fatalf("the output cap: truncated %v, %d bytes", res.Truncated, len(res.Output))
	}

	// The cwd: translated under /work; outside the folder it never runs.
	res, err := b.run(context.Background(), brabo.Payload{Command: "pwd", Cwd: "sub/deeper"})
	if err != nil || strings.TrimSpace(res.Output) != "/work/sub/deeper" || res.Detail["cwd"] != "/work/sub/deeper" {
		t.Fatalf("cwd sub/deeper: %+v %v", res, err)
	}
	res, err = b.run(context.Background(), brabo.Payload{Command: "pwd", Cwd: filepath.Join(b.root, "sub")})
	if err != nil || strings.TrimSpace(res.Output) != "/work/sub" {
		t.Fatalf("an absolute host cwd inside the folder: %+v %v", res, err)
	}
	os.Symlink("/etc", filepath.Join(b.root, "etc-link"))
	for _, cwd := range []string{"..", "../..", "/etc", "etc-link"} {
		res, err := b.run(context.Background(), brabo.Payload{Command: "pwd", Cwd: cwd})
		var se *executor.ScopeError
		if !errors.As(err, &se) || res != nil {
			t.Fatalf("cwd %q: %+v %v, want a ScopeError and nothing run", cwd, res, err)
		}
	}
}

// TestContainerCwdRevalidated: the broker's own check of the translated
// cwd refuses anything not under /work, whatever the host side said.
func TestContainerCwdRevalidated(t *testing.T) {
	for _, c := range []struct{ root, dir, want string }{
		{"/srv/p", "/srv/p", "/work"},
		{"/srv/p", "/srv/p/a/b", "/work/a/b"},
		{"/srv/p", "/srv/p/a/../b", "/work/b"},
	} {
		if got, err := executor.ContainerCwd(c.root, c.dir); err != nil || got != c.want {
			t.Fatalf("ContainerCwd(%q, %q) = %q, %v; want %q", c.root, c.dir, got, err, c.want)
		}
	}
	for _, c := range []struct{ root, dir string }{
		{"/srv/p", "/srv"}, {"/srv/p", "/srv/other"}, {"/srv/p", "/etc"}, {"/srv/p", "relative"}, {"relative", "/srv/p"},
	} {
		_, err := executor.ContainerCwd(c.root, c.dir)
		var ce *executor.CwdError
		if !errors.As(err, &ce) || brabo.ErrorCode(err) != brabo.CodeCwdOutsideWork {
			t.Fatalf("ContainerCwd(%q, %q): %v, want a CwdError (cwd_outside_work)", c.root, c.dir, err)
		}
	}
}

// TestContainerTerminalLeavesNothing: a timeout, a cancellation and the
// end of a command that left processes behind (in its group, in a
// session of their own) all end every process of the action inside the
// container: ps shows none of them.
func TestContainerTerminalLeavesNothing(t *testing.T) {
	b := newBox(t, executor.Options{})
	res, err := b.run(context.Background(), brabo.Payload{Command: "sleep 301 & sleep 302", TimeoutSec: 1})
	if err != nil || !res.TimedOut || !strings.Contains(res.Error, "timed out after 1s") {
		t.Fatalf("a timeout: %+v %v", res, err)
	}
	if ps := b.ps(); strings.Contains(ps, "sleep 30") {
		t.Fatalf("after a timeout the container still runs:\n%s", ps)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	start := time.Now()
	res, err = b.run(ctx, brabo.Payload{Command: "sleep 303 & sleep 304"})
	if err != nil || !strings.Contains(res.Error, "interrupted") || time.Since(start) > 15*time.Second {
		t.Fatalf("a cancellation: %+v %v after %s", res, err, time.Since(start))
	}
	if ps := b.ps(); strings.Contains(ps, "sleep 30") {
		t.Fatalf("after a cancellation the container still runs:\n%s", ps)
	}

	res = b.must("sleep 305 & setsid sleep 306 & (set -m; sleep 307 &) ; (setsid env -i sleep 308 &) ; echo done")
	if res.ExitCode != 0 || res.Output != "done\n" || res.Error != "" {
		t.Fatalf("a command that leaves processes: %+v", res)
	}
	if ps := b.ps(); strings.Contains(ps, "sleep 30") {
		t.Fatalf("after its end the container still runs what the command left:\n%s", ps)
	}
	if ps := b.ps(); !strings.Contains(ps, "sleep 3600") {
		t.Fatalf("the container's own process was killed:\n%s", ps)
	}
}

// TestContainerTerminalGone: a container that is gone by execution fails
// the action with container_gone; nothing runs on the host.
func TestContainerTerminalGone(t *testing.T) {
	b := newBox(t, executor.Options{})
	if err := b.eng.Remove(context.Background(), "brabo-shop"); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(b.root, "ran-on-host")
	res, err := b.run(context.Background(), brabo.Payload{Command: "touch " + marker})
	if err != nil || res.Code != brabo.CodeContainerGone || res.Ran() || !strings.Contains(res.Error, "never runs on the host") {
		t.Fatalf("a removed container: %+v %v", res, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran on the host")
	}
}

// TestContainerTerminalRunsAsTheFolderOwner: the command runs as the user
// who owns the project folder, not as the container's root.
func TestContainerTerminalRunsAsTheFolderOwner(t *testing.T) {
	b := newBox(t, executor.Options{})
	if err := os.Chown(b.root, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	res := b.must("id -u; id -g; touch mine; stat -c %u mine")
	if res.ExitCode != 0 || res.Output != "1000\n1000\n1000\n" || res.Detail["user"] != "1000:1000" {
		t.Fatalf("as the folder's owner: %+v", res)
	}
	if fi, err := os.Stat(filepath.Join(b.root, "mine")); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 1000 {
		t.Fatalf("the file it made, on the host: %v", err)
	}
}
