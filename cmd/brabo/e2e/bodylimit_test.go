package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	brabohttp "github.com/brabo-dev/brabo/http"
)

// TestTheServerTakesBodiesUpTo1MiB: `brabo serve`, with no option, reads a
// request body of exactly 1 MiB (brabohttp.DefaultMaxBody) and refuses
// one byte more with 413 too_large. The proposal is padded with leading
// white space, so the JSON value ends on the body's last byte: the server
// must read all of it to see the value.
func TestTheServerTakesBodiesUpTo1MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	if brabohttp.DefaultMaxBody != 1<<20 {
		t.Fatalf("DefaultMaxBody is %d; README says 1 MiB", brabohttp.DefaultMaxBody)
	}
	base := t.TempDir()
	srv := startServe(t, filepath.Join(base, "data"))
	p := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "big", "mode": "local", "root": t.TempDir()}, 201)
	agent := srv.must(t, "POST", "/v1/projects/"+p["id"].(string)+"/agents", srv.token, map[string]any{"name": "coder"}, 201)["token"].(string)
	value, _ := json.Marshal(map[string]any{"type": "terminal", "payload": map[string]any{"command": "echo hi"}})
	post := func(size int) (int, map[string]any) {
		t.Helper()
		body := append([]byte(strings.Repeat(" ", size-len(value))), value...)
		req, _ := http.NewRequest("POST", srv.url+"/v1/projects/"+p["id"].(string)+"/actions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+agent)
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out := map[string]any{}
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if st, out := post(1 << 20); st != 201 {
		t.Errorf("a body of exactly 1 MiB: %d %v, want 201", st, out)
	}
	if st, out := post(1<<20 + 1); st != 413 || out["code"] != "too_large" {
		t.Errorf("a body of 1 MiB and a byte: %d %v, want 413 too_large", st, out)
	}
}
