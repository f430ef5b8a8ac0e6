package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/engine/devagent"
)

// The script a dev agent follows: look, then a command that needs approval,
// then (once resumed with its real output) finish.
const agentScript = `{"turns": [
  {"toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "ls"}}]},
  {"expectToolResult": "README.md",
   "toolCalls": [{"id": "c2", "name": "terminal", "arguments": {"command": "touch made.txt && echo made-it"}}]},
  {"expectToolResult": "made-it", "content": "Done: made.txt exists."}
]}`

// TestAWaitingAgentSurvivesARestart runs a scripted dev agent in the real
// `brabo serve`: it suspends on a pending action, the server is killed
// (SIGKILL) and restarted, the action is approved, and the agent resumes
// from its stored Ctx with the real output (DESIGN §7.2, §7.3).
func TestAWaitingAgentSurvivesARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts and kills real servers")
	}
	data, root := t.TempDir(), t.TempDir()
	model := scriptedModel(t, agentScript)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)", "Terminal(echo)"]}`), 0o644)
	gitProject(t, root)

	srv := startServe(t, data, "--model", model)
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-api"}, 201)["agent"].(map[string]any)["id"].(string)
	task := srv.must(t, "POST", "/v1/projects/"+project+"/tasks", admin, map[string]any{"title": "Create made.txt"}, 201)["id"].(string)

	// dev-api was created after the server started: it is picked up live.
	pending := waitFor(t, "the agent to suspend on a pending action", func() string {
		_, out, _ := srv.call("GET", "/v1/queue", admin, nil)
		for _, a := range asList(out["actions"]) {
			if strings.Contains(a["payload"].(map[string]any)["command"].(string), "touch made.txt") {
				return a["id"].(string)
			}
		}
		return ""
	})
	if _, err := os.Stat(filepath.Join(worktreeOf(root, agent), "made.txt")); err == nil {
		t.Fatal("the pending command ran")
	}
	suspended(t, srv, admin, project, pending)

	// Kill the server while the agent waits; its run must be durable.
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()
	srv = startServe(t, data, "--model", model)
	if _, err := os.Stat(filepath.Join(worktreeOf(root, agent), "README.md")); err != nil {
		t.Fatalf("the waiting agent's worktree is gone after the restart: %v", err)
	}
	d := srv.must(t, "POST", "/v1/actions/"+pending+"/approve", admin, nil, 200)
	if d["outcome"] != "approved" {
		t.Fatalf("approve: %v", d)
	}
	waitFor(t, "the task to be done", func() string {
		_, out, _ := srv.call("GET", "/v1/tasks/"+task, admin, nil)
		if out["status"] == "done" {
			return "done"
		}
		if out["status"] == "blocked" {
			t.Fatalf("the task was blocked: %v", out)
		}
		return ""
	})
	if _, err := os.Stat(filepath.Join(worktreeOf(root, agent), "made.txt")); err != nil {
		t.Fatal("the approved command did not run")
	}
	_, evs, _ := srv.call("GET", "/v1/projects/"+project+"/events", admin, nil)
	awaiting := 0
	for _, e := range asList(evs["events"]) {
		if e["type"] == "dev.awaiting_approval" {
			awaiting++
		}
	}
	if awaiting != 1 {
		t.Fatalf("%d dev.awaiting_approval events, want 1", awaiting)
	}
}

// gitProject makes root a git repository with its files committed on
// main: the dev agent works in a git worktree of it.
func gitProject(t *testing.T, root string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "initial"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

// worktreeOf is where the agent works in the project at root.
func worktreeOf(root, agentID string) string {
	return filepath.Join(root, filepath.FromSlash(devagent.WorktreeRel(agentID)))
}

func asList(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// suspended waits until the agent's suspension on actionID is stored:
// dev.awaiting_approval is appended in the transaction that saves the run
// and its Ctx. The action shows in the queue a moment earlier, while the
// turn is still running; a process killed then loses the turn (and the
// task is blocked with origin infra, as it should be).
func suspended(t *testing.T, s *server, token, project, actionID string) {
	t.Helper()
	waitFor(t, "the suspension on "+actionID+" to be stored", func() string {
		_, out, _ := s.call("GET", "/v1/projects/"+project+"/events", token, nil)
		for _, e := range asList(out["events"]) {
			if e["type"] == "dev.awaiting_approval" && e["actionId"] == actionID {
				return "stored"
			}
		}
		return ""
	})
}

// waitFor polls f until it returns something, for at most 30 s.
func waitFor(t *testing.T, what string, f func() string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if v := f(); v != "" {
			return v
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
	return ""
}
