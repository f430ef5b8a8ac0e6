package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/docker"
	"github.com/brabo-dev/brabo/docker/dockertest"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// containerProject makes a container-mode project of e with a maintainer,
// a developer and an agent; its folder under the workspaces root does not
// exist yet.
type boxProject struct {
	id, folder, maint, dev, agent string
}

func (e *env) containerProject(slug string) boxProject {
	e.t.Helper()
	p := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": slug, "mode": "container"}, 201)
	b := boxProject{id: p["id"].(string), folder: filepath.Join(e.svc.WorkspacesRoot, p["workspaceDir"].(string))}
	b.maint = e.ok("POST", "/v1/projects/"+b.id+"/members", e.admin, map[string]any{"name": slug + "-mia", "role": "maintainer"}, 201)["token"].(string)
	b.dev = e.ok("POST", "/v1/projects/"+b.id+"/members", e.admin, map[string]any{"name": slug + "-dev", "role": "developer"}, 201)["token"].(string)
	b.agent = e.ok("POST", "/v1/projects/"+b.id+"/agents", e.admin, map[string]any{"name": "dev-" + slug}, 201)["token"].(string)
	return b
}

func (e *env) proposeIn(project, token, typ string, payload map[string]any) map[string]any {
	e.t.Helper()
	return e.ok("POST", "/v1/projects/"+project+"/actions", token, map[string]any{"type": typ, "payload": payload}, 201)
}

// containerOf reads a project's row of GET /v1/containers.
func (e *env) containerOf(token, project string) map[string]any {
	e.t.Helper()
	for _, r := range e.ok("GET", "/v1/containers", token, nil, 200)["containers"].([]any) {
		row := r.(map[string]any)
		if str(row, "project", "id") == project {
			return row["container"].(map[string]any)
		}
	}
	e.t.Fatalf("project %s is not on the containers list", project)
	return nil
}

// TestContainerLifecycleOnPodman runs container_start, container_stop and
// container_remove against a real Podman service: resources from the
// module map, the folder materialized and proven writable before any
// lifecycle change, the container running with the folder mounted, the
// container floor, the /containers page's Stop and Remove proposing as the
// clicking member.
func TestContainerLifecycleOnPodman(t *testing.T) {
	host := dockertest.Podman(t)
	image := dockertest.BusyboxImage(t, host)
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
	if _, err := os.Stat(b.folder); !os.IsNotExist(err) {
		t.Fatalf("the project folder exists before container_start: %v", err)
	}

	// The module map: web declares 0.5 CPUs and 64 MiB, api nothing, so
	// the minimum is 1 CPU (the default floors it) and 512 MiB.
	e.refused("PUT", "/v1/projects/"+b.id+"/modules", b.dev, map[string]any{"modules": []any{}}, 403, "forbidden_role")
	mm := e.ok("PUT", "/v1/projects/"+b.id+"/modules", b.maint, map[string]any{"modules": []any{
		map[string]any{"name": "web", "resources": map[string]any{"cpus": 0.5, "memoryMb": 64}}, map[string]any{"name": "api"}}}, 200)
	if str(mm, "minimum") != "" || mm["minimum"].(map[string]any)["cpus"] != 1.0 || mm["minimum"].(map[string]any)["memoryMb"] != 512.0 {
		t.Fatalf("the derived minimum: %v", mm["minimum"])
	}

	// Below the minimum: a named failure before anything else; no folder,
	// no lifecycle row.
	low := e.decide(e.proposeIn(b.id, b.agent, "container_start", map[string]any{"image": image, "cpus": 0.5})["id"].(string), b.maint)
	failedWith(t, low, "cpus 0.5 is below the minimum 1 (derived from the module map: web 0.5 CPUs 64 MiB, api declares nothing)")
	if _, err := os.Stat(b.folder); !os.IsNotExist(err) {
		t.Fatal("a start below the minimum created the folder")
	}
	if c := e.containerOf(b.maint, b.id); c["state"] != "" || c["workspaceVerifiedAt"] != nil {
		t.Fatalf("a start below the minimum wrote the row: %v", c)
	}

	// No engine reachable: an ordinary failure; the folder was made and
	// proven writable first, and the row is not marked provisioning.
	dead, _ := docker.New("unix://" + filepath.Join(t.TempDir(), "none.sock"))
	e.svc.Containers = dead
	unreachable := e.decide(e.proposeIn(b.id, b.agent, "container_start", map[string]any{"image": image})["id"].(string), b.maint)
	failedWith(t, unreachable, "no container engine reachable")
	if fi, err := os.Stat(b.folder); err != nil || !fi.IsDir() {
		t.Fatalf("the folder was not materialized: %v", err)
	}
	if c := e.containerOf(b.maint, b.id); c["state"] != "" || c["workspaceVerifiedAt"] == nil {
		t.Fatalf("after an unreachable engine the row is %v", c)
	}
	e.svc.Containers = eng

	// The start, for real.
	a := e.proposeIn(b.id, b.agent, "container_start", map[string]any{"image": image,
		"args": []string{"/bin/sh", "-c", "echo up from the container > /work/up.txt; exec sleep 600"}})
	if a["status"] != "pending" {
		t.Fatalf("container_start: %v", a)
	}
	id := a["id"].(string)
	e.refused("POST", "/v1/actions/"+id+"/approve", b.dev, nil, 403, "forbidden_role")
	started := e.decide(id, b.maint)
	if started["status"] != "executed" || str(started, "result", "detail", "state") != "running" || str(started, "result", "detail", "containerId") == "" {
		t.Fatalf("approved container_start: %v", started)
	}
	dockertest.WaitFile(t, filepath.Join(b.folder, "up.txt"), "up from the container")
	c := e.containerOf(b.dev, b.id)
	if c["state"] != "running" || c["image"] != image || c["resources"].(map[string]any)["cpus"] != 1.0 ||
		c["resources"].(map[string]any)["memoryMb"] != 512.0 || c["workspaceVerifiedAt"] == nil || c["actionId"] != id {
		t.Fatalf("the container row: %v", c)
	}
	if info, err := eng.Inspect(t.Context(), c["name"].(string)); err != nil || info.State != "running" || info.ID != c["containerId"] {
		t.Fatalf("the engine's container: %+v %v", info, err)
	}
	// Its events: the folder proven writable, then provisioning, then
	// running: in that order, after the approval.
	var states []string
	for _, ev := range e.ok("GET", "/v1/projects/"+b.id+"/events", b.maint, nil, 200)["events"].([]any) {
		m := ev.(map[string]any)
		if m["actionId"] == id && m["type"] == brabo.EventContainerChanged {
			st := str(m, "payload", "state")
			if st == "" && str(m, "payload", "workspaceVerifiedAt") != "" {
				st = "verified"
			}
			states = append(states, st)
		}
	}
	if strings.Join(states, " ") != "verified provisioning running" {
		t.Fatalf("container events: %v", states)
	}
	// The container floor: the project's terminal actions start at
	// auto_approve now.
	if p := e.ok("GET", "/v1/projects/"+b.id, b.dev, nil, 200); str(p, "project", "id") != b.id || p["project"].(map[string]any)["containerRunning"] != true {
		t.Fatalf("the project after the start: %v", p)
	}
	// Its image has no bash: no floor, and the reason says so.
	if ls := e.proposeIn(b.id, b.agent, "terminal", map[string]any{"command": "ls"}); ls["status"] != "pending" ||
		!strings.Contains(ls["reason"].(string), "no container floor: the container's image has no bash") {
		t.Fatalf("a terminal action with a bash-less container running: %v %v", ls["status"], ls["reason"])
	}
	// A second start is refused at the proposal: nothing is queued.
	before := e.written()
	e.refused("POST", "/v1/projects/"+b.id+"/actions", b.agent, map[string]any{"type": "container_start",
		"payload": map[string]any{"image": image}}, 409, "container_already_running")
	e.unchanged(before, "a container_start while the container runs")

	// Stop from the /containers page, as the member who clicks; an agent
	// may not propose it.
	e.refused("POST", "/v1/projects/"+b.id+"/actions", b.agent, map[string]any{"type": "container_stop", "payload": map[string]any{}}, 403, "human_only")
	w := newWebClient(t, e.srv.URL)
	w.login(b.maint)
	resp, page := w.do("GET", "/containers", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(page, `id="container-`+b.id+`" data-state="running"`) ||
		!strings.Contains(page, `hx-post="/ui/containers/`+b.id+`/stop"`) {
		t.Fatalf("the containers page (%d): %s", resp.StatusCode, page)
	}
	resp, row := w.do("POST", "/ui/containers/"+b.id+"/stop", url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
	if resp.StatusCode != 200 || !strings.Contains(row, "container_stop proposed") {
		t.Fatalf("Stop on the page (%d): %s", resp.StatusCode, row)
	}
	stop := lastAction(t, e, b.maint, b.id, "container_stop")
	if stop["actorKind"] != "member" || stop["actorId"] != e.memberID(b.maint) || stop["status"] != "pending" {
		t.Fatalf("the proposed stop: %v", stop)
	}
	e.refused("POST", "/v1/actions/"+stop["id"].(string)+"/approve", b.dev, nil, 403, "forbidden_role")
	if st := e.decide(stop["id"].(string), b.maint); st["status"] != "executed" {
		t.Fatalf("approved container_stop: %v", st)
	}
	if info, err := eng.Inspect(t.Context(), c["name"].(string)); err != nil || info.State != "exited" {
		t.Fatalf("after the stop the engine says %+v %v", info, err)
	}
	if c := e.containerOf(b.maint, b.id); c["state"] != "stopped" {
		t.Fatalf("the row after the stop: %v", c)
	}
	if p := e.ok("GET", "/v1/projects/"+b.id, b.dev, nil, 200); p["project"].(map[string]any)["containerRunning"] != false {
		t.Fatal("the container floor outlived the stop")
	}
	failedWith(t, e.decide(e.proposeIn(b.id, b.maint, "container_stop", map[string]any{})["id"].(string), b.maint), "no running container to stop")

	// Remove, from the page too; always asks, and then it is gone.
	resp, row = w.do("POST", "/ui/containers/"+b.id+"/remove", url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
	if resp.StatusCode != 200 || !strings.Contains(row, "container_remove proposed") {
		t.Fatalf("Remove on the page (%d): %s", resp.StatusCode, row)
	}
	rm := lastAction(t, e, b.maint, b.id, "container_remove")
	if rm["status"] != "pending" || rm["actorId"] != e.memberID(b.maint) {
		t.Fatalf("the proposed remove: %v", rm)
	}
	if done := e.decide(rm["id"].(string), b.maint); done["status"] != "executed" {
		t.Fatalf("approved container_remove: %v", done)
	}
	if _, err := eng.Inspect(t.Context(), c["name"].(string)); err == nil {
		t.Fatal("the engine still has the removed container")
	}
	if c := e.containerOf(b.maint, b.id); c["state"] != "removed" {
		t.Fatalf("the row after the remove: %v", c)
	}
	if _, err := os.Stat(filepath.Join(b.folder, "up.txt")); err != nil {
		t.Fatal("removing the container removed the project folder's files")
	}
	failedWith(t, e.decide(e.proposeIn(b.id, b.maint, "container_remove", map[string]any{})["id"].(string), b.maint), "no container to remove")
}

// TestContainerStartNamedFailures: the failures that need no engine to be
// named: none configured, a runner project, a folder brabo cannot create,
// no image.
func TestContainerStartNamedFailures(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	b := e.containerProject("box")
	start := func(payload map[string]any) map[string]any {
		return e.decide(e.proposeIn(b.id, b.agent, "container_start", payload)["id"].(string), b.maint)
	}
	// No engine configured: refused at the proposal, nothing queued.
	before := e.written()
	e.refused("POST", "/v1/projects/"+b.id+"/actions", b.agent, map[string]any{"type": "container_start",
		"payload": map[string]any{"image": "x"}}, 409, "no_container_engine")
	e.unchanged(before, "a container_start with no engine")

	dead, _ := docker.New("unix://" + filepath.Join(t.TempDir(), "none.sock"))
	e.svc.Containers = dead
	failedWith(t, start(map[string]any{}), "no image: the proposal names none and the server has no default")
	failedWith(t, start(map[string]any{"image": "x", "memoryMb": 100}), "memoryMb 100 is below the minimum 512 (the default, no module map)")
	failedWith(t, start(map[string]any{"image": "x", "cpus": 64}), "cpus 64 is above the ceiling 8")

	// A workspaces root brabo cannot create the folder in: a file stands
	// where a folder must go.
	blocker := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(blocker, []byte("x"), 0o644)
	saved := e.svc.WorkspacesRoot
	e.svc.WorkspacesRoot = blocker
	failedWith(t, start(map[string]any{"image": "x"}), "cannot be created or written")
	e.svc.WorkspacesRoot = saved
	if c := e.containerOf(b.maint, b.id); c["state"] != "" || c["workspaceVerifiedAt"] != nil {
		t.Fatalf("a folder that could not be made left a row: %v", c)
	}

	runner := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "far", "mode": "runner"}, 201)["id"].(string)
	a := e.proposeIn(runner, e.admin, "container_start", map[string]any{"image": "x"})
	failedWith(t, e.decide(a["id"].(string), e.admin), "no runner is connected")

	// A local project has no container: refused at the proposal.
	before = e.written()
	e.refused("POST", e.pp("/actions"), e.maintainer, map[string]any{"type": "container_start", "payload": map[string]any{"image": "x"}},
		409, "not_container_project")
	e.unchanged(before, "a container_start in a local project")

	before = e.written()
	for _, p := range []map[string]any{{"cpus": -1}, {"memoryMb": -5}, {"image": "-x"}, {"image": "a b"}} {
		e.refused("POST", "/v1/projects/"+b.id+"/actions", b.agent, map[string]any{"type": "container_start", "payload": p}, 400, "invalid_action")
	}
	e.unchanged(before, "bad container_start payloads")
}

func lastAction(t *testing.T, e *env, token, project, typ string) map[string]any {
	t.Helper()
	list := e.ok("GET", "/v1/projects/"+project+"/actions?type="+typ, token, nil, 200)["actions"].([]any)
	if len(list) == 0 {
		t.Fatalf("no %s action", typ)
	}
	return list[0].(map[string]any)
}
