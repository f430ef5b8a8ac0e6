package egress

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/confine"
)

// BenchmarkDownload10MB is the proxy's cost (docs/PERFORMANCE.md): curl
// downloading 10 MB from a local server, started as brabo starts a
// command (under its Landlock launcher where the kernel has Landlock):
//
//   - no-sandbox: directly on the host, what --no-sandbox does;
//   - bwrap-hostnet: in bwrap sharing the host's network, without the
//     proxy (the sandbox's own start, for comparison);
//   - sandbox-proxy: in a bwrap network namespace under the forwarder
//     (which confines in-process), through a proxy session with a
//     literal Network(127.0.0.1:PORT) rule.
//
// Each iteration runs the three in turn, so that a machine shared with
// others slows them alike; the medians (ms) and the ratio sandbox-proxy /
// no-sandbox are reported. BRABO_BENCH_MB sets another size.
//
//	go test ./internal/egress -run '^$' -bench Download10MB -benchtime 30x
func BenchmarkDownload10MB(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bwrap is needed (BRABO_REQUIRE_SANDBOX makes the tests fail without it; a benchmark only skips)")
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
	cmdline := []string{"bash", "-c", script}
	if _, err := confine.ABI(); err == nil {
		cmdline = append([]string{self}, confine.Spec{Write: []string{b.TempDir()}}.Args(cmdline...)...)
	}
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
	base := []string{"--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	variants := []struct {
		name string
		argv []string
	}{
		{"no-sandbox", cmdline},
		{"bwrap-hostnet", append(append([]string{bwrap}, base...), append([]string{"--"}, cmdline...)...)},
		{"sandbox-proxy", append(append([]string{bwrap, "--unshare-net"}, base...),
			append([]string{"--bind", dir, dir, "--", self}, ForwarderArgs(s.Socket(), cmdline...)...)...)},
	}
	took := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			start := time.Now()
			if out, err := exec.Command(v.argv[0], v.argv[1:]...).CombinedOutput(); err != nil {
				b.Fatalf("%s: %v: %s", v.name, err, out)
			}
			took[i] = append(took[i], time.Since(start))
		}
	}
	if len(s.Refusals()) != 0 {
		b.Fatalf("refused: %+v", s.Refusals())
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	for i, v := range variants {
		b.ReportMetric(median(took[i]), v.name+"-ms")
	}
	b.ReportMetric(median(took[2])/median(took[0]), "ratio")
	b.ReportMetric(0, "ns/op")
}
