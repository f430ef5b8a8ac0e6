package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo"
)

// memberID returns the id of the member a token belongs to.
func (e *env) memberID(token string) string {
	e.t.Helper()
	id := str(e.ok("GET", "/v1/me", token, nil, 200), "member", "id")
	if id == "" {
		e.t.Fatal("GET /v1/me gave no member id")
	}
	return id
}

// newAgent creates an agent as the member with token and returns the
// agent's token and id.
func (e *env) newAgent(token, name string) (string, string) {
	e.t.Helper()
	ag := e.ok("POST", e.pp("/agents"), token, map[string]any{"name": name}, 201)
	return ag["token"].(string), ag["agent"].(map[string]any)["id"].(string)
}

func (e *env) statusOf(id string) string {
	e.t.Helper()
	var a *brabo.ProposedAction
	if err := e.store.View(context.Background(), func(tx brabo.Tx) error {
		var err error
		a, err = tx.Action(context.Background(), id)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return string(a.Status)
}

// decisions are the three ways to decide an action, and the preview.
func decisions(id string) []struct {
	method, path string
	body         any
} {
	return []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/actions/" + id + "/approve", nil},
		{"POST", "/v1/actions/" + id + "/deny", map[string]any{"reason": "no"}},
		{"POST", "/v1/actions/" + id + "/approve-always", nil},
		{"GET", "/v1/actions/" + id + "/approve-always", nil},
	}
}

func TestAgentTokensNeverDecideOrAdminister(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"]}`)
		own := e.terminal("touch mine")["id"].(string)
		otherToken, otherID := e.newAgent(e.admin, "reviewer")
		theirs := e.propose(otherToken, "terminal", map[string]any{"command": "touch theirs"})["id"].(string)
		human := e.propose(e.maintainer, "terminal", map[string]any{"command": "touch human"})["id"].(string)

		// A pattern of the agent's own, for the removal it must not make.
		if err := e.store.Update(context.Background(), func(tx brabo.Tx) error {
			_, err := tx.AddAgentPattern(context.Background(), &brabo.AgentPattern{AgentID: e.agentID, Pattern: "Terminal(ls)", CreatedBy: brabo.SystemActor})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		before := e.written()
		for _, id := range []string{own, theirs} {
			for _, d := range decisions(id) {
				e.refused(d.method, d.path, e.agent, d.body, 403, "forbidden_role")
			}
		}
		// Not project routes: refused for what the token is.
		e.refused("GET", "/v1/queue", e.agent, nil, 403, "forbidden_role")
		e.refused("POST", "/v1/projects", e.agent, map[string]any{"slug": "mine", "mode": "local", "root": t.TempDir()}, 403, "forbidden_role")
		// The members' routes of its own project do not exist for an agent:
		// 404, never 403, as the README says.
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{"GET", e.pp("/events"), nil},
			{"GET", e.pp("/events/stream"), nil},
			{"GET", e.pp("/pulls"), nil},
			{"GET", e.pp("/agents"), nil},
			{"GET", e.pp("/permissions"), nil},
			{"PUT", e.pp("/permissions"), `{"allow": ["Terminal(rm)"]}`},
			{"GET", e.pp("/agents/" + e.agentID + "/autonomy"), nil},
			{"PUT", e.pp("/agents/" + e.agentID + "/autonomy"), map[string]any{"actionType": "*", "mode": "auto_approve"}},
			{"GET", e.pp("/agents/" + e.agentID + "/patterns"), nil},
			{"DELETE", e.pp("/agents/" + e.agentID + "/patterns?pattern=Terminal(ls)"), nil},
			{"POST", e.pp("/agents"), map[string]any{"name": "clone"}},
			{"POST", e.pp("/members"), map[string]any{"name": "puppet", "role": "owner"}},
			{"PUT", e.pp("/container"), map[string]any{"running": false}},
			{"POST", e.pp("/tasks"), map[string]any{"title": "mine"}},
			{"DELETE", e.pp("/agents/" + e.agentID + "/token"), nil},
		} {
			e.refused(r.method, r.path, e.agent, r.body, 404, "not_found")
		}
		e.unchanged(before, "an agent's refused requests")
		for _, id := range []string{own, theirs, human} {
			if s := e.statusOf(id); s != "pending" {
				t.Errorf("%s is %s after an agent's clicks", id, s)
			}
		}

		// An agent reads its own actions, and only those.
		if a := e.ok("GET", "/v1/actions/"+own, e.agent, nil, 200); a["id"] != own {
			t.Fatalf("own action: %v", a)
		}
		e.refused("GET", "/v1/actions/"+theirs, e.agent, nil, 404, "not_found")
		e.refused("GET", "/v1/actions/"+human, e.agent, nil, 404, "not_found")
		e.refused("GET", "/v1/actions/"+own, otherToken, nil, 404, "not_found")
		for _, q := range []string{"", "?actor=" + otherID, "?status=pending"} {
			list := e.ok("GET", e.pp("/actions"+q), e.agent, nil, 200)["actions"].([]any)
			if len(list) != 1 || list[0].(map[string]any)["id"] != own {
				t.Errorf("GET actions%s as the agent: %v", q, list)
			}
		}
		if me := e.ok("GET", "/v1/me", e.agent, nil, 200); str(me, "agent", "id") != e.agentID || me["member"] != nil {
			t.Errorf("GET /v1/me as the agent: %v", me)
		}
		// A member of the project reads every action of it.
		for _, id := range []string{own, theirs, human} {
			e.ok("GET", "/v1/actions/"+id, e.developer, nil, 200)
		}
	})
}

// minRole is DESIGN §3.2's table, written out rather than read from the
// code under test.
var minRole = map[brabo.ActionType]brabo.Role{
	"terminal": "developer", "git_commit": "developer", "write_file": "developer",
	"git_push": "maintainer", "pr_open": "maintainer", "git_repo_create": "maintainer",
	"git_branch_create": "maintainer", "git_branch_protect": "maintainer", "open_adr_pr": "maintainer",
	"open_infra_pr": "maintainer", "git_merge": "maintainer", "instruction_patch": "maintainer",
	"parallelize": "maintainer", "raise_max_parallel": "maintainer", "propose_execution_plan": "maintainer",
	"assess_implementability": "maintainer", "container_start": "maintainer", "container_stop": "maintainer",
	"container_remove": "maintainer", "spend": "owner", "container_handoff": "maintainer",
}

func TestDecidingNeedsTheTypesMinimumRole(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		if len(minRole) != len(brabo.ActionTypes()) {
			t.Fatalf("the table has %d types, brabo %d", len(minRole), len(brabo.ActionTypes()))
		}
		var pr brabo.PullRequest
		if err := e.store.Update(context.Background(), func(tx brabo.Tx) error {
			pr = brabo.PullRequest{ProjectID: e.project, Title: "t", Head: "feat/z", Base: "main"}
			return tx.CreatePR(context.Background(), &pr)
		}); err != nil {
			t.Fatal(err)
		}
		payloads := map[brabo.ActionType]map[string]any{
			"terminal":          {"command": "touch by-dev.txt"},
			"write_file":        {"path": "w.txt", "content": "x"},
			"git_commit":        {"message": "m"},
			"git_push":          {"branch": "main"},
			"git_branch_create": {"branch": "b1"},
			"pr_open":           {"branch": "feat/none", "base": "main", "title": "t"},
			"git_merge":         {"pr": pr.Number},
			// The types given executors name what they act on.
			"git_branch_protect":     {"branch": "release"},
			"open_adr_pr":            {"title": "t", "content": "c"},
			"open_infra_pr":          {"title": "t", "content": "c"},
			"instruction_patch":      {"agent": "coder", "content": "be brief"},
			"spend":                  {"amount": "1"},
			"parallelize":            {"extra": map[string]any{"module": "api", "agents": 2}},
			"raise_max_parallel":     {"extra": map[string]any{"maxParallel": 5}},
			"propose_execution_plan": {"extra": map[string]any{"plan": "p", "agents": map[string]int{"api": 1}}},
		}
		tokens := map[brabo.Role]string{"developer": e.developer, "maintainer": e.maintainer, "owner": e.admin}
		ids := map[brabo.Role]string{}
		for r, tok := range tokens {
			ids[r] = e.memberID(tok)
		}
		ranks := []brabo.Role{"developer", "maintainer", "owner"}
		for _, typ := range brabo.ActionTypes() {
			if typ == brabo.ContainerStart || typ == brabo.ContainerHandoff {
				// Refused at the proposal in this local project (409
				// not_container_project); their maintainer minimum is
				// tested in a container project (e2e_containerfloor_test.go).
				continue
			}
			p := payloads[typ]
			if p == nil {
				p = map[string]any{}
			}
			proposer := e.agent
			if typ == brabo.ContainerStop || typ == brabo.ContainerRemove {
				proposer = e.admin // a human's click only
			}
			a := e.propose(proposer, string(typ), p)
			if a["status"] != "pending" {
				t.Fatalf("%s: want pending (no rule approves it), got %v", typ, a["status"])
			}
			id := a["id"].(string)
			min := minRole[typ]
			before := e.written()
			for _, r := range ranks {
				if r == min {
					break
				}
				for _, d := range decisions(id) {
					e.refused(d.method, d.path, tokens[r], d.body, 403, "forbidden_role")
				}
			}
			e.unchanged(before, string(typ)+": clicks below the minimum role")
			if s := e.statusOf(id); s != "pending" {
				t.Fatalf("%s: %s after refused clicks", typ, s)
			}
			// The minimum role decides. A terminal action is approved (and
			// runs with the developer's credential); the rest are denied, so
			// that nothing leaves the machine.
			if typ == brabo.Terminal {
				d := e.ok("POST", "/v1/actions/"+id+"/approve", tokens[min], nil, 200)
				if str(d, "action", "status") != "executed" || str(d, "action", "decidedBy") != ids[min] {
					t.Fatalf("a developer approving a terminal action: %v", d)
				}
				if _, err := os.Stat(filepath.Join(e.root, "by-dev.txt")); err != nil {
					t.Fatal("the developer's approval did not run the command")
				}
				continue
			}
			d := e.ok("POST", "/v1/actions/"+id+"/deny", tokens[min], map[string]any{"reason": "not now"}, 200)
			if str(d, "action", "status") != "denied" || str(d, "action", "decidedBy") != ids[min] {
				t.Fatalf("%s denied by a %s: %v", typ, min, d)
			}
		}

		// Spend needs an owner to approve; the owner's approval is recorded
		// as the owner's.
		spend := e.propose(e.agent, "spend", map[string]any{"amount": "1"})["id"].(string)
		e.refused("POST", "/v1/actions/"+spend+"/approve", e.maintainer, nil, 403, "forbidden_role")
		d := e.ok("POST", "/v1/actions/"+spend+"/approve", e.admin, nil, 200)
		if d["outcome"] != "approved" || str(d, "action", "decidedBy") != ids["owner"] {
			t.Fatalf("the owner approving spend: %v", d)
		}
		if ev := e.eventsOf(spend, brabo.EventActionApproved); len(ev) != 1 || ev[0].ActorID != ids["owner"] {
			t.Fatalf("approved events: %v", ev)
		}
		// A maintainer may approve a git_push a developer may not.
		push := e.propose(e.agent, "git_push", map[string]any{"branch": "main"})["id"].(string)
		e.refused("POST", "/v1/actions/"+push+"/approve", e.developer, nil, 403, "forbidden_role")
		if d := e.ok("POST", "/v1/actions/"+push+"/approve", e.maintainer, nil, 200); d["outcome"] != "approved" {
			t.Fatalf("a maintainer approving a push: %v", d)
		}
	})
}

func TestProposalsAreDecidedWithThePrincipalsRole(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		// A member proposes for themself: a developer cannot push.
		a := e.propose(e.developer, "git_push", map[string]any{"branch": "main"})
		if a["status"] != "denied" || a["reason"] != "iam: git_push requires maintainer" {
			t.Fatalf("a developer's push: %v", a)
		}
		// An agent acts for the member who created it: a maintainer's agent
		// cannot spend, the owner's can propose it.
		helper, _ := e.newAgent(e.maintainer, "helper")
		if a := e.propose(helper, "spend", map[string]any{"amount": "1"}); a["status"] != "denied" || a["reason"] != "iam: spend requires owner" {
			t.Fatalf("a maintainer's agent spending: %v", a)
		}
		if a := e.propose(e.agent, "spend", map[string]any{"amount": "1"}); a["status"] != "pending" {
			t.Fatalf("the owner's agent spending: %v", a)
		}
		// The file cannot grant what IAM denies.
		e.setPermissions(`{"allow": ["GitPush()", "Spend()"]}`)
		if a := e.propose(helper, "spend", map[string]any{"amount": "1"}); a["status"] != "denied" {
			t.Fatalf("allow granted what IAM denies: %v", a)
		}
		if a := e.propose(e.developer, "git_push", map[string]any{"branch": "main"}); a["status"] != "denied" {
			t.Fatalf("allow granted a developer's push: %v", a)
		}
	})
}

func TestPermissionsAndAutonomyNeedMaintainer(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"deny": ["Terminal(curl)"]}`)
		before := e.written()
		e.refused("PUT", e.pp("/permissions"), e.developer, `{"allow": ["Terminal(curl)"]}`, 403, "forbidden_role")
		e.refused("PUT", e.pp("/permissions"), e.developer, `{}`, 403, "forbidden_role")
		auto := e.pp("/agents/" + e.agentID + "/autonomy")
		for _, rule := range []map[string]any{
			{"actionType": "*", "mode": "auto_approve"},
			{"actionType": "terminal", "mode": "auto_approve"},
			{"actionType": "git_push", "mode": "deny"},
		} {
			e.refused("PUT", auto, e.developer, rule, 403, "forbidden_role")
		}
		e.refused("PUT", e.pp("/container"), e.developer, map[string]any{"running": false}, 403, "forbidden_role")
		e.refused("POST", e.pp("/agents"), e.developer, map[string]any{"name": "mine"}, 403, "forbidden_role")
		e.refused("POST", e.pp("/members"), e.developer, map[string]any{"name": "x", "role": "developer"}, 403, "forbidden_role")
		e.refused("POST", e.pp("/members"), e.maintainer, map[string]any{"name": "x", "role": "owner"}, 403, "forbidden_role")
		e.refused("POST", "/v1/projects", e.maintainer, map[string]any{"slug": "side", "mode": "local", "root": t.TempDir()}, 403, "forbidden_role")
		e.unchanged(before, "a developer changing policy")
		// Reading is open to developers.
		if p := e.ok("GET", e.pp("/permissions"), e.developer, nil, 200); p["content"] != `{"deny": ["Terminal(curl)"]}` {
			t.Errorf("permissions as a developer: %v", p)
		}
		if r := e.ok("GET", auto, e.developer, nil, 200)["autonomy"].([]any); len(r) != 0 {
			t.Errorf("autonomy after refused writes: %v", r)
		}
		if a := e.terminal("touch manual.txt"); a["status"] != "pending" {
			t.Fatalf("without auto mode: %v", a)
		}

		// A maintainer turns auto mode on, and it takes effect.
		e.ok("PUT", auto, e.maintainer, map[string]any{"actionType": "*", "mode": "auto_approve"}, 200)
		if a := e.terminal("touch auto.txt"); a["status"] != "executed" || a["reason"] != "agent_autonomy: auto_approve (wildcard)" {
			t.Fatalf("in auto mode: %v", a)
		}
		if a := e.terminal("curl https://example.com"); a["status"] != "denied" {
			t.Fatalf("auto mode beat a deny: %v", a)
		}
		// And a developer cannot turn it off either.
		e.refused("PUT", auto, e.developer, map[string]any{"actionType": "*", "mode": "require_approval"}, 403, "forbidden_role")
		if r := e.ok("GET", auto, e.developer, nil, 200)["autonomy"].([]any); len(r) != 1 || r[0].(map[string]any)["mode"] != "auto_approve" {
			t.Errorf("autonomy: %v", r)
		}
	})
}

func TestOtherProjectsAreInvisible(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"deny": ["Terminal(curl)"]}`)
		blog := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "blog", "mode": "local", "root": t.TempDir()}, 201)["id"].(string)
		outsider := e.ok("POST", "/v1/projects/"+blog+"/members", e.admin, map[string]any{"name": "olga", "role": "owner"}, 201)["token"].(string)
		blogAgent := e.ok("POST", "/v1/projects/"+blog+"/agents", e.admin, map[string]any{"name": "blogger"}, 201)["token"].(string)
		pending := e.terminal("touch a")["id"].(string)
		mine := e.ok("POST", "/v1/projects/"+blog+"/actions", outsider, map[string]any{"type": "terminal", "payload": map[string]any{"command": "touch b"}}, 201)
		if mine["projectId"] != blog {
			t.Fatalf("the outsider's own project: %v", mine)
		}

		before := e.written()
		bodies := map[string]any{
			"POST " + e.pp("/members"):                      map[string]any{"name": "eve", "role": "owner"},
			"POST " + e.pp("/agents"):                       map[string]any{"name": "intruder"},
			"PUT " + e.pp("/container"):                     map[string]any{"running": false},
			"PUT " + e.pp("/permissions"):                   `{"allow": ["Terminal(curl)"]}`,
			"PUT " + e.pp("/agents/"+e.agentID+"/autonomy"): map[string]any{"actionType": "*", "mode": "auto_approve"},
			"POST " + e.pp("/actions"):                      map[string]any{"type": "terminal", "payload": map[string]any{"command": "echo hi"}},
			"POST /v1/actions/" + pending + "/deny":         map[string]any{"reason": "mine now"},
		}
		n := 0
		task := e.ok("POST", e.pp("/tasks"), e.developer, map[string]any{"title": "Add login"}, 201)["id"].(string)
		bodies["POST "+e.pp("/tasks")] = map[string]any{"title": "intrude"}
		for _, op := range operations(t, map[string]string{"project": e.project, "agent": e.agentID, "action": pending, "task": task,
			"member": e.memberID(e.developer), "session": "ses_0000"}) {
			switch op[1] {
			case "/v1/projects", "/v1/me", "/v1/queue", "/v1/sessions", "/v1/containers":
				continue // not about one project
			}
			n++
			for _, tok := range []string{outsider, blogAgent} {
				status, out := e.call(op[0], op[1], tok, bodies[op[0]+" "+op[1]])
				if status != 404 || out["code"] != "not_found" {
					// An agent is refused deciding before anything is looked
					// up; that reveals nothing either.
					if tok == blogAgent && status == 403 && out["code"] == "forbidden_role" {
						continue
					}
					t.Errorf("%s %s as another project's member or agent: %d %v, want 404", op[0], op[1], status, out)
				}
			}
		}
		if n < 18 {
			t.Fatalf("only %d project operations checked", n)
		}
		e.unchanged(before, "another project's member")
		if s := e.statusOf(pending); s != "pending" {
			t.Fatalf("the action is %s", s)
		}
		// A missing action and a foreign one answer alike.
		_, foreign := e.call("GET", "/v1/actions/"+pending, outsider, nil)
		_, missing := e.call("GET", "/v1/actions/act_000000000000000000000000", outsider, nil)
		if foreign["code"] != missing["code"] {
			t.Errorf("foreign %v vs missing %v", foreign, missing)
		}
		// Listings do not leak either.
		for _, x := range e.ok("GET", "/v1/queue", outsider, nil, 200)["actions"].([]any) {
			if x.(map[string]any)["projectId"] != blog {
				t.Errorf("the outsider's queue holds %v", x)
			}
		}
		projects := e.ok("GET", "/v1/projects", outsider, nil, 200)["projects"].([]any)
		if len(projects) != 1 || projects[0].(map[string]any)["id"] != blog {
			t.Errorf("the outsider's projects: %v", projects)
		}
		// The admin owns both, yet an agent of one is not reachable through
		// the other's path.
		e.refused("GET", "/v1/projects/"+blog+"/agents/"+e.agentID+"/autonomy", e.admin, nil, 404, "not_found")
		e.refused("PUT", "/v1/projects/"+blog+"/agents/"+e.agentID+"/autonomy", e.admin, map[string]any{"actionType": "*", "mode": "auto_approve"}, 404, "not_found")
		e.refused("GET", "/v1/projects/"+blog+"/agents/"+e.agentID+"/patterns", e.admin, nil, 404, "not_found")
		e.refused("DELETE", "/v1/projects/"+blog+"/agents/"+e.agentID+"/patterns?pattern=Terminal(ls)", e.admin, nil, 404, "not_found")
		// And the shop's members see none of the blog.
		e.refused("GET", "/v1/actions/"+mine["id"].(string), e.maintainer, nil, 404, "not_found")
		e.refused("GET", "/v1/projects/"+blog+"/events", e.maintainer, nil, 404, "not_found")
		e.refused("GET", "/v1/projects/"+blog+"/permissions", e.developer, nil, 404, "not_found")
		e.refused("POST", "/v1/projects/"+blog+"/actions", e.agent, map[string]any{"type": "terminal", "payload": map[string]any{"command": "echo hi"}}, 404, "not_found")
	})
}
