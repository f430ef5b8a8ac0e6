package http_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
// it (Landlock only). The difference is what the sandbox adds to every
// command (docs/PERFORMANCE.md, "Issue 23").
func BenchmarkSandboxedTerminal(b *testing.B) {
	self, _ := os.Executable()
	b.Run("sandbox", func(b *testing.B) {
		if err := sandbox.Available(); err != nil {
			if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
				b.Fatal(err)
			}
			b.Skip("the sandbox is missing (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
		}
		benchTrue(b, &sandbox.Sandbox{Helper: self}, self)
	})
	b.Run("nosandbox", func(b *testing.B) { benchTrue(b, nil, self) })
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
	for i := 0; i < b.N; i++ {
		if a := call("/v1/projects/"+project+"/actions", agent, body, 201); a["status"] != "executed" {
			b.Fatalf("true: %v", a)
		}
	}
}
