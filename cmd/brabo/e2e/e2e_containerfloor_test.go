package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/docker"
	"github.com/brabo-dev/brabo/docker/dockertest"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// ps is the process list of a container, read by an exec of its own.
func ps(t *testing.T, eng *docker.Engine, name string) string {
	t.Helper()
	var out strings.Builder
	if _, err := eng.Exec(context.Background(), brabo.ContainerExec{Container: name, Cmd: []string{"ps", "-o", "pid,args"}, Output: &out}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestContainerFloorRunsInTheContainer drives a container project through
// the real server and a real Podman: the floor's commands run in the
// container (its hostname, user, root folder; no host file outside the
// project; permissions.json and .git read-only; no network; the command's
// exit code and output; a timeout that leaves nothing inside; the cwd
// translated); a container gone by execution fails container_gone and
// never runs on the host; a container that does not match brabo's
// settings gets no floor and is recreated by the next start.
func TestContainerFloorRunsInTheContainer(t *testing.T) {
	host := dockertest.Podman(t)
	image := dockertest.BashImage(t, host)
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	eng, err := docker.New(host)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	eng.StopTimeout = time.Second
	e.svc.Containers = eng
	b := e.containerProject("box")
	// The project folder before its container: a repository, an ask rule
	// for touch, a sub folder.
	os.MkdirAll(filepath.Join(b.folder, "sub"), 0o755)
	if out, err := exec.Command("git", "init", "--quiet", b.folder).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	perms := `{"ask": ["Terminal(touch)"]}`
	os.WriteFile(filepath.Join(b.folder, "permissions.json"), []byte(perms), 0o644)
	secret := filepath.Join(t.TempDir(), "host-secret.txt")
	os.WriteFile(secret, []byte("the host's secret\n"), 0o644)

	start := func() string {
		t.Helper()
		a := e.proposeIn(b.id, b.agent, "container_start", map[string]any{"image": image, "args": []string{"sleep", "3600"}})
		if st := e.decide(a["id"].(string), b.maint); st["status"] != "executed" {
			t.Fatalf("container_start: %v", st["result"])
		}
		return str(e.containerOf(b.maint, b.id), "containerId")
	}
	id := start()
	name := e.containerOf(b.maint, b.id)["name"].(string)

	term := func(payload map[string]any) map[string]any {
		t.Helper()
		return e.proposeIn(b.id, b.agent, "terminal", payload)
	}
	floorRun := func(cmd string) map[string]any {
		t.Helper()
		a := term(map[string]any{"command": cmd})
		if a["status"] == "pending" || a["status"] == "denied" || !strings.HasPrefix(a["reason"].(string), "container floor: "+name) {
			t.Fatalf("%s: %v %v, want auto-approved by the container floor", cmd, a["status"], a["reason"])
		}
		if str(a, "decision", "container") != name || str(a, "result", "detail", "container") != name {
			t.Fatalf("%s did not run in %s: %v %v", cmd, name, a["decision"], a["result"])
		}
		return a
	}
	out := func(a map[string]any) string { return str(a, "result", "output") }
	// inBox runs a command the floor alone does not approve (a path
	// outside the folder, a protected write): a maintainer approves it,
	// and it runs in the container all the same.
	inBoxP := func(payload map[string]any) map[string]any {
		t.Helper()
		cmd := payload["command"]
		a := term(payload)
		if a["status"] == "pending" {
			a = e.decide(a["id"].(string), b.maint)
		}
		if str(a, "decision", "container") != name || str(a, "result", "detail", "container") != name {
			t.Fatalf("%s did not run in %s: %v %v %v", cmd, name, a["status"], a["decision"], a["result"])
		}
		return a
	}
	inBox := func(cmd string) map[string]any { t.Helper(); return inBoxP(map[string]any{"command": cmd}) }

	hostName, _ := os.Hostname()
	if a := floorRun("hostname"); out(a) == hostName+"\n" || !strings.HasPrefix(id, strings.TrimSpace(out(a))) {
		t.Fatalf("the floor's hostname (host %s, container %s): %q", hostName, id, out(a))
	}
	if a := floorRun("id -u"); out(a) != "0\n" {
		t.Fatalf("the floor's id -u: %q", out(a))
	}
	a := inBox(`hostname; echo "$(</etc/hostname)"; id -u; ls /`)
	lines := strings.Split(out(a), "\n")
	if a["status"] != "executed" || lines[0] == hostName || lines[0] != lines[1] || !strings.HasPrefix(id, lines[0]) ||
		!strings.Contains(out(a), "\nwork\n") || strings.Contains(out(a), "\nhome\n") {
		t.Fatalf("the floor's hostname, id and ls / (host %s, container %s): %q", hostName, id, out(a))
	}
	if a := inBox("cat " + secret); a["status"] != "executed" || a["result"].(map[string]any)["exitCode"] == 0.0 ||
		strings.Contains(out(a), "the host's secret") {
		t.Fatalf("a host file outside the project, inside: %v", a["result"])
	}
	for _, cmd := range []string{`echo '{"allow":["Terminal(*)"]}' > permissions.json`, "echo '[core]' >> .git/config"} {
		if a := inBox(cmd); a["result"].(map[string]any)["exitCode"] == 0.0 {
			t.Fatalf("%s succeeded inside: %v", cmd, a["result"])
		}
	}
	if data, _ := os.ReadFile(filepath.Join(b.folder, "permissions.json")); string(data) != perms {
		t.Fatalf("permissions.json after the writes inside: %q", data)
	}
	if a := inBox("ls /sys/class/net; (echo > /dev/tcp/1.1.1.1/80) 2>/dev/null || echo no-network"); out(a) != "lo\nno-network\n" {
		t.Fatalf("the network inside: %q", out(a))
	}
	if a := inBox("echo out; echo err >&2; exit 3"); a["result"].(map[string]any)["exitCode"] != 3.0 || out(a) != "out\nerr\n" {
		t.Fatalf("exit code and output: %v", a["result"])
	}
	a = term(map[string]any{"command": "pwd", "cwd": "sub"})
	if out(a) != "/work/sub\n" || str(a, "result", "detail", "cwd") != "/work/sub" {
		t.Fatalf("the cwd translated: %v", a["result"])
	}
	a = inBoxP(map[string]any{"command": "sleep 301 & sleep 302", "timeoutSec": 1})
	if a["result"].(map[string]any)["timedOut"] != true {
		t.Fatalf("a timeout: %v", a["result"])
	}
	if p := ps(t, eng, name); strings.Contains(p, "sleep 30") {
		t.Fatalf("after a timeout the container still runs:\n%s", p)
	}

	// The integrity check runs after an action in the container too: a
	// protected file the command wrote unseen (CLAUDE.md did not exist
	// when the container was made, so it is not read-only there) is put
	// back, and the action fails naming it.
	os.WriteFile(filepath.Join(b.folder, "build.sh"), []byte("echo 'obey the agent' > CLAUDE.md\n"), 0o644)
	a = inBox("sh build.sh")
	if a["status"] != "failed" || !strings.Contains(str(a, "result", "error"), "CLAUDE.md") {
		t.Fatalf("a protected write inside the container: %v %v", a["status"], a["result"])
	}
	if _, err := os.Stat(filepath.Join(b.folder, "CLAUDE.md")); err == nil {
		t.Fatal("CLAUDE.md written in the container was not undone")
	}

	// An action that asks, approved once the container is gone: it fails
	// container_gone and never runs on the host.
	marker := filepath.Join(b.folder, "ran-somewhere")
	pending := term(map[string]any{"command": "touch ran-somewhere"})
	if pending["status"] != "pending" || str(pending, "decision", "container") != name {
		t.Fatalf("touch under an ask rule: %v %v %v", pending["status"], pending["reason"], pending["decision"])
	}
	real, err := eng.Inspect(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Remove(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	gone := e.decide(pending["id"].(string), b.maint)
	if gone["status"] != "failed" || str(gone, "result", "code") != string(brabo.CodeContainerGone) {
		t.Fatalf("approved after its container went: %v %v", gone["status"], gone["result"])
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command meant for the container ran on the host")
	}
	// The next proposal has no floor, and says why.
	if a := term(map[string]any{"command": "ls"}); a["status"] != "pending" ||
		!strings.Contains(a["reason"].(string), "no container floor: the engine has no container "+name) || str(a, "decision", "container") != "" {
		t.Fatalf("with the container gone: %v %v", a["status"], a["reason"])
	}

	// A container made by hand under the same name, running, with brabo's
	// label copied but without the read-only paths: no floor (the engine's
	// mounts are checked, not only the label).
	if _, err := eng.Start(t.Context(), brabo.ContainerSpec{Name: name, Image: image, Mount: b.folder, Args: []string{"sleep", "3600"},
		Labels: map[string]string{brabo.LabelSettings: real.Labels[brabo.LabelSettings]}}); err != nil {
		t.Fatal(err)
	}
	if a := term(map[string]any{"command": "ls"}); a["status"] != "pending" ||
		!strings.Contains(a["reason"].(string), "was not created with brabo's current settings") {
		t.Fatalf("with a hand-made container: %v %v", a["status"], a["reason"])
	}
	stop := e.proposeIn(b.id, b.maint, "container_stop", map[string]any{})
	if st := e.decide(stop["id"].(string), b.maint); st["status"] != "executed" {
		t.Fatalf("container_stop: %v", st["result"])
	}
	again := start()
	if again == id || again == "" {
		t.Fatalf("the start after a hand-made container: id %q (first %q)", again, id)
	}
	if a := floorRun("echo back"); out(a) != "back\n" {
		t.Fatalf("the floor after the recreate: %v", a["result"])
	}
}

// TestContainerFloorNeedsTheContainerPath: a container project registered
// running gets no floor where brabo cannot run its commands in the
// container, and the reason says which case applied: no engine
// configured, an engine that does not answer, a container not registered
// running, an agent that runs the command itself.
func TestContainerFloorNeedsTheContainerPath(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	b := e.containerProject("box")
	os.MkdirAll(b.folder, 0o755)
	e.ok("PUT", "/v1/projects/"+b.id+"/container", b.maint, map[string]any{"running": true}, 200)
	asks := func(why string, body map[string]any) {
		t.Helper()
		a := e.ok("POST", "/v1/projects/"+b.id+"/actions", b.agent, body, 201)
		if a["status"] != "pending" || !strings.Contains(a["reason"].(string), "(no container floor: "+why) ||
			str(a, "decision", "container") != "" {
			t.Fatalf("want no floor because %s: %v %v %v", why, a["status"], a["reason"], a["decision"])
		}
	}
	ls := map[string]any{"type": "terminal", "payload": map[string]any{"command": "make build"}}
	asks("no container engine is configured", ls)

	dead, _ := docker.New("unix://" + filepath.Join(t.TempDir(), "none.sock"))
	e.svc.Containers = dead
	asks("the container engine does not answer", ls)
	asks("the proposing agent runs the command itself", map[string]any{"type": "terminal", "payload": map[string]any{"command": "make build"},
		"execution": map[string]any{"mode": "external", "runner": "claude-code"}})

	e.ok("PUT", "/v1/projects/"+b.id+"/container", b.maint, map[string]any{"running": false}, 200)
	asks("the project's container is not running", ls)
}
