package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
	brabohttp "github.com/brabo-dev/brabo/http"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
	"github.com/brabo-dev/brabo/store/storetest"
)

// eachStore runs fn once per real store: SQLite on a file always, and
// PostgreSQL when BRABO_TEST_POSTGRES names a server (.ci/run sets it).
func eachStore(t *testing.T, fn func(t *testing.T, e *env)) { eachStoreWith(t, nil, fn) }

// eachStoreWith is eachStore with the process's configuration tuned.
func eachStoreWith(t *testing.T, tune func(*app.Config), fn func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
		if err != nil {
			t.Fatal(err)
		}
		fn(t, newEnvWith(t, s, tune))
	})
	t.Run("postgres", func(t *testing.T) {
		url := postgresURL(t)
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		fn(t, newEnvWith(t, s, func(c *app.Config) {
			c.DB = url
			if tune != nil {
				tune(c)
			}
		}))
	})
}

// unsandboxed is the tune of brabo serve --no-sandbox: the commands run
// on the host, and brabo's integrity check of the protected files after
// each is what stands between an allowed runner and them.
func unsandboxed(c *app.Config) { c.NoSandbox = true }

func postgresURL(t testing.TB) string { return storetest.PostgresURL(t) }

// env is a running brabo on a real store, opened by the one wiring
// (cmd/brabo/internal/app, as brabo serve opens it: the sandbox, the
// egress rules, the notifier, the protection, the instance), with a local
// project in a real git repository (its origin a real bare repository),
// an admin who owns it, a maintainer, a developer and an agent.
type env struct {
	t          *testing.T
	app        *app.App
	data       string // the data folder
	store      brabo.Store
	svc        *pipeline.Service
	api        *brabohttp.Server
	srv        *served
	root       string
	remote     string
	project    string
	admin      string // token; owner of the project
	maintainer string
	developer  string
	agent      string // token of agent "coder"
	agentID    string
}

// envOf is the env of a started brabo, before any project or member.
func envOf(t *testing.T, a *app.App) *env {
	return &env{t: t, app: a, data: a.Config.Data, store: a.Store, svc: a.Pipeline, api: a.HTTP,
		srv: &served{URL: a.URL(), close: func() { a.Shutdown("closed by the test") }}}
}

// onDB is the tune of an env on the PostgreSQL database at url.
func onDB(url string) func(*app.Config) { return func(c *app.Config) { c.DB = url } }

// served is where an env's API listens.
type served struct {
	URL   string
	close func()
}

// Close stops the env's server (the env's cleanup does it too).
func (s *served) Close() { s.close() }

func newEnv(t *testing.T, s brabo.Store) *env {
	t.Helper()
	return newEnvWith(t, s, nil)
}

// newEnvWith is newEnv with the process's configuration tuned first.
// s is the store the process uses (already open; the env closes it); a
// PostgreSQL store's tune names its URL (onDB).
func newEnvWith(t *testing.T, s brabo.Store, tune func(*app.Config)) *env {
	t.Helper()
	ctx := context.Background()
	cfg := app.Config{Name: "brabo", Data: t.TempDir(), Store: s, Addr: "127.0.0.1:0", AdminName: "admin",
		Env: procenv.Filter(os.Environ(), nil),
		// The test process runs git and brabo's binaries itself, outside
		// procs.Start: as a subreaper it would take their exit status.
		NotSubreaper: true}
	if tune != nil {
		tune(&cfg)
	}
	a, err := app.Open(ctx, cfg)
	if err != nil {
		s.Close()
		t.Fatalf("opening brabo: %v", err)
	}
	t.Cleanup(func() { a.Shutdown("the test ended"); a.Close() })
	// The API's knobs the tests turn, as before the server starts: a small
	// body limit, and a heartbeat and poll a test need not wait long for.
	a.HTTP.MaxBody, a.HTTP.Heartbeat, a.HTTP.Poll = 64<<10, time.Second, 200*time.Millisecond
	if err := a.Start(ctx); err != nil {
		t.Fatalf("starting brabo: %v", err)
	}
	e := envOf(t, a)
	if a.AdminToken == "" {
		t.Fatal("brabo made no first admin")
	}
	e.admin = a.AdminToken
	e.root, e.remote = gitProjectWithOrigin(t)
	p := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "shop", "name": "Shop", "mode": "local", "root": e.root}, 201)
	e.project = p["id"].(string)
	e.maintainer = e.ok("POST", e.pp("/members"), e.admin, map[string]any{"name": "mia", "role": "maintainer"}, 201)["token"].(string)
	e.developer = e.ok("POST", e.pp("/members"), e.admin, map[string]any{"name": "dev", "role": "developer"}, 201)["token"].(string)
	ag := e.ok("POST", e.pp("/agents"), e.admin, map[string]any{"name": "coder"}, 201)
	e.agent = ag["token"].(string)
	e.agentID = ag["agent"].(map[string]any)["id"].(string)
	return e
}

// pp is a path under the project.
func (e *env) pp(suffix string) string { return "/v1/projects/" + e.project + suffix }

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitProject makes a project folder that is a git repository with one
// commit on main, pushed to a bare origin.
func gitProjectWithOrigin(t *testing.T) (root, remote string) {
	base := t.TempDir()
	root, remote = filepath.Join(base, "shop"), filepath.Join(base, "origin.git")
	run(t, base, "git", "init", "--quiet", "--bare", "--initial-branch=main", remote)
	run(t, base, "git", "init", "--quiet", "--initial-branch=main", root)
	run(t, root, "git", "config", "user.name", "Test")
	run(t, root, "git", "config", "user.email", "test@example.com")
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "notes.txt"), []byte("hello\n"), 0o644)
	run(t, root, "git", "add", "-A")
	run(t, root, "git", "commit", "--quiet", "-m", "initial")
	run(t, root, "git", "remote", "add", "origin", remote)
	run(t, root, "git", "push", "--quiet", "origin", "main")
	return root, remote
}

// call sends a request with a JSON body (or raw bytes) and decodes the
// answer into a map. An approve without a body names the revision of the
// card as the caller reads it first (GET /v1/actions/{id}), as a human
// approves the card they saw; callBare sends the request as it is.
func (e *env) call(method, path, token string, body any) (int, map[string]any) {
	e.t.Helper()
	if m := approvePath.FindStringSubmatch(path); m != nil && method == "POST" && body == nil {
		if st, a := e.callBare("GET", "/v1/actions/"+m[1], token, nil); st == 200 {
			if rev, _ := a["revision"].(string); rev != "" {
				body = map[string]any{"revision": rev}
			}
		}
	}
	return e.callBare(method, path, token, body)
}

// callBare is call without the approve's revision.
func (e *env) callBare(method, path, token string, body any) (int, map[string]any) {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		e.t.Fatalf("%s %s: answer is not JSON: %s", method, path, raw)
	}
	return resp.StatusCode, out
}

// ok is call that fails the test unless the status is want.
func (e *env) ok(method, path, token string, body any, want int) map[string]any {
	e.t.Helper()
	status, out := e.call(method, path, token, body)
	if status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %v", method, path, status, want, out)
	}
	return out
}

// refused checks a refusal's status and code.
func (e *env) refused(method, path, token string, body any, status int, code string) map[string]any {
	e.t.Helper()
	got, out := e.call(method, path, token, body)
	if got != status || out["code"] != code {
		e.t.Fatalf("%s %s: got %d %v, want %d %s", method, path, got, out, status, code)
	}
	if msg, _ := out["message"].(string); msg == "" {
		e.t.Fatalf("%s %s: a refusal without a message: %v", method, path, out)
	}
	return out
}

func (e *env) propose(token, typ string, payload map[string]any) map[string]any {
	e.t.Helper()
	return e.ok("POST", e.pp("/actions"), token, map[string]any{"type": typ, "payload": payload}, 201)
}

func (e *env) terminal(command string) map[string]any {
	e.t.Helper()
	return e.propose(e.agent, "terminal", map[string]any{"command": command})
}

func (e *env) setPermissions(content string) {
	e.t.Helper()
	e.ok("PUT", e.pp("/permissions"), e.maintainer, content, 200)
}

// events returns the project's log.
func (e *env) events() []brabo.Event {
	e.t.Helper()
	var out []brabo.Event
	if err := e.store.View(context.Background(), func(tx brabo.Tx) error {
		var err error
		out, err = tx.Events(context.Background(), e.project, 0, 1000)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// eventsOf returns the events of one action, of one type ("" for all).
func (e *env) eventsOf(actionID, typ string) []brabo.Event {
	var out []brabo.Event
	for _, ev := range e.events() {
		if ev.ActionID == actionID && (typ == "" || ev.Type == typ) {
			out = append(out, ev)
		}
	}
	return out
}

func payloadOf(ev brabo.Event) map[string]any {
	m := map[string]any{}
	json.Unmarshal(ev.Payload, &m)
	return m
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}
