package e2e

import (
	"github.com/brabo-dev/brabo/engine/enginetest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The script every QA sub-agent follows (one model serves them all, and
// each conversation replays it from its start): a compound command whose
// second segment the allow list does not cover, then, once resumed with
// its real output, the verdict.
const qaScript = `{"turns": [
  {"toolCalls": [{"id": "q1", "name": "terminal", "arguments": {"command": "ls && touch qa-ran.txt"}}]},
  {"expectToolResult": "README.md", "content": "verdict: pass"}
]}`

// project makes a git repository with a README and a permissions.json
// that allows ls, and a project on it.
func newLocalProject(t *testing.T, srv *server, admin string) (id, root string) {
	t.Helper()
	root = t.TempDir()
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)"]}`), 0o644)
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	id = srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	return id, root
}

// gitRun runs git in dir (enginetest.Git).
func gitRun(t *testing.T, dir string, args ...string) string { return enginetest.Git(t, dir, args...) }

// devWorkedOn leaves the task as a dev agent does once its PR is open: a
// commit on main, and the task's work committed on its branch
// brabo/<task>, which no worktree holds any more.
func devWorkedOn(t *testing.T, root, task string) {
	t.Helper()
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "--quiet", "-m", "initial")
	dev := filepath.Join(t.TempDir(), "dev")
	gitRun(t, root, "worktree", "add", "--quiet", "-b", "brabo/"+task, dev)
	os.WriteFile(filepath.Join(dev, "checkout.txt"), []byte("the checkout page\n"), 0o644)
	gitRun(t, dev, "add", "-A")
	gitRun(t, dev, "commit", "--quiet", "-m", "checkout page")
	gitRun(t, root, "worktree", "remove", dev)
}

// pendingOf waits for a pending action of the agent and returns its id.
func pendingOf(t *testing.T, srv *server, admin, agentID, what string) string {
	t.Helper()
	return waitFor(t, what, func() string {
		_, out, _ := srv.call("GET", "/v1/queue", admin, nil)
		for _, a := range asList(out["actions"]) {
			if a["actorId"] == agentID && a["status"] == "pending" {
				return a["id"].(string)
			}
		}
		return ""
	})
}

func eventsOf(t *testing.T, srv *server, admin, project string) []map[string]any {
	t.Helper()
	return asList(srv.must(t, "GET", "/v1/projects/"+project+"/events", admin, nil, 200)["events"])
}

func countEvents(evs []map[string]any) map[string]int {
	n := map[string]int{}
	for _, e := range evs {
		n[e["type"].(string)]++
	}
	return n
}

// TestAGateSuspendsAndResumesThroughServe is ADR 0057 through the real
// `brabo serve --model scripted:…`: a developer triggers the QA gate on a
// task whose dev's work is on its branch; the sub-agents work in the
// gate's checkout of that branch; qa-automation proposes `ls && touch qa-ran.txt` (touch is outside
// the allow list), so the area suspends — no verdict, no failure, the task
// not blocked. The server is killed and restarted while it waits.
// Approving the action through the API resumes it with the
// real output, and the area goes on to qa-performance-security (in auto
// mode, so the same command runs at once for it) and completes with both
// verdicts. No delegation.failed is recorded.
func TestAGateSuspendsAndResumesThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	model := scriptedModel(t, qaScript)
	data := t.TempDir()
	srv := startServe(t, data, "--model", model)
	admin := srv.token
	project, root := newLocalProject(t, srv, admin)
	task := srv.must(t, "POST", "/v1/projects/"+project+"/tasks", admin, map[string]any{"title": "Checkout"}, 201)["id"].(string)
	untouched := srv.must(t, "POST", "/v1/projects/"+project+"/tasks", admin, map[string]any{"title": "Nobody worked on it"}, 201)["id"].(string)
	devWorkedOn(t, root, task)
	gateDir := filepath.Join(root, ".brabo", "worktrees", "gate-"+task)

	// Without its sub-agents the gate is refused, and the task untouched.
	if out := srv.must(t, "POST", "/v1/tasks/"+task+"/gate", admin, nil, 501); out["code"] != "not_configured" {
		t.Fatalf("a gate without sub-agents: %v", out)
	}
	qa := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "qa-automation"}, 201)
	perf := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "qa-performance-security"}, 201)
	qaID := qa["agent"].(map[string]any)["id"].(string)
	perfID := perf["agent"].(map[string]any)["id"].(string)
	// qa-performance-security runs in auto mode, so the same command
	// (one model serves both, replaying one script) runs at once for it:
	// only qa-automation waits for a human.
	srv.must(t, "PUT", "/v1/projects/"+project+"/agents/"+perfID+"/autonomy", admin,
		map[string]any{"actionType": "*", "mode": "auto_approve"}, 200)
	dev := srv.must(t, "POST", "/v1/projects/"+project+"/members", admin, map[string]any{"name": "dev", "role": "developer"}, 201)["token"].(string)

	// Agents may not trigger a gate; a developer may.
	if out := srv.must(t, "POST", "/v1/tasks/"+task+"/gate", qa["token"].(string), nil, 403); out["code"] != "forbidden_role" {
		t.Fatalf("an agent triggering a gate: %v", out)
	}
	if out := srv.must(t, "POST", "/v1/tasks/nope/gate", dev, nil, 404); out["code"] != "not_found" {
		t.Fatalf("a gate on an unknown task: %v", out)
	}
	// A task no dev agent worked on has no branch: refused at once, and
	// the task is not blocked.
	if out := srv.must(t, "POST", "/v1/tasks/"+untouched+"/gate", dev, nil, 400); out["code"] != "invalid_action" ||
		!strings.Contains(out["message"].(string), "has no branch") {
		t.Fatalf("a gate on a task with no branch: %v", out)
	}
	if out := srv.must(t, "GET", "/v1/tasks/"+untouched, admin, nil, 200); out["status"] != "todo" {
		t.Fatalf("the refused task is %v", out["status"])
	}
	start := srv.must(t, "POST", "/v1/tasks/"+task+"/gate", dev, nil, 202)
	if start["status"] != "started" || start["taskId"] != task || start["area"] != "qa" {
		t.Fatalf("trigger: %v", start)
	}

	first := pendingOf(t, srv, admin, qaID, "qa-automation to suspend on its compound command")
	waitFor(t, "delegation.awaiting_approval", func() string {
		if countEvents(eventsOf(t, srv, admin, project))["delegation.awaiting_approval"] == 1 {
			return "ok"
		}
		return ""
	})
	if _, err := os.Stat(filepath.Join(gateDir, "checkout.txt")); err != nil {
		t.Fatalf("the gate's checkout of the task's branch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(gateDir, "qa-ran.txt")); err == nil {
		t.Fatal("the pending command ran")
	}
	n := countEvents(eventsOf(t, srv, admin, project))
	if n["gate.completed"] != 0 || n["delegation.failed"] != 0 || n["delegation.completed"] != 0 {
		t.Fatalf("while it waits the area gives no verdict and does not fail: %v", n)
	}
	if tk := srv.must(t, "GET", "/v1/tasks/"+task, admin, nil, 200); tk["status"] == "blocked" {
		t.Fatalf("the waiting area blocked the task: %v", tk)
	}
	if out := srv.must(t, "POST", "/v1/tasks/"+task+"/gate", dev, nil, 409); out["code"] != "gate_in_progress" {
		t.Fatalf("a second gate on the waiting task: %v", out)
	}

	// Kill the server while the area waits: its in-flight state is
	// durable, and the restarted server takes it back.
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()
	srv = startServe(t, data, "--model", model)
	if out := srv.must(t, "POST", "/v1/tasks/"+task+"/gate", dev, nil, 409); out["code"] != "gate_in_progress" {
		t.Fatalf("a second gate on the waiting task after a restart: %v", out)
	}

	if d := srv.must(t, "POST", "/v1/actions/"+first+"/approve", admin, nil, 200); d["outcome"] != "approved" {
		t.Fatalf("approve: %v", d)
	}
	// qa-automation resumes with the real output (its script checks that
	// the result holds README.md) and gives its verdict; then
	// qa-performance-security runs the same script, auto-approved.
	var completed map[string]any
	waitFor(t, "gate.completed", func() string {
		for _, e := range eventsOf(t, srv, admin, project) {
			if e["type"] == "gate.completed" {
				completed = e
				return "ok"
			}
		}
		return ""
	})
	verdicts := asList(completed["payload"].(map[string]any)["verdicts"])
	if len(verdicts) != 2 || verdicts[0]["subAgent"] != "qa-automation" || verdicts[1]["subAgent"] != "qa-performance-security" ||
		verdicts[0]["verdict"] != "verdict: pass" || verdicts[1]["verdict"] != "verdict: pass" {
		t.Fatalf("gate.completed verdicts %v: want both, in order", verdicts)
	}
	// The approved command ran in the gate's checkout, not in the main
	// checkout, and the completed area removed the checkout.
	if a := srv.must(t, "GET", "/v1/actions/"+first, admin, nil, 200); a["status"] != "executed" {
		t.Fatalf("the approved command: %v", a)
	}
	if _, err := os.Stat(filepath.Join(root, "qa-ran.txt")); err == nil {
		t.Fatal("the approved command ran in the main checkout")
	}
	waitFor(t, "the gate's worktree to go", func() string {
		if _, err := os.Stat(gateDir); os.IsNotExist(err) {
			return "ok"
		}
		return ""
	})
	n = countEvents(eventsOf(t, srv, admin, project))
	if n["delegation.failed"] != 0 || n["backlog.task_blocked"] != 0 || n["delegation.awaiting_approval"] != 1 ||
		n["delegation.completed"] != 2 || n["gate.completed"] != 1 || n["proposed_action.approved"] != 1 {
		t.Fatalf("events %v: want one suspension, one human approval, two verdicts, one completion, no failure", n)
	}
	for _, a := range asList(srv.must(t, "GET", "/v1/projects/"+project+"/actions", admin, nil, 200)["actions"]) {
		if a["actorId"] == perfID && a["status"] != "executed" {
			t.Fatalf("qa-performance-security's action %v: want it auto-approved and executed", a)
		}
	}
	if tk := srv.must(t, "GET", "/v1/tasks/"+task, admin, nil, 200); tk["status"] == "blocked" {
		t.Fatalf("the task was blocked: %v", tk)
	}
}

// The dev lead's script: it proposes an execution plan, and once resumed
// with the decision's real result, answers.
const leadScript = `{"turns": [
  {"content": "Here is my plan.",
   "toolCalls": [{"id": "p1", "name": "propose_execution_plan", "arguments": {"plan": "two agents on api, they are independent", "agents": {"api": 2}}}]},
  {"expectToolResult": "the execution plan was approved", "content": "The plan is approved; two agents start on api."}
]}`

// TestTheDevLeadConversationThroughServe posts a message to the dev lead
// of the real `brabo serve --model scripted:…`: its reply proposes an
// execution plan, so the turn suspends on the pending action; approving
// it through the API resumes the turn, and the conversation read back
// holds the resumed turn's answer. Who may do what: a maintainer posts; a
// developer reads but may not post; an agent does neither.
func TestTheDevLeadConversationThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	model := scriptedModel(t, leadScript)
	srv := startServe(t, t.TempDir(), "--model", model)
	admin := srv.token
	project, _ := newLocalProject(t, srv, admin)
	msgs := "/v1/projects/" + project + "/lead/messages"
	if out := srv.must(t, "POST", msgs, admin, map[string]any{"text": "plan the work"}, 404); out["code"] != "not_found" ||
		!strings.Contains(out["message"].(string), "dev-lead") {
		t.Fatalf("a project without a dev lead: %v", out)
	}
	lead := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-lead"}, 201)
	leadID := lead["agent"].(map[string]any)["id"].(string)
	dev := srv.must(t, "POST", "/v1/projects/"+project+"/members", admin, map[string]any{"name": "dev", "role": "developer"}, 201)["token"].(string)

	if out := srv.must(t, "POST", msgs, dev, map[string]any{"text": "hi"}, 403); out["code"] != "forbidden_role" {
		t.Fatalf("a developer posting: %v", out)
	}
	for _, m := range []string{"POST", "GET"} {
		// A members' route of its own project does not exist for an agent.
		if out := srv.must(t, m, msgs, lead["token"].(string), map[string]any{"text": "hi"}, 404); out["code"] != "not_found" {
			t.Fatalf("an agent %s: %v", m, out)
		}
	}
	if c := srv.must(t, "GET", msgs, dev, nil, 200); len(asList(c["messages"])) != 0 || c["agentId"] != leadID {
		t.Fatalf("the conversation before any message: %v", c)
	}
	if out := srv.must(t, "POST", msgs, admin, map[string]any{"text": "  "}, 400); out["code"] != "invalid_action" {
		t.Fatalf("an empty message: %v", out)
	}

	turn := srv.must(t, "POST", msgs, admin, map[string]any{"text": "Plan the checkout work."}, 200)
	action, _ := turn["actionId"].(string)
	if turn["status"] != "awaiting_approval" || action == "" {
		t.Fatalf("the turn: %v; want it suspended on the plan", turn)
	}
	a := srv.must(t, "GET", "/v1/actions/"+action, admin, nil, 200)
	if a["status"] != "pending" || a["type"] != "propose_execution_plan" || a["actorId"] != leadID {
		t.Fatalf("the plan action: %v", a)
	}
	if out := srv.must(t, "POST", msgs, admin, map[string]any{"text": "and?"}, 409); out["code"] != "lead_awaiting_decision" {
		t.Fatalf("a message while the turn waits: %v", out)
	}
	c := srv.must(t, "GET", msgs, dev, nil, 200)
	if c["awaitingActionId"] != action {
		t.Fatalf("the conversation while it waits: %v", c)
	}

	if d := srv.must(t, "POST", "/v1/actions/"+action+"/approve", admin, nil, 200); d["outcome"] != "approved" {
		t.Fatalf("approve: %v", d)
	}
	waitFor(t, "the resumed turn in the conversation", func() string {
		c = srv.must(t, "GET", msgs, dev, nil, 200)
		ms := asList(c["messages"])
		if len(ms) > 0 && ms[len(ms)-1]["content"] == "The plan is approved; two agents start on api." {
			return "ok"
		}
		return ""
	})
	if _, waiting := c["awaitingActionId"]; waiting {
		t.Fatalf("the conversation still waits: %v", c)
	}
	ms := asList(c["messages"])
	roles := []string{}
	for _, m := range ms {
		roles = append(roles, m["role"].(string))
	}
	if strings.Join(roles, ",") != "user,assistant,tool,assistant" || ms[0]["content"] != "Plan the checkout work." ||
		!strings.Contains(ms[2]["content"].(string), "the execution plan was approved") {
		t.Fatalf("the conversation %v", ms)
	}
	n := countEvents(eventsOf(t, srv, admin, project))
	if n["agent.status"] != 1 || n["action.executed"] != 1 {
		t.Fatalf("events %v: want one suspension and the plan executed once", n)
	}
}

// Without --model the server runs no agents: the lead and gate APIs say
// so with a stable code.
func TestLeadsNeedAModel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	srv := startServe(t, t.TempDir())
	admin := srv.token
	project, _ := newLocalProject(t, srv, admin)
	task := srv.must(t, "POST", "/v1/projects/"+project+"/tasks", admin, map[string]any{"title": "Checkout"}, 201)["id"].(string)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/projects/" + project + "/lead/messages", map[string]any{"text": "hi"}},
		{"GET", "/v1/projects/" + project + "/lead/messages", nil},
		{"POST", "/v1/tasks/" + task + "/gate", nil},
	} {
		if out := srv.must(t, c.method, c.path, admin, c.body, 501); out["code"] != "not_configured" {
			t.Fatalf("%s %s: %v", c.method, c.path, out)
		}
	}
}

// After a restart the dev lead does not take back its suspended turn
// (DESIGN §7.5, declared gap): the decision made after the restart is
// recorded and executed once, unnarrated; the next message is not refused,
// it closes the orphaned turn and starts from the turns that had ended.
func TestTheDevLeadAfterARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts and kills real servers")
	}
	model := scriptedModel(t, leadScript)
	data := t.TempDir()
	srv := startServe(t, data, "--model", model)
	admin := srv.token
	project, _ := newLocalProject(t, srv, admin)
	srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-lead"}, 201)
	msgs := "/v1/projects/" + project + "/lead/messages"
	first := srv.must(t, "POST", msgs, admin, map[string]any{"text": "Plan the checkout work."}, 200)["actionId"].(string)

	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()
	srv = startServe(t, data, "--model", model)
	srv.must(t, "POST", "/v1/actions/"+first+"/approve", admin, nil, 200)
	waitFor(t, "the approved plan to execute", func() string {
		if a := srv.must(t, "GET", "/v1/actions/"+first, admin, nil, 200); a["status"] == "executed" {
			return "ok"
		}
		return ""
	})
	// The lead does not narrate the decision: the orphaned turn stays as
	// it was left.
	if c := srv.must(t, "GET", msgs, admin, nil, 200); len(asList(c["messages"])) != 2 {
		t.Fatalf("the orphaned turn changed: %v", c)
	}
	turn := srv.must(t, "POST", msgs, admin, map[string]any{"text": "Plan it again."}, 200)
	if turn["status"] != "awaiting_approval" || turn["actionId"] == first {
		t.Fatalf("the message after the restart: %v; want a new turn (the script proposes again)", turn)
	}
	ms := asList(srv.must(t, "GET", msgs, admin, nil, 200)["messages"])
	if len(ms) != 2 || ms[0]["content"] != "Plan it again." {
		t.Fatalf("the conversation %v: want the new turn only, without the orphaned one", ms)
	}
	if n := countEvents(eventsOf(t, srv, admin, project)); n["action.executed"] != 1 || n["agent.status"] != 2 {
		t.Fatalf("events %v: want the first plan executed once and two suspensions", n)
	}
}
