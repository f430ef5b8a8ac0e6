package http_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/executor"
	brabohttp "github.com/brabo-dev/brabo/http"
	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// TestMain lets the test binary be the sandbox's root helper, the
// Landlock launcher and the egress forwarder, as brabo's main does (BenchmarkSandboxedTerminal).
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		sandbox.Main(os.Args)
	}
	if confine.IsLauncher(os.Args) {
		confine.Main(os.Args)
	}
	if egress.IsForwarder(os.Args) {
		egress.Main(os.Args)
	}
	os.Exit(m.Run())
}

// BenchmarkSandboxedTerminal measures an auto-approved `true` over HTTP,
// one proposal at a time, run by the real executor: in the sandbox
// (bubblewrap, the root helper under root, Landlock inside) and without
// it (Landlock only), each with brabo-sandbox as the helper and launcher,
// as brabo serve runs them (sandbox, nosandbox), and with a big binary,
// this test binary, as brabo did before brabo-sandbox (sandbox-big,
// nosandbox-big). The difference is what the sandbox adds to every
// command. Beside them, the like-for-like floor of the same run: bwrap
// alone, with the sandbox's namespaces and root, running `true` (bwrap),
// and `true` alone (host) (docs/PERFORMANCE.md, "The sandbox's cost per
// command").
func BenchmarkSandboxedTerminal(b *testing.B) {
	self, _ := os.Executable()
	slim := filepath.Join(b.TempDir(), "brabo-sandbox")
	if out, err := exec.Command("go", "build", "-o", slim, "github.com/brabo-dev/brabo/cmd/brabo-sandbox").CombinedOutput(); err != nil {
		b.Fatalf("go build brabo-sandbox: %v\n%s", err, out)
	}
	need := func(b *testing.B) {
		if err := sandbox.Available(); err != nil {
			if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
				b.Fatal(err)
			}
			b.Skip("the sandbox is missing (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
		}
	}
	b.Run("sandbox", func(b *testing.B) { need(b); benchTrue(b, &sandbox.Sandbox{Helper: slim}, slim) })
	b.Run("nosandbox", func(b *testing.B) { benchTrue(b, nil, slim) })
	b.Run("sandbox-big", func(b *testing.B) { need(b); benchTrue(b, &sandbox.Sandbox{Helper: self}, self) })
	b.Run("nosandbox-big", func(b *testing.B) { benchTrue(b, nil, self) })
	b.Run("bwrap", func(b *testing.B) {
		need(b)
		args, err := sandbox.Spec{Root: b.TempDir()}.Args("true")
		if err != nil {
			b.Fatal(err)
		}
		benchExec(b, "bwrap", args...)
	})
	b.Run("host", func(b *testing.B) { benchExec(b, "true") })
}

// benchExec runs name args b.N times, one at a time.
func benchExec(b *testing.B, name string, args ...string) {
	defer cpuPerOp(b)()
	for i := 0; i < b.N; i++ {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
}

// cpuPerOp reports, when the returned function is called, the CPU time
// (user and system) this process and its waited-for children spent per
// operation since cpuPerOp: on a machine shared with other work the wall
// time swings with the load, the work done much less.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var self, kids syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
		d := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
		return d(self.Utime) + d(self.Stime) + d(kids.Utime) + d(kids.Stime)
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64((cpu()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

func benchTrue(b *testing.B, sb *sandbox.Sandbox, launcher string) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "brabo.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ex := executor.New(executor.Options{Sandbox: sb,
		Confine: &executor.Confinement{Launcher: launcher, CacheRoot: b.TempDir()}})
	svc := &pipeline.Service{Store: s, Executor: ex, WorkspacesRoot: b.TempDir(), Log: quiet}
	api := (&brabohttp.Server{DirProbe: probeDir, Log: quiet}).Use(svc)
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	admin, err := svc.Bootstrap(ctx, "admin")
	if err != nil {
		b.Fatal(err)
	}
	call := func(path, token, body string, want int) map[string]any {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out := map[string]any{}
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			b.Fatalf("%s: %d %v", path, resp.StatusCode, out)
		}
		return out
	}
	root := b.TempDir()
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow":["Terminal(true)"]}`), 0o644)
	project := call("/v1/projects", admin, `{"slug":"bench","mode":"local","root":"`+root+`"}`, 201)["id"].(string)
	agent := call("/v1/projects/"+project+"/agents", admin, `{"name":"coder"}`, 201)["token"].(string)
	body := `{"type":"terminal","payload":{"command":"true"}}`
	if a := call("/v1/projects/"+project+"/actions", agent, body, 201); a["status"] != "executed" {
		b.Fatalf("true: %v", a)
	}
	b.ResetTimer()
	defer cpuPerOp(b)()
	for i := 0; i < b.N; i++ {
		if a := call("/v1/projects/"+project+"/actions", agent, body, 201); a["status"] != "executed" {
			b.Fatalf("true: %v", a)
		}
	}
}
