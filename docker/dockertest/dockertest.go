// Package dockertest starts a real Podman service for tests, speaking the
// Docker Engine API on a unix socket in a temporary folder, and builds a
// small image from Debian's busybox-static (no registry is reachable
// here). Imported by _test.go files only.
//
// The service runs rootful with runc (crun fails on cgroups v1/hybrid),
// cgroupfs, file events, the vfs storage driver (no overlay mount to
// undo) and explicit ulimits (root lacks CAP_SYS_RESOURCE, so podman's
// defaults fail), through a containers.conf named by CONTAINERS_CONF.
// Without podman, runc or /bin/busybox the tests skip, unless
// BRABO_REQUIRE_PODMAN=1 (.ci/run sets it), when they fail.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// Image is the reference BusyboxImage tags the image with.
const Image = "localhost/brabo-test:busybox"

// Busybox is the static busybox the image is built from.
const Busybox = "/bin/busybox"

const containersConf = `[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`

// Require skips (or, with BRABO_REQUIRE_PODMAN=1, fails) a test on a
// machine without podman, runc and busybox-static, or not running as root.
func Require(t testing.TB) {
	t.Helper()
	var missing []string
	for _, bin := range []string{"podman", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if _, err := os.Stat(Busybox); err != nil {
		missing = append(missing, Busybox+" (busybox-static)")
	}
	if os.Geteuid() != 0 {
		missing = append(missing, "root (the service runs rootful)")
	}
	if len(missing) == 0 {
		return
	}
	msg := "the container tests need a real Podman service; missing: " + strings.Join(missing, ", ") +
		" (apt-get install podman runc busybox-static)"
	if os.Getenv("BRABO_REQUIRE_PODMAN") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg + "; BRABO_REQUIRE_PODMAN=1 fails this")
}

// Podman starts `podman system service` for the test and returns its
// address (unix:///…/podman.sock). The service, every container it ran
// and its storage go when the test ends.
func Podman(t testing.TB) string {
	t.Helper()
	Require(t)
	// Podman refuses a run root longer than 50 characters: a test binary's
	// TMPDIR may be deep, so a long one gives way to /tmp.
	base := os.TempDir()
	if len(base) > 16 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "brabo-podman-")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "containers.conf")
	if err := os.WriteFile(conf, []byte(containersConf), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "podman.sock")
	cmd := exec.Command("podman", "--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"),
		"--tmpdir", filepath.Join(dir, "tmp"), "--storage-driver", "vfs", "--cgroup-manager", "cgroupfs",
		"--runtime", "runc", "--events-backend", "file",
		"system", "service", "--time=0", "unix://"+sock)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting podman system service: %v", err)
	}
	host := "unix://" + sock
	t.Cleanup(func() {
		// The containers first (their conmon processes would outlive the
		// service), then the service, then its storage.
		if c, err := client.New(client.WithHost(host), client.WithAPIVersionNegotiation()); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if list, err := c.ContainerList(ctx, client.ContainerListOptions{All: true}); err == nil {
				for _, ct := range list.Items {
					_, _ = c.ContainerRemove(ctx, ct.ID, client.ContainerRemoveOptions{Force: true})
				}
			}
			cancel()
			c.Close()
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		_ = os.RemoveAll(dir)
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			c, err := client.New(client.WithHost(host), client.WithAPIVersionNegotiation())
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, perr := c.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
				cancel()
				c.Close()
				if perr == nil {
					return host
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("podman system service did not answer on %s within 30s:\n%s", sock, logBuf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BusyboxImage imports an image holding only busybox-static (as /bin/busybox,
// with sh, sleep, echo, cat, touch, ls and true linked to it) into the
// engine at host, tagged Image, and returns Image.
func BusyboxImage(t testing.TB, host string) string {
	t.Helper()
	return importImage(t, host, Image, nil)
}

// BashImageRef is the reference BashImage tags its image with.
const BashImageRef = "localhost/brabo-test:bash"

// Bash is the host's bash, copied into BashImage with the libraries it
// links (ldd).
const Bash = "/bin/bash"

// BashImage imports an image holding busybox-static (with more applets
// linked: ps, hostname, id, kill, mkdir, rm, wget and the like) and the
// host's bash with its libraries, tagged BashImageRef: the shell a
// container project's commands run with. The host's bash is what the
// image gets because no registry is reachable here.
func BashImage(t testing.TB, host string) string {
	t.Helper()
	if _, err := os.Stat(Bash); err != nil {
		t.Fatalf("the bash image needs the host's %s: %v", Bash, err)
	}
	files := map[string]string{"bin/bash": Bash}
	out, err := exec.Command("ldd", Bash).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", Bash, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or
		// "/lib64/ld-linux-x86-64.so.2 (0x…)".
		f := strings.Fields(line)
		lib := ""
		switch {
		case len(f) >= 3 && f[1] == "=>":
			lib = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			lib = f[0]
		}
		if strings.HasPrefix(lib, "/") {
			files[strings.TrimPrefix(lib, "/")] = lib
		}
	}
	return importImage(t, host, BashImageRef, files)
}

// applets are the busybox applets linked in every test image; the bash
// image adds bashApplets.
var (
	applets     = []string{"sh", "sleep", "echo", "cat", "touch", "ls", "true"}
	bashApplets = []string{"ps", "hostname", "id", "kill", "mkdir", "rm", "wget", "nc", "grep", "env", "setsid", "false", "stat", "head", "printf", "test", "mv", "tr"}
)

// importImage builds an image from busybox (and files: image path → host
// path, read through symlinks) and imports it as ref.
func importImage(t testing.TB, host, ref string, files map[string]string) string {
	t.Helper()
	bin, err := os.ReadFile(Busybox)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	dirs := map[string]bool{}
	dir := func(d string) {
		for _, p := range parents(d) {
			if !dirs[p] {
				dirs[p] = true
				mode := int64(0o755)
				if p == "tmp/" {
					mode = 0o1777
				}
				must(tw.WriteHeader(&tar.Header{Name: p, Typeflag: tar.TypeDir, Mode: mode}))
			}
		}
	}
	dir("bin/")
	dir("tmp/")
	dir("work/")
	must(tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bin))}))
	_, err = tw.Write(bin)
	must(err)
	links := applets
	if files != nil {
		links = append(append([]string(nil), applets...), bashApplets...)
	}
	for _, l := range links {
		must(tw.WriteHeader(&tar.Header{Name: "bin/" + l, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}))
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := os.ReadFile(files[name])
		must(err)
		dir(filepath.Dir(name) + "/")
		must(tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))}))
		_, err = tw.Write(data)
		must(err)
	}
	must(tw.Close())
	c, err := client.New(client.WithHost(host), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc, err := c.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, ref, client.ImageImportOptions{})
	if err != nil {
		t.Fatalf("importing the image %s: %v", ref, err)
	}
	out, _ := io.ReadAll(rc)
	rc.Close()
	if _, err := c.ImageInspect(ctx, ref); err != nil {
		t.Fatalf("the imported image %s is not there: %v (import said %s)", ref, err, out)
	}
	return ref
}

// parents are the folders of a tar path "a/b/c/", outermost first, each
// with its trailing slash.
func parents(d string) []string {
	var out []string
	parts := strings.Split(strings.Trim(d, "/"), "/")
	for i := range parts {
		out = append(out, strings.Join(parts[:i+1], "/")+"/")
	}
	return out
}

// WaitFile waits (20 s at most) until the file at path holds want: what a
// container wrote into its mounted folder.
func WaitFile(t testing.TB, path, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q, %v; want it to hold %q", path, b, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
