package e2e

import (
	"github.com/brabo-dev/brabo/store/storetest"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/sandbox"
)

// The attacks on the sandbox, each from code the seeded, auto-approved
// `npm test` runs in a real `brabo serve`: the agent wrote package.json
// and attack.sh (as it may, with an allowed write), and no human clicks.

// needSandbox fails under BRABO_REQUIRE_SANDBOX (CI) when bubblewrap
// cannot run here, and skips otherwise.
func needSandbox(t *testing.T) {
	t.Helper()
	needBwrap(t)
	for _, tool := range []string{"npm", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
				t.Fatalf("BRABO_REQUIRE_SANDBOX is set and %s, which the attacks run, is missing: %v", tool, err)
			}
			t.Skip(tool, "is not installed (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
		}
	}
}

// attackScene is what the attacks aim at: a server's secrets and
// neighbours.
type attackScene struct {
	srv                       *server
	root, other, data, home   string
	log, engineSock, secretIn string
	agent, project            string
}

// newScene starts a server (env and args added) as the test's user, with
// a home holding hook tokens and an ssh key, a second project, a log file
// and an engine socket, and a project whose agent may run `npm test`.
func newScene(t *testing.T, env []string, args ...string) *attackScene {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	sc := layScene(t, base)
	sc.srv = startServeEnv(t, sc.data, append([]string{"HOME=" + sc.home, "OPENAI_API_KEY=sk-server-secret"}, env...), args...)
	sc.register(t)
	return sc
}

// layScene lays the scene's files out under base.
func layScene(t *testing.T, base string) *attackScene {
	t.Helper()
	os.MkdirAll(base, 0o755)
	sc := &attackScene{root: filepath.Join(base, "proj"), other: filepath.Join(base, "other"), data: filepath.Join(base, "data"),
		home: filepath.Join(base, "home"), log: filepath.Join(base, "log", "brabo.log"), engineSock: filepath.Join(base, "engine", "podman.sock")}
	for _, d := range []string{sc.root, sc.other, filepath.Join(sc.home, ".config", "brabo", "hooks"), filepath.Join(sc.home, ".ssh"),
		filepath.Dir(sc.log), filepath.Dir(sc.engineSock), filepath.Join(sc.root, ".git", "hooks"), filepath.Join(sc.root, ".claude"), filepath.Join(sc.root, ".husky")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(sc.home, ".config", "brabo", "hooks", "proj.json"): `{"token":"brb_hooktoken"}`,
		filepath.Join(sc.home, ".ssh", "id_ed25519"):                     "PRIVATE KEY",
		filepath.Join(sc.other, "notes.txt"):                             "other project's notes",
		sc.log:                                                           "level=INFO msg=serving",
		filepath.Join(sc.root, "permissions.json"):                       `{"allow": ["Terminal(npm test)"]}`,
		filepath.Join(sc.root, ".git", "HEAD"):                           "ref: refs/heads/main\n",
		filepath.Join(sc.root, ".git", "config"):                         "[core]\n",
		filepath.Join(sc.root, ".claude", "settings.json"):               "{}",
		filepath.Join(sc.root, "CLAUDE.md"):                              "instructions",
		filepath.Join(sc.root, "package.json"):                           `{"name":"x","version":"1.0.0","scripts":{"test":"bash attack.sh"}}`,
	}
	for p, body := range files {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("unix", sc.engineSock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sc.engineSock, 0o777)
	t.Cleanup(func() { ln.Close() })
	sc.secretIn = filepath.Join(sc.data, "brabo.db")
	os.Symlink(sc.data, filepath.Join(sc.root, "datalink"))
	os.Symlink(filepath.Join(sc.home, ".ssh"), filepath.Join(sc.root, "sshlink"))
	return sc
}

// register makes the two projects and the agent on the scene's server.
func (sc *attackScene) register(t *testing.T) {
	t.Helper()
	admin := sc.srv.token
	p := sc.srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "proj", "mode": "local", "root": sc.root}, 201)
	sc.project = p["id"].(string)
	sc.srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "other", "mode": "local", "root": sc.other}, 201)
	sc.agent = sc.srv.must(t, "POST", "/v1/projects/"+sc.project+"/agents", admin, map[string]any{"name": "coder"}, 201)["token"].(string)
}

// npmTest writes attack.sh and proposes `npm test` as the agent; it
// returns the action as the API answers.
func (sc *attackScene) npmTest(t *testing.T, script string) map[string]any {
	t.Helper()
	if err := os.WriteFile(filepath.Join(sc.root, "attack.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return sc.srv.must(t, "POST", "/v1/projects/"+sc.project+"/actions", sc.agent,
		map[string]any{"type": "terminal", "payload": map[string]any{"command": "npm test", "timeoutSec": 60}}, 201)
}

// output is the action's command output, after it was auto-approved.
func output(t *testing.T, a map[string]any) string {
	t.Helper()
	if a["status"] != "executed" && a["status"] != "failed" {
		t.Fatalf("npm test was not run at once: %v", a)
	}
	res, _ := a["result"].(map[string]any)
	out, _ := res["output"].(string)
	return out
}

// probe is a line of attack.sh: it prints NAME=ok when cmd succeeds and
// NAME=denied when it fails.
func probe(name, cmd string) string {
	return "echo " + name + "=$( (" + cmd + ") >/dev/null 2>&1 && echo ok || echo denied)\n"
}

// attacks runs every route of those attacks against sc and checks each is
// closed.
func attacks(t *testing.T, sc *attackScene) {
	t.Helper()
	pid := strconv.Itoa(sc.srv.cmd.Process.Pid)
	api := strings.TrimPrefix(sc.srv.url, "http://")
	host, port, _ := net.SplitHostPort(api)
	script := "" +
		probe("write", "echo ok > made.txt") +
		// The socket probes need python3 inside: a missing one would
		// read as a refused connection.
		probe("python", "python3 -c pass") +
		probe("environ", "grep -a OPENAI /proc/"+pid+"/environ") +
		probe("cmdline", "cat /proc/"+pid+"/cmdline") +
		probe("procself", "grep -a -q server-secret /proc/self/environ") +
		probe("shadow", "cat /etc/shadow") +
		probe("hooks", "cat "+sc.home+"/.config/brabo/hooks/proj.json") +
		probe("ssh", "cat "+sc.home+"/.ssh/id_ed25519") +
		// Only the chain of folders to the project's own cache
		// (<data>/caches/<project>) exists of the data folder.
		probe("data", "test \"$(ls -A "+sc.data+")\" != caches") +
		probe("db", "cat "+sc.secretIn) +
		probe("other", "cat "+sc.other+"/notes.txt") +
		probe("log", "cat "+sc.log) +
		probe("api", "exec 3<>/dev/tcp/"+host+"/"+port) +
		probe("pgtcp", "exec 3<>/dev/tcp/127.0.0.1/5432") +
		probe("pgsock", "python3 -c 'import socket;s=socket.socket(socket.AF_UNIX);s.connect(\"/var/run/postgresql/.s.PGSQL.5432\")'") +
		probe("engine", "python3 -c 'import socket;s=socket.socket(socket.AF_UNIX);s.connect(\""+sc.engineSock+"\")'") +
		probe("perms", "echo '{\"allow\":[\"Terminal(*)\"]}' > permissions.json") +
		probe("gitconfig", "echo '[core] fsmonitor=x' >> .git/config") +
		probe("hook", "echo evil > .git/hooks/pre-commit") +
		probe("claude", "echo x > .claude/settings.json") +
		probe("claudemd", "echo x > CLAUDE.md") +
		probe("datalink", "cat datalink/brabo.db") +
		probe("sshlink", "cat sshlink/id_ed25519") +
		"(setsid bash -c 'sleep 1; echo late > " + sc.root + "/late.txt' &)\n" +
		"(env -i setsid bash -c 'sleep 1; echo late > " + sc.root + "/permissions.json' &)\n"
	out := output(t, sc.npmTest(t, script))
	want := map[string]string{"write": "ok", "python": "ok", "environ": "denied", "cmdline": "denied", "procself": "denied", "shadow": "denied",
		"hooks": "denied", "ssh": "denied", "data": "denied", "db": "denied", "other": "denied", "log": "denied",
		"api": "denied", "pgtcp": "denied", "pgsock": "denied", "engine": "denied", "perms": "denied", "gitconfig": "denied",
		"hook": "denied", "claude": "denied", "claudemd": "denied", "datalink": "denied", "sshlink": "denied"}
	for k, v := range want {
		if !strings.Contains(out, k+"="+v+"\n") {
			t.Errorf("%s: want %s; output:\n%s", k, v, out)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(sc.root, "late.txt")); err == nil {
		t.Error("a setsid child outlived its action and wrote")
	}
	if b, _ := os.ReadFile(filepath.Join(sc.root, "permissions.json")); !strings.Contains(string(b), "npm test") {
		t.Errorf("permissions.json was rewritten: %s", b)
	}
}

// TestSandboxStopsTheAttacks: under the test's user (root in CI).
func TestSandboxStopsTheAttacks(t *testing.T) {
	needSandbox(t)
	attacks(t, newScene(t, nil))
}

// TestSandboxStopsTheAttacksOfAnUnprivilegedServer: the server runs as a
// user that is not root (the attacks' target then runs as the same uid
// as the command: only the namespaces hide it).
func TestSandboxStopsTheAttacksOfAnUnprivilegedServer(t *testing.T) {
	needSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("the test switches to another user: it runs as root") // not a missing part: CI runs as root
	}
	u := newUnprivileged(t, "brabo-sandbox-user-")
	sc := layScene(t, filepath.Join(u.base, "scene"))
	u.chown(t, filepath.Join(u.base, "scene"), u.tmp)
	sc.srv = u.serve(t, sc.data, "HOME="+sc.home, "OPENAI_API_KEY=sk-server-secret")
	sc.register(t)
	attacks(t, sc)
}

// needBwrap skips the test without the sandbox, and fails it instead
// under BRABO_REQUIRE_SANDBOX.
func needBwrap(t *testing.T) {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatalf("BRABO_REQUIRE_SANDBOX is set and the sandbox is missing: %v", err)
		}
		t.Skip("the sandbox is missing (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
	}
}

// unprivilegedUID is the server user of the tests that run brabo serve as
// a user other than root.
const unprivilegedUID = 4242

// unprivileged is a folder for a brabo serve run as unprivilegedUID: base
// (mode 0755, its symbolic links resolved, removed after the test) holds
// a copy of brabo the user can run, in bin, and tmp, the server's
// working, temp and default home folder.
type unprivileged struct{ base, bin, tmp string }

// newUnprivileged makes one, with prefix naming its folder; the test is
// skipped unless it runs as root (not a missing part: CI runs as root).
func newUnprivileged(t *testing.T, prefix string) unprivileged {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the test switches to another user: it runs as root") // not a missing part: CI runs as root
	}
	base, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	base, _ = filepath.EvalSymlinks(base)
	u := unprivileged{base: base, bin: filepath.Join(base, "bin", "brabo"), tmp: filepath.Join(base, "tmp")}
	for _, d := range []string{u.tmp, filepath.Dir(u.bin)} {
		os.MkdirAll(d, 0o755)
	}
	if b, err := os.ReadFile(braboBin); err != nil || os.WriteFile(u.bin, b, 0o755) != nil {
		t.Fatal("copying brabo:", err)
	}
	return u
}

// chown gives paths (recursively) to the server's user.
func (u unprivileged) chown(t *testing.T, paths ...string) {
	t.Helper()
	id := strconv.Itoa(unprivilegedUID)
	if out, err := exec.Command("chown", append([]string{"-R", id + ":" + id}, paths...)...).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
}

// serve starts the copy of brabo serve as the server's user, on data, in
// tmp, with env (HOME=…, say) over tmp's defaults.
func (u unprivileged) serve(t *testing.T, data string, env ...string) *server {
	t.Helper()
	cmd := exec.Command(u.bin, "serve", "--addr", "127.0.0.1:0", "--log-level", "warn", "--data", data)
	cmd.Dir = u.tmp
	cmd.Env = append(append(os.Environ(), "BRABO_DB=", "TMPDIR="+u.tmp, "HOME="+u.tmp, "XDG_RUNTIME_DIR="), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivilegedUID, Gid: unprivilegedUID}}
	return runServeCmd(t, cmd)
}

// noBwrapPath is a PATH holding every program of the system's folders but
// bubblewrap: a machine without it.
func noBwrapPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, src := range filepath.SplitList(os.Getenv("PATH")) {
		ents, _ := os.ReadDir(src)
		for _, e := range ents {
			if e.Name() == "bwrap" {
				continue
			}
			os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())) // the first one wins
		}
	}
	return dir
}

// TestWithoutBwrapTerminalActionsAsk: on a machine without bubblewrap the
// seeded npm test is not auto-approved: it waits for a human, and its
// reason (the card's sentence) says why; /healthz says so too.
func TestWithoutBwrapTerminalActionsAsk(t *testing.T) {
	sc := newScene(t, []string{"PATH=" + noBwrapPath(t)})
	a := sc.npmTest(t, "echo ran > ran.txt\n")
	if a["status"] != "pending" || !strings.Contains(a["reason"].(string), "runs unsandboxed: bubblewrap is not available") {
		t.Fatalf("without bwrap npm test = %v, %v; want pending, saying why", a["status"], a["reason"])
	}
	if _, err := os.Stat(filepath.Join(sc.root, "ran.txt")); err == nil {
		t.Fatal("the command ran without a human")
	}
	if h := health(t, sc.srv); h["sandbox"] != "runs unsandboxed: bubblewrap is not available" {
		t.Errorf("/healthz = %v", h)
	}
	if !strings.Contains(strings.Join(sc.srv.out, "\n"), "Sandbox: unavailable") {
		t.Errorf("the start did not say the sandbox is missing:\n%s", strings.Join(sc.srv.out, "\n"))
	}
	// Approved by a human, it runs (unsandboxed, as the card said).
	got := sc.srv.must(t, "POST", "/v1/actions/"+a["id"].(string)+"/approve", sc.srv.token, nil, 200)
	if b, _ := os.ReadFile(filepath.Join(sc.root, "ran.txt")); string(b) != "ran\n" {
		t.Errorf("the approved command did not run: %v", got)
	}
}

// TestNoSandboxRunsAndSaysSo: --no-sandbox runs the seeded npm test at
// once, outside the sandbox, and says so at start, in /healthz and in the
// action's reason.
func TestNoSandboxRunsAndSaysSo(t *testing.T) {
	sc := newScene(t, nil, "--no-sandbox")
	a := sc.npmTest(t, "cat "+sc.home+"/.ssh/id_ed25519\n")
	if a["status"] != "executed" || !strings.Contains(a["reason"].(string), "runs unsandboxed: brabo serve --no-sandbox") {
		t.Fatalf("--no-sandbox npm test = %v, %v", a["status"], a["reason"])
	}
	if out := output(t, a); !strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("unsandboxed, the command reads what brabo's user reads; output:\n%s", out)
	}
	if h := health(t, sc.srv); h["sandbox"] != "runs unsandboxed: brabo serve --no-sandbox" {
		t.Errorf("/healthz = %v", h)
	}
	if !strings.Contains(strings.Join(sc.srv.out, "\n"), "Sandbox: OFF (--no-sandbox)") {
		t.Errorf("the start did not say the sandbox is off:\n%s", strings.Join(sc.srv.out, "\n"))
	}
}

// TestSandboxedHealthAndDBFile: a sandboxed server says so in /healthz,
// and --db-file reads the database URL from a file (a missing or empty
// one is refused, naming the flag).
func TestSandboxedHealthAndDBFile(t *testing.T) {
	needSandbox(t)
	sc := newScene(t, nil)
	if h := health(t, sc.srv); h["sandbox"] != "bubblewrap" {
		t.Errorf("/healthz = %v", h)
	}
	empty := filepath.Join(t.TempDir(), "db-url")
	os.WriteFile(empty, []byte("\n"), 0o600)
	for _, f := range []string{empty, filepath.Join(t.TempDir(), "missing")} {
		r := runBounded(t, "migrate", "--data", t.TempDir(), "--db-file", f)
		if r.code == 0 || !strings.Contains(r.stderr, "--db-file") {
			t.Errorf("--db-file %s: %+v", f, r)
		}
	}
	pg := os.Getenv("BRABO_TEST_POSTGRES")
	if pg == "" {
		return
	}
	url := filepath.Join(t.TempDir(), "db-url")
	os.WriteFile(url, []byte(pg+"\n"), 0o600)
	if r := runBounded(t, "migrate", "--data", t.TempDir(), "--db-file", url); r.code != 0 {
		t.Errorf("--db-file with a PostgreSQL URL: %+v", r)
	}
}

// health reads /healthz.
func health(t *testing.T, srv *server) map[string]any {
	t.Helper()
	status, h, err := srv.call("GET", "/healthz", "", nil)
	if err != nil || status != 200 {
		t.Fatalf("/healthz: %d %v", status, err)
	}
	return h
}

// TestSandboxStopsTheAttacksPostgres: the same attacks against a server
// on PostgreSQL whose URL (with its password, in production) comes from
// --db-file, off the command line; the attacks also look for the URL in
// the server's command line and for the file itself.
func TestSandboxStopsTheAttacksPostgres(t *testing.T) {
	needSandbox(t)
	db := storetest.PostgresURL(t)
	urlFile := filepath.Join(t.TempDir(), "db-url")
	if err := os.WriteFile(urlFile, []byte(db+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := newScene(t, nil, "--db-file", urlFile)
	if b, _ := os.ReadFile("/proc/" + strconv.Itoa(sc.srv.cmd.Process.Pid) + "/cmdline"); strings.Contains(string(b), "postgres://") {
		t.Errorf("the database URL is on the server's command line: %q", b)
	}
	attacks(t, sc)
	out := output(t, sc.npmTest(t, probe("urlfile", "cat "+urlFile)))
	if !strings.Contains(out, "urlfile=denied\n") {
		t.Errorf("the database URL file is readable:\n%s", out)
	}
}
