package e2e

import (
	"github.com/brabo-dev/brabo/internal/proctest"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestHTTPPushRunsInTheSandboxOfTheServer (issue 23 item 1): an approved
// git_push to an http remote (git http-backend behind net/http/cgi,
// asking for a password) through a real `brabo serve` lands from the
// sandbox, through the egress proxy, with the credential of the server
// user's own git configuration (a store helper in its HOME): while it
// runs, the password is in no process's command line or environment, and
// not in the result. The project's pre-push hook (gitHooks on), which
// would read the credential in the push's sandbox, does not run.
func TestHTTPPushRunsInTheSandboxOfTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	needBwrap(t)
	const user, password = "pusher", "s3cret-pw-0815"
	base := t.TempDir()
	root, bare, home := filepath.Join(base, "shop"), filepath.Join(base, "remote.git"), filepath.Join(base, "home")
	os.MkdirAll(root, 0o755)
	os.MkdirAll(home, 0o755)
	gitIn := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn(base, "init", "-q", "--bare", "--initial-branch=main", bare)
	gitIn(bare, "config", "http.receivepack", "true")
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Dir: base,
		Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + home}}
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		seen = append(seen, proctest.Holding(password)...)
		mu.Unlock()
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()
	store := filepath.Join(home, "credentials")
	os.WriteFile(store, []byte(strings.Replace(srv.URL, "http://", "http://"+user+":"+password+"@", 1)+"\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[credential]\n\thelper = store --file="+store+"\n"), 0o644)

	gitIn(root, "init", "-q", "--initial-branch=main")
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"ask": ["GitPush()"]}`), 0o644)
	gitIn(root, "add", "-A")
	gitIn(root, "commit", "-q", "-m", "initial")
	gitIn(root, "remote", "add", "origin", srv.URL+"/remote.git")
	hash := gitIn(root, "rev-parse", "HEAD")
	report := filepath.Join(root, "hook-report")
	os.WriteFile(filepath.Join(root, ".git", "hooks", "pre-push"), []byte("#!/bin/sh\ncat /run/brabo/git-credential >> '"+report+"' 2>&1; echo ran >> '"+report+"'\n"), 0o755)

	s := startServeEnv(t, t.TempDir(), []string{"HOME=" + home, "GIT_CONFIG_GLOBAL="})
	project := s.must(t, "POST", "/v1/projects", s.token, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	agent := s.must(t, "POST", "/v1/projects/"+project+"/agents", s.token, map[string]any{"name": "coder"}, 201)["token"].(string)
	s.must(t, "PATCH", "/v1/projects/"+project, s.token, map[string]any{"gitHooks": true}, 200)
	a := s.must(t, "POST", "/v1/projects/"+project+"/actions", agent, map[string]any{"type": "git_push", "payload": map[string]any{"branch": "main"}}, 201)
	done := s.must(t, "POST", "/v1/actions/"+a["id"].(string)+"/approve", s.token, nil, 200)["action"].(map[string]any)
	if done["status"] != "executed" {
		t.Fatalf("the git_push: %v %v", done["status"], done["result"])
	}
	if got := gitIn(bare, "rev-parse", "refs/heads/main"); got != hash {
		t.Errorf("the remote's main is %s, want %s", got, hash)
	}
	if res, _ := done["result"].(map[string]any); strings.Contains(res["output"].(string), password) ||
		!strings.Contains(res["output"].(string), "/run/brabo/git-credential") {
		t.Errorf("the result's transcript: %v", res["output"])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) > 0 {
		t.Errorf("the password was in the process table during the push: %v", seen)
	}
	if b, err := os.ReadFile(report); err == nil {
		t.Errorf("the pre-push hook ran in the push's sandbox, with the credential in reach:\n%s", b)
	}
}
