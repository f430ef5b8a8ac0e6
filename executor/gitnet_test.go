package executor_test

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
	"sync/atomic"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// TestHTTPPushGoesThroughTheProxyToItsHostOnly: with a sandbox and a
// Network, a git_push to an http remote (git http-backend behind
// net/http/cgi, asking for a password) runs in the sandbox, whose only
// way out is the step's proxy session: it lands, with the credential the
// user's own git configuration gives on the host, and while it runs the
// password is in no process's command line or environment. A remote that
// redirects the push to another host:port leads it nowhere: the session
// allows the named one only. pr_open reads the remote the same way.
func TestHTTPPushGoesThroughTheProxyToItsHostOnly(t *testing.T) {
	const user, password = "pusher", "s3cret-pw-4711"
	proxy := &egress.Proxy{}
	if os.Geteuid() == 0 {
		proxy.SocketUID, proxy.SocketGID = (&sandbox.Sandbox{}).User()
	}
	e := sandboxedWith(t, executor.Options{Network: &executor.Network{Proxy: proxy, Forwarder: os.Args[0]}})
	work, bare := repo(t)
	git(t, bare, "config", "http.receivepack", "true")
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string // where the password was seen in the process table
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Dir: filepath.Dir(bare),
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + os.Getenv("HOME")}}
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
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		backend.ServeHTTP(w, r)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer redirect.Close()

	// The user's own credential, in the user's git configuration on the
	// host: the store helper over a file of HOME.
	home := os.Getenv("HOME")
	store := filepath.Join(home, "push-credentials")
	writeFile(t, store, strings.Replace(srv.URL, "http://", "http://"+user+":"+password+"@", 1)+"\n")
	writeFile(t, filepath.Join(home, ".gitconfig"), "[credential]\n\thelper = store --file="+store+"\n")
	t.Cleanup(func() { os.Remove(store); os.Remove(filepath.Join(home, ".gitconfig")) })

	git(t, work, "remote", "add", "web", srv.URL+"/"+filepath.Base(bare))
	hash := commitOn(t, work, "feat/web", "w.txt", "w\n")
	res := mustSucceed(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat/web", Remote: "web"}))
	if got := git(t, bare, "rev-parse", "refs/heads/feat/web"); got != hash {
		t.Fatalf("the remote has %q, want %q", got, hash)
	}
	if strings.Contains(res.Output, password) {
		t.Errorf("the transcript holds the password:\n%s", res.Output)
	}
	mu.Lock()
	if len(seen) > 0 {
		t.Errorf("the password was in the process table during the push: %v", seen)
	}
	mu.Unlock()
	mustSucceed(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "feat/web", Base: "main", Remote: "web"}))

	git(t, work, "remote", "add", "moved", redirect.URL+"/"+filepath.Base(bare))
	commitOn(t, work, "feat/web", "v.txt", "v\n")
	res = mustRun(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "feat/web", Remote: "moved"}))
	if res.ExitCode == 0 || elsewhere.Load() != 0 {
		t.Errorf("a push redirected to another host:port reached it (%d requests): %+v", elsewhere.Load(), res)
	}
}
