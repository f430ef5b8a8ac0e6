package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/sandbox"
)

// The attacks of issue 23, each from code the seeded, auto-approved
// `npm test` runs in a real `brabo serve`: the agent wrote package.json
// and attack.sh (as it may, with an allowed write), and no human clicks.

// needSandbox fails under BRABO_REQUIRE_SANDBOX (CI) when bubblewrap
// cannot run here, and skips otherwise.
func needSandbox(t *testing.T) {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatalf("BRABO_REQUIRE_SANDBOX is set and the sandbox is missing: %v", err)
		}
		t.Skip(err)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed:", err)
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
	sc.srv = startServeEnv(t, sc.data, append([]string{"HOME=" + sc.home, "OPENAI_API_KEY=sk-server-secret"}, env...), args...)
	admin := sc.srv.token
	p := sc.srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "proj", "mode": "local", "root": sc.root}, 201)
	sc.project = p["id"].(string)
	sc.srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "other", "mode": "local", "root": sc.other}, 201)
	sc.agent = sc.srv.must(t, "POST", "/v1/projects/"+sc.project+"/agents", admin, map[string]any{"name": "coder"}, 201)["token"].(string)
	return sc
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

// attacks runs every route of issue 23 against sc and checks each is
// closed.
func attacks(t *testing.T, sc *attackScene) {
	t.Helper()
	pid := strconv.Itoa(sc.srv.cmd.Process.Pid)
	api := strings.TrimPrefix(sc.srv.url, "http://")
	host, port, _ := net.SplitHostPort(api)
	script := "" +
		probe("write", "echo ok > made.txt") +
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
	want := map[string]string{"write": "ok", "environ": "denied", "cmdline": "denied", "procself": "denied", "shadow": "denied",
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
