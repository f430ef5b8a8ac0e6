package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/docker"
	"github.com/brabo-dev/brabo/docker/dockertest"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// TestContainerHandoffOnPodman: a maintainer names the infra agent
// (project.infra_agent_changed); only it may propose container_handoff,
// which asks a maintainer whatever the rules say and shows the image and
// resources it asks for; the maintainer's approval records
// container_start: auto_approve for that agent alone (autonomy.changed)
// and proposes the start as it, which runs without a second click on a
// real Podman; the refusals still come first.
func TestContainerHandoffOnPodman(t *testing.T) {
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
	infra := e.ok("POST", "/v1/projects/"+b.id+"/agents", e.admin, map[string]any{"name": "infra-box"}, 201)
	infraID, infraTok := infra["agent"].(map[string]any)["id"].(string), infra["token"].(string)
	handoff := map[string]any{"image": image, "cpus": 1, "memoryMb": 512, "args": []string{"sleep", "3600"}}

	// Before any infra agent: nobody may hand off.
	before := e.written()
	e.refused("POST", "/v1/projects/"+b.id+"/actions", infraTok, map[string]any{"type": "container_handoff", "payload": handoff}, 403, "not_infra_agent")
	e.unchanged(before, "a handoff with no infra agent")

	// Naming it: a maintainer's, an agent of this project only.
	e.refused("PUT", "/v1/projects/"+b.id+"/infra-agent", b.dev, map[string]any{"agentId": infraID}, 403, "forbidden_role")
	e.refused("PUT", "/v1/projects/"+b.id+"/infra-agent", b.maint, map[string]any{"agentId": e.agentID}, 400, "invalid_action")
	if got := e.ok("PUT", "/v1/projects/"+b.id+"/infra-agent", b.maint, map[string]any{"agentId": "infra-box"}, 200); got["infraAgentId"] != infraID {
		t.Fatalf("naming the infra agent: %v", got)
	}
	var named int
	for _, ev := range e.ok("GET", "/v1/projects/"+b.id+"/events", b.maint, nil, 200)["events"].([]any) {
		m := ev.(map[string]any)
		if m["type"] == brabo.EventInfraAgentChanged && str(m, "payload", "agentId") == infraID && m["actorId"] == e.memberID(b.maint) {
			named++
		}
	}
	if named != 1 {
		t.Fatalf("%d project.infra_agent_changed events naming %s", named, infraID)
	}

	// Another agent may not hand off; the infra agent's handoff asks,
	// even with an allow rule, a specific autonomy rule and auto mode.
	e.refused("POST", "/v1/projects/"+b.id+"/actions", b.agent, map[string]any{"type": "container_handoff", "payload": handoff}, 403, "not_infra_agent")
	e.ok("PUT", "/v1/projects/"+b.id+"/agents/"+infraID+"/autonomy", b.maint, map[string]any{"actionType": "*", "mode": "auto_approve"}, 200)
	e.ok("PUT", "/v1/projects/"+b.id+"/agents/"+infraID+"/autonomy", b.maint, map[string]any{"actionType": "container_handoff", "mode": "auto_approve"}, 200)
	h := e.proposeIn(b.id, infraTok, "container_handoff", handoff)
	if h["status"] != "pending" || !strings.HasPrefix(h["reason"].(string), "cap: container_handoff") {
		t.Fatalf("the handoff: %v %v, want pending by its cap", h["status"], h["reason"])
	}
	if p := h["payload"].(map[string]any); p["image"] != image || p["cpus"] != 1.0 || p["memoryMb"] != 512.0 {
		t.Fatalf("the handoff's card: %v", p)
	}
	e.refused("POST", "/v1/actions/"+h["id"].(string)+"/approve", b.dev, nil, 403, "forbidden_role")
	e.ok("PUT", "/v1/projects/"+b.id+"/agents/"+infraID+"/autonomy", b.maint, map[string]any{"actionType": "*", "mode": "require_approval"}, 200)

	// Approved: the seed, then the start as the infra agent, at once.
	done := e.decide(h["id"].(string), b.maint)
	if done["status"] != "executed" || str(done, "result", "detail", "startStatus") != "executed" {
		t.Fatalf("the approved handoff: %v %v", done["status"], done["result"])
	}
	startID := str(done, "result", "detail", "start")
	start := e.ok("GET", "/v1/actions/"+startID, b.maint, nil, 200)
	if start["actorId"] != infraID || start["status"] != "executed" || start["reason"] != "agent_autonomy: auto_approve (specific)" || start["decidedBy"] != nil {
		t.Fatalf("the seeded start: %v %v %v %v", start["actorId"], start["status"], start["reason"], start["decidedBy"])
	}
	if c := e.containerOf(b.maint, b.id); c["state"] != "running" || c["actionId"] != startID {
		t.Fatalf("the container after the handoff: %v", c)
	}
	if info, err := eng.Inspect(t.Context(), e.containerOf(b.maint, b.id)["name"].(string)); err != nil || info.State != "running" {
		t.Fatalf("the engine after the handoff: %+v %v", info, err)
	}
	var seeded, approvals int
	for _, ev := range e.ok("GET", "/v1/projects/"+b.id+"/events", b.maint, nil, 200)["events"].([]any) {
		m := ev.(map[string]any)
		if m["type"] == brabo.EventAutonomyChanged && str(m, "payload", "agentId") == infraID &&
			str(m, "payload", "actionType") == "container_start" && str(m, "payload", "mode") == "auto_approve" && m["actionId"] == h["id"] {
			seeded++
		}
		if m["type"] == brabo.EventActionApproved && m["actionId"] == startID {
			approvals++
		}
	}
	if seeded != 1 || approvals != 0 {
		t.Fatalf("autonomy.changed for the seed: %d (want 1); approvals of the start: %d (want 0)", seeded, approvals)
	}
	// For that agent alone.
	devID := ""
	for _, a := range e.ok("GET", "/v1/projects/"+b.id+"/agents", b.maint, nil, 200)["agents"].([]any) {
		if str(a.(map[string]any), "name") == "dev-box" {
			devID = str(a.(map[string]any), "id")
		}
	}
	if devID == "" {
		t.Fatal("no dev-box agent listed")
	}
	for _, r := range e.ok("GET", "/v1/projects/"+b.id+"/agents/"+devID+"/autonomy", b.maint, nil, 200)["autonomy"].([]any) {
		if r.(map[string]any)["actionType"] == "container_start" {
			t.Fatalf("the seed reached another agent: %v", r)
		}
	}

	// The refusals still come before: a second handoff or start while the
	// container runs is 409, nothing queued.
	before = e.written()
	e.refused("POST", "/v1/projects/"+b.id+"/actions", infraTok, map[string]any{"type": "container_handoff", "payload": handoff}, 409, "container_already_running")
	e.refused("POST", "/v1/projects/"+b.id+"/actions", infraTok, map[string]any{"type": "container_start", "payload": handoff}, 409, "container_already_running")
	e.unchanged(before, "a handoff while the container runs")

	// Stopped, the infra agent's own start runs on the seed; another
	// agent's asks.
	stop := e.proposeIn(b.id, b.maint, "container_stop", map[string]any{})
	if st := e.decide(stop["id"].(string), b.maint); st["status"] != "executed" {
		t.Fatalf("container_stop: %v", st["result"])
	}
	if a := e.proposeIn(b.id, b.agent, "container_start", handoff); a["status"] != "pending" {
		t.Fatalf("another agent's start: %v %v", a["status"], a["reason"])
	}
	if a := e.proposeIn(b.id, infraTok, "container_start", handoff); a["status"] != "executed" {
		t.Fatalf("the infra agent's start on the seed: %v %v %v", a["status"], a["reason"], a["result"])
	}
}
