package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `brabo project activate` is a client of the API: a maintainer activates
// execution once; again changes nothing; a developer is refused.
func TestProjectActivateThroughTheAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	root := t.TempDir()
	srv := startServe(t, t.TempDir())
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	dev := srv.must(t, "POST", "/v1/projects/"+project+"/members", admin, map[string]any{"name": "dev", "role": "developer"}, 201)["token"].(string)
	srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-web"}, 201)
	args := []string{"project", "activate", "--addr", srv.url, "--project", project}

	if r := runBraboAs(t, dev, args...); r.code != 1 || !strings.Contains(r.stderr, "forbidden_role") {
		t.Fatalf("a developer's activate:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(root, "permissions.json")); !os.IsNotExist(err) {
		t.Fatal("a refused activation wrote permissions.json")
	}
	r := runBraboAs(t, admin, args...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "execution activated: ") || !strings.Contains(r.stdout, "+ Terminal(git status)") ||
		!strings.Contains(r.stdout, "git_commit: auto_approve for 1 dev agent(s)") {
		t.Fatalf("activate:\n%s", r)
	}
	if data, err := os.ReadFile(filepath.Join(root, "permissions.json")); err != nil || !strings.Contains(string(data), "Terminal(go test)") {
		t.Fatalf("permissions.json after activate: %s %v", data, err)
	}
	if r := runBraboAs(t, admin, args...); r.code != 0 || !strings.Contains(r.stdout, "active already") {
		t.Fatalf("activate again:\n%s", r)
	}
	if r := runBraboAs(t, admin, "project", "activate", "--addr", srv.url); r.code != exitUsage || !strings.Contains(r.stderr, "--project is required") {
		t.Fatalf("activate without a project:\n%s", r)
	}
	if r := runBraboAs(t, admin, "project", "frobnicate"); r.code != exitUsage {
		t.Fatalf("an unknown subcommand:\n%s", r)
	}
}
