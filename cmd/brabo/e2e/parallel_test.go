package e2e

import (
	"strings"
	"testing"
)

// The lead's script: a plan for four agents under a cap of three, then
// parallelize for the one left out (above the cap: a human decides), then
// the answer.
const parallelScript = `{"turns": [
  {"toolCalls": [{"id": "p1", "name": "propose_execution_plan", "arguments": {"plan": "api and web", "agents": {"api": 2, "web": 2}}}]},
  {"expectToolResult": "above the cap, not started: web: 1",
   "toolCalls": [{"id": "p2", "name": "parallelize", "arguments": {"module": "web", "agents": 2, "reason": "the plan's fourth agent"}}]},
  {"expectToolResult": "raised from 3 to 4", "content": "Four agents: two on api, two on web."}
]}`

// TestParallelAgentsThroughServe drives the three action types about
// parallel dev agents through the real `brabo serve`: an approved
// propose_execution_plan starts the planned agents within the project's
// cap and names the one left out; the lead's parallelize above the cap
// waits for a maintainer (a developer may not approve it, always allow is
// refused), and approved raises the cap and starts the agent; a
// maintainer's raise_max_parallel raises the cap, and one that is not a
// raise fails by name.
func TestParallelAgentsThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	srv := startServe(t, t.TempDir(), "--model", scriptedModel(t, parallelScript))
	admin := srv.token
	project, _ := newLocalProject(t, srv, admin)
	pp := "/v1/projects/" + project
	srv.must(t, "POST", pp+"/agents", admin, map[string]any{"name": "dev-lead"}, 201)
	maint := srv.must(t, "POST", pp+"/members", admin, map[string]any{"name": "mo", "role": "maintainer"}, 201)["token"].(string)
	dev := srv.must(t, "POST", pp+"/members", admin, map[string]any{"name": "dee", "role": "developer"}, 201)["token"].(string)
	devAgents := func() []string {
		var names []string
		for _, a := range asList(srv.must(t, "GET", pp+"/agents", admin, nil, 200)["agents"]) {
			if n := a["name"].(string); strings.HasPrefix(n, "dev-") && n != "dev-lead" {
				names = append(names, n)
			}
		}
		return names
	}
	capOf := func() float64 {
		return srv.must(t, "GET", pp, admin, nil, 200)["project"].(map[string]any)["maxParallel"].(float64)
	}

	turn := srv.must(t, "POST", pp+"/lead/messages", maint, map[string]any{"text": "Plan the release."}, 200)
	plan := turn["actionId"].(string)
	srv.must(t, "POST", "/v1/actions/"+plan+"/approve", dev, nil, 403)
	if d := srv.must(t, "POST", "/v1/actions/"+plan+"/approve", maint, nil, 200); d["action"].(map[string]any)["status"] != "executed" {
		t.Fatalf("the plan: %v", d)
	}
	if got := strings.Join(devAgents(), ","); got != "dev-api,dev-web,dev-api-2" {
		t.Fatalf("the dev agents after the plan: %s", got)
	}
	par := waitFor(t, "the lead to propose parallelize", func() string {
		for _, a := range asList(srv.must(t, "GET", "/v1/queue", admin, nil, 200)["actions"]) {
			if a["type"] == "parallelize" && a["status"] == "pending" {
				return a["id"].(string)
			}
		}
		return ""
	})
	if len(devAgents()) != 3 || capOf() != 3 {
		t.Fatalf("parallelize above the cap changed something before a decision: %v, cap %v", devAgents(), capOf())
	}
	if out := srv.must(t, "POST", "/v1/actions/"+par+"/approve-always", maint, nil, 400); out["code"] != "always_allow_cap" {
		t.Fatalf("always allow on parallelize: %v", out)
	}
	srv.must(t, "POST", "/v1/actions/"+par+"/approve", dev, nil, 403)
	srv.must(t, "POST", "/v1/actions/"+par+"/approve", maint, nil, 200)
	if got := strings.Join(devAgents(), ","); got != "dev-api,dev-web,dev-api-2,dev-web-2" || capOf() != 4 {
		t.Fatalf("after parallelize: %s, cap %v", got, capOf())
	}
	waitFor(t, "the lead's answer", func() string {
		ms := asList(srv.must(t, "GET", pp+"/lead/messages", maint, nil, 200)["messages"])
		if len(ms) > 0 && ms[len(ms)-1]["content"] == "Four agents: two on api, two on web." {
			return "ok"
		}
		return ""
	})

	// raise_max_parallel, proposed by a maintainer, decided by another.
	raise := srv.must(t, "POST", pp+"/actions", maint, map[string]any{"type": "raise_max_parallel",
		"payload": map[string]any{"extra": map[string]any{"maxParallel": 6, "reason": "release week"}}}, 201)
	if raise["status"] != "pending" {
		t.Fatalf("raise_max_parallel: %v", raise)
	}
	srv.must(t, "POST", "/v1/actions/"+raise["id"].(string)+"/approve", dev, nil, 403)
	srv.must(t, "POST", "/v1/actions/"+raise["id"].(string)+"/approve", admin, nil, 200)
	if capOf() != 6 {
		t.Fatalf("the cap after raise_max_parallel: %v", capOf())
	}
	low := srv.must(t, "POST", pp+"/actions", maint, map[string]any{"type": "raise_max_parallel",
		"payload": map[string]any{"extra": map[string]any{"maxParallel": 2}}}, 201)
	d := srv.must(t, "POST", "/v1/actions/"+low["id"].(string)+"/approve", admin, nil, 200)["action"].(map[string]any)
	if d["status"] != "failed" || !strings.Contains(d["result"].(map[string]any)["error"].(string), "not a raise") || capOf() != 6 {
		t.Fatalf("a raise that lowers: %v, cap %v", d, capOf())
	}
	if out := srv.must(t, "POST", pp+"/actions", dev, map[string]any{"type": "raise_max_parallel",
		"payload": map[string]any{"extra": map[string]any{"maxParallel": 9}}}, 201); out["status"] != "denied" {
		t.Fatalf("a developer's raise: %v", out)
	}
	n := countEvents(eventsOf(t, srv, admin, project))
	if n["dev.agents_started"] != 2 || n["project.max_parallel_changed"] != 2 {
		t.Fatalf("events: %v", n)
	}
}
