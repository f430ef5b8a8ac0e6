package egress

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo/internal/confine"
)

// BenchmarkDownload10MB is the proxy's cost (docs/PERFORMANCE.md): curl
// downloading 10 MB from a local server, started as a command is, once
// directly on the host (what --no-sandbox does) and once in a bwrap
// network namespace under the forwarder, through the proxy, with a
// literal Network(127.0.0.1:PORT) rule; and, to tell the sandbox's cost
// from the proxy's, in bwrap sharing the host's network without the
// proxy. Each includes starting the command; the sandboxed ones also
// bwrap, and the last the forwarder. BRABO_BENCH_MB sets another size.
//
//	go test ./internal/egress -run '^$' -bench Download10MB -benchtime 20x
func BenchmarkDownload10MB(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bwrap is needed")
	}
	size := 10 << 20
	if os.Getenv("BRABO_BENCH_MB") != "" {
		fmt.Sscan(os.Getenv("BRABO_BENCH_MB"), &size)
		size <<= 20
	}
	body := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	script := fmt.Sprintf(`n=$(curl -sS --max-time 30 -o /dev/null -w '%%{size_download}' %s/); [ "$n" = %d ]`, srv.URL, len(body))
	run := func(b *testing.B, name string, args ...string) {
		for b.Loop() {
			if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
		b.SetBytes(int64(len(body)))
	}
	// As brabo runs a command: under its Landlock launcher where the
	// kernel has Landlock, in --no-sandbox as in the sandbox (where the
	// forwarder confines it in-process).
	cmdline := []string{"bash", "-c", script}
	if _, err := confine.ABI(); err == nil {
		cmdline = append([]string{self}, confine.Spec{Write: []string{b.TempDir()}}.Args(cmdline...)...)
	}
	b.Run("no-sandbox", func(b *testing.B) { run(b, cmdline[0], cmdline[1:]...) })
	b.Run("bwrap-hostnet", func(b *testing.B) {
		// The sandbox's own start without the proxy: bwrap sharing the
		// host's network, curl connecting directly.
		hostnet := []string{"--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
			"--ro-bind", self, self, "--"}
		run(b, bwrap, append(hostnet, cmdline...)...)
	})
	b.Run("sandbox-proxy", func(b *testing.B) {
		r, err := newRulesFor(fmt.Sprintf("Network(127.0.0.1:%s)", port(b, srv.URL)))
		if err != nil {
			b.Fatal(err)
		}
		s, err := (&Proxy{Upstream: noUpstream}).Open(b.TempDir(), r)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		dir := filepath.Dir(s.Socket())
		args := []string{"--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
			"--bind", dir, dir, "--", self}
		run(b, bwrap, append(args, ForwarderArgs(s.Socket(), cmdline...)...)...)
		if len(s.Refusals()) != 0 {
			b.Fatalf("refused: %+v", s.Refusals())
		}
	})
}
