package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkServeDownload10MB is the egress proxy's cost through a real
// brabo serve (docs/PERFORMANCE.md): an agent's auto-approved
// `curl` of 10 MB from a local server, proposed and answered over the
// API, on a sandboxed server (through the proxy, with a literal
// Network(127.0.0.1:PORT) rule) and on a --no-sandbox one, in turn each
// iteration; the medians (ms) and their ratio are reported.
//
//	go test ./cmd/brabo -run '^$' -bench ServeDownload10MB -benchtime 20x
func BenchmarkServeDownload10MB(b *testing.B) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16)
	dl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer dl.Close()
	port := strings.TrimPrefix(dl.URL, "http://127.0.0.1:")
	cmd := fmt.Sprintf("curl -sS --max-time 30 -o /dev/null -w %%{size_download} %s/", dl.URL)
	type world struct {
		name           string
		srv            *server
		project, agent string
	}
	start := func(name string, extra ...string) world {
		srv := startServe(b, b.TempDir(), extra...)
		root := b.TempDir()
		os.WriteFile(filepath.Join(root, "permissions.json"),
			[]byte(`{"allow": ["Terminal(curl)", "Network(127.0.0.1:`+port+`)"]}`), 0o644)
		p := srv.must(b, "POST", "/v1/projects", srv.token, map[string]any{"slug": "bench", "mode": "local", "root": root}, 201)
		ag := srv.must(b, "POST", "/v1/projects/"+p["id"].(string)+"/agents", srv.token, map[string]any{"name": "coder"}, 201)
		return world{name, srv, p["id"].(string), ag["token"].(string)}
	}
	worlds := []world{start("sandbox-proxy"), start("no-sandbox", "--no-sandbox")}
	took := make([][]time.Duration, len(worlds))
	for b.Loop() {
		for i, w := range worlds {
			t0 := time.Now()
			a := w.srv.must(b, "POST", "/v1/projects/"+w.project+"/actions", w.agent,
				map[string]any{"type": "terminal", "payload": map[string]any{"command": cmd}}, 201)
			took[i] = append(took[i], time.Since(t0))
			if a["status"] != "executed" || netOutput(a) != fmt.Sprint(len(body)) {
				b.Fatalf("%s: %v", w.name, a)
			}
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	for i, w := range worlds {
		b.ReportMetric(median(took[i]), w.name+"-ms")
	}
	b.ReportMetric(median(took[0])/median(took[1]), "ratio")
	b.ReportMetric(0, "ns/op")
}
