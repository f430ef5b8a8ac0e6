package e2e

import (
	"bytes"
	"encoding/json"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/confine/confinetest"
)

// confinedModule is a Go module whose test tries to write the data
// folder, ~/.gitconfig and a sibling project, and to read brabo's
// database, then writes what happened inside the project.
const confinedModule = `package escape

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func try(err error) string {
	if err != nil {
		return "denied"
	}
	return "ok"
}

func TestEscape(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "data=%s\n", try(os.WriteFile(DATA, []byte("pwned"), 0o644)))
	fmt.Fprintf(&b, "gitconfig=%s\n", try(os.WriteFile(GITCONFIG, []byte("[core]\n\tpager = evil\n"), 0o644)))
	fmt.Fprintf(&b, "sibling=%s\n", try(os.WriteFile(SIBLING, []byte("pwned"), 0o644)))
	_, err := os.ReadFile(DB)
	fmt.Fprintf(&b, "readdb=%s\n", try(err))
	fmt.Fprintf(&b, "inside=%s\n", try(os.WriteFile("inside.txt", []byte("fine"), 0o644)))
	if err := os.WriteFile("results.txt", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
`

// TestAutoApprovedGoTestIsConfined: through the real server, an
// auto-approved `go test` whose test writes the data folder, ~/.gitconfig
// and a sibling project fails each write (the files stay absent) while a
// write inside the project succeeds; /healthz names the Landlock ABI.
func TestAutoApprovedGoTestIsConfined(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server and the Go toolchain")
	}
	abi := confinetest.Require(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	data, home, proj, sibling := filepath.Join(base, "data"), filepath.Join(base, "home"), filepath.Join(base, "proj"), filepath.Join(base, "sibling")
	for _, d := range []string{data, home, proj, sibling} {
		os.MkdirAll(d, 0o755)
	}
	targets := []string{filepath.Join(data, "pwned.txt"), filepath.Join(home, ".gitconfig"), filepath.Join(sibling, "pwned.txt")}
	test := strings.NewReplacer("DATA", strconv.Quote(targets[0]), "GITCONFIG", strconv.Quote(targets[1]),
		"SIBLING", strconv.Quote(targets[2]), "DB", strconv.Quote(filepath.Join(data, "brabo.db"))).Replace(confinedModule)
	os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module escape\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "escape_test.go"), []byte(test), 0o644)
	os.WriteFile(filepath.Join(proj, "permissions.json"), []byte(`{"allow": ["Terminal(go test)"]}`), 0o644)

	srv := startServeEnv(t, data, []string{"HOME=" + home})
	admin := srv.token
	resp, err := http.Get(srv.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if health["status"] != "ok" || health["landlock"] != "abi "+strconv.Itoa(abi) {
		t.Errorf("/healthz = %v, want landlock abi %d", health, abi)
	}
	srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "other", "mode": "local", "root": sibling}, 201)
	p := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "escape", "mode": "local", "root": proj}, 201)
	agent := srv.must(t, "POST", "/v1/projects/"+p["id"].(string)+"/agents", admin, map[string]any{"name": "coder"}, 201)["token"].(string)

	body, _ := json.Marshal(map[string]any{"type": "terminal", "payload": map[string]any{"command": "go test ./...", "timeoutSec": 300}})
	req, _ := http.NewRequest("POST", srv.url+"/v1/projects/"+p["id"].(string)+"/actions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+agent)
	resp, err = (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var a map[string]any
	json.NewDecoder(resp.Body).Decode(&a)
	resp.Body.Close()
	if a["status"] != "executed" {
		t.Fatalf("go test: %v %v; log:\n%s", a["status"], a["result"], srv.logs)
	}
	results, err := os.ReadFile(filepath.Join(proj, "results.txt"))
	if err != nil {
		t.Fatalf("the test wrote no results inside the project: %v; result %v", err, a["result"])
	}
	want := []string{"data=denied", "gitconfig=denied", "sibling=denied", "readdb=denied", "inside=ok"}
	if sandbox.Available() == nil {
		// In the sandbox the data folder's path is only the way to the
		// project's cache, on the sandbox's own /tmp: a write there lands
		// in that tmpfs, gone with the action (the host file is checked
		// below).
		want = want[1:]
	}
	for _, want := range want {
		if !strings.Contains(string(results), want+"\n") {
			t.Errorf("results lack %s:\n%s", want, results)
		}
	}
	for _, f := range targets {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "inside.txt")); string(b) != "fine" {
		t.Errorf("the write inside the project did not happen: %q", b)
	}
}
