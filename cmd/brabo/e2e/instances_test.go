package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pair is two `brabo serve --model …` on one PostgreSQL database, with a
// project, one dev agent and its task.
type pair struct {
	a, b                 *server
	admin                string
	project, agent, task string
	root, schema         string
	conn                 *pgx.Conn
}

// twoServers starts the pair on a fresh schema of BRABO_TEST_POSTGRES,
// with the info log (the agent leases are logged there).
func twoServers(t *testing.T) *pair {
	t.Helper()
	return twoServersWith(t, agentScript, `{"allow": ["Terminal(ls)", "Terminal(echo)"]}`)
}

// twoServersWith is twoServers with the scripted model's script and the
// project's permissions.json.
func twoServersWith(t *testing.T, agentScript, perms string) *pair {
	t.Helper()
	base := os.Getenv("BRABO_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("BRABO_TEST_POSTGRES is not set, and CI is: .ci/run sets it")
		}
		t.Skip("BRABO_TEST_POSTGRES is not set; .ci/run sets it, and under CI this fails")
	}
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("two_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); conn.Close(ctx) })
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db := u.String()

	root := t.TempDir()
	model := scriptedModel(t, agentScript)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(perms), 0o644)
	gitProject(t, root)

	p := &pair{root: root, schema: schema, conn: conn}
	p.a = startServe(t, t.TempDir(), "--db", db, "--model", model, "--log-level", "info")
	p.b = startServe(t, t.TempDir(), "--db", db, "--model", model, "--log-level", "info")
	p.admin = p.a.token
	if p.admin == "" || p.b.token != "" {
		t.Fatalf("the first server must print the admin token, the second none (a=%q b=%q)", p.a.token, p.b.token)
	}
	p.project = p.a.must(t, "POST", "/v1/projects", p.admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	p.agent = p.a.must(t, "POST", "/v1/projects/"+p.project+"/agents", p.admin, map[string]any{"name": "dev-api"}, 201)["agent"].(map[string]any)["id"].(string)
	p.task = p.a.must(t, "POST", "/v1/projects/"+p.project+"/tasks", p.admin, map[string]any{"title": "Create made.txt"}, 201)["id"].(string)
	return p
}

// pending waits for the agent to suspend on its touch and returns the
// action's id.
func (p *pair) pending(t *testing.T) string {
	t.Helper()
	id := waitFor(t, "the agent to suspend on a pending action", func() string {
		_, out, _ := p.b.call("GET", "/v1/queue", p.admin, nil)
		for _, x := range asList(out["actions"]) {
			if strings.Contains(x["payload"].(map[string]any)["command"].(string), "touch made.txt") {
				return x["id"].(string)
			}
		}
		return ""
	})
	suspended(t, p.b, p.admin, p.project, id)
	return id
}

// done waits for the task to be done, through s.
func (p *pair) done(t *testing.T, s *server) {
	t.Helper()
	waitFor(t, "the task to be done", func() string {
		_, out, _ := s.call("GET", "/v1/tasks/"+p.task, p.admin, nil)
		if out["status"] == "blocked" {
			t.Fatalf("the task was blocked: %v", out)
		}
		if out["status"] == "done" {
			return "done"
		}
		return ""
	})
}

// holders are the servers whose log says they hold the agent's lease
// (and so run its actor).
func (p *pair) holders(servers ...*server) []*server {
	var out []*server
	for _, s := range servers {
		for _, l := range strings.Split(s.logs.String(), "\n") {
			if strings.Contains(l, "holding the agent's lease") && strings.Contains(l, "agent="+p.agent) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// killHolder kills (SIGKILL) the one server that runs the agent's actor
// and returns the other.
func (p *pair) killHolder(t *testing.T) (survivor *server) {
	t.Helper()
	h := p.holders(p.a, p.b)
	if len(h) != 1 {
		t.Fatalf("%d servers ran the agent's actor, want 1", len(h))
	}
	h[0].cmd.Process.Kill()
	h[0].cmd.Wait()
	if h[0] == p.a {
		return p.b
	}
	return p.a
}

// leaseOwner is the owner of the agent's lease in the database.
func (p *pair) leaseOwner(t *testing.T) string {
	t.Helper()
	var owner string
	err := p.conn.QueryRow(context.Background(), "SELECT owner FROM "+p.schema+".agent_leases WHERE agent_id = $1", p.agent).Scan(&owner)
	if err != nil {
		t.Fatalf("the agent's lease: %v", err)
	}
	return owner
}

// eventCounts counts the project's events by type.
func (p *pair) eventCounts(t *testing.T, s *server) map[string]int {
	t.Helper()
	_, evs, _ := s.call("GET", "/v1/projects/"+p.project+"/events", p.admin, nil)
	count := map[string]int{}
	for _, e := range asList(evs["events"]) {
		count[e["type"].(string)]++
	}
	return count
}

// TestTwoServersOnOnePostgresDatabase runs two `brabo serve --model …` on
// one PostgreSQL database (DESIGN §7.3): the agent suspends on a pending
// action proposed through either, the action is approved through B, and
// the agent resumes with the real output — whichever process holds it.
// Only one of the two ever runs the agent's actor: the one holding its
// lease (DESIGN §7.2).
func TestTwoServersOnOnePostgresDatabase(t *testing.T) {
	p := twoServers(t)
	pending := p.pending(t)
	if d := p.b.must(t, "POST", "/v1/actions/"+pending+"/approve", p.admin, nil, 200); d["outcome"] != "approved" {
		t.Fatalf("approve through B: %v", d)
	}
	p.done(t, p.a)
	if _, err := os.Stat(filepath.Join(worktreeOf(p.root, p.agent), "made.txt")); err != nil {
		t.Fatal("the approved command did not run")
	}
	// Exactly one suspension and one resumption: the log has one awaiting
	// event and the task moved to done once.
	if count := p.eventCounts(t, p.a); count["dev.awaiting_approval"] != 1 || count["action.executed"] != 2 || count["backlog.task_status_changed"] != 2 {
		t.Fatalf("events %v: want one suspension, two executed commands (ls, then the approved touch) and the task moved twice (in progress, done)", count)
	}
	if h := p.holders(p.a, p.b); len(h) != 1 {
		t.Fatalf("%d servers ran the agent's actor, want 1\nA:\n%s\nB:\n%s", len(h), p.a.logs, p.b.logs)
	} else if owner := p.leaseOwner(t); !strings.Contains(h[0].logs.String(), "owner="+owner) {
		t.Fatalf("the lease is %s's, not the one of the server that ran the actor", owner)
	}
}

// TestTwoServersOneDiesTheOtherTakesOver: the server that runs the agent
// is killed (SIGKILL: nothing is released) while the agent waits for a
// decision; the other takes the agent over once its lease runs out,
// restores the waiting run, and the approval made through it resumes the
// agent with the real output.
func TestTwoServersOneDiesTheOtherTakesOver(t *testing.T) {
	t.Setenv("BRABO_AGENT_LEASE", "2s")
	p := twoServers(t)
	pending := p.pending(t)
	survivor := p.killHolder(t)
	waitFor(t, "the survivor to take the agent over", func() string {
		if len(p.holders(survivor)) == 1 {
			return "yes"
		}
		return ""
	})
	if d := survivor.must(t, "POST", "/v1/actions/"+pending+"/approve", p.admin, nil, 200); d["outcome"] != "approved" {
		t.Fatalf("approve through the survivor: %v", d)
	}
	p.done(t, survivor)
	if _, err := os.Stat(filepath.Join(worktreeOf(p.root, p.agent), "made.txt")); err != nil {
		t.Fatal("the approved command did not run")
	}
	if count := p.eventCounts(t, survivor); count["dev.awaiting_approval"] != 1 || count["backlog.task_status_changed"] != 2 {
		t.Fatalf("events %v: want one suspension and the task moved twice (in progress, done)", count)
	}
}

// TestTwoServersKillMidTurnTheOtherBlocksTheTask: the server that runs the
// agent is killed (SIGKILL) in the middle of the agent's turn, while an
// auto-approved command of that turn runs; the run stays working. The
// other server takes the agent over once its lease runs out and blocks the
// task with origin infra, once, instead of leaving it in progress forever.
func TestTwoServersKillMidTurnTheOtherBlocksTheTask(t *testing.T) {
	t.Setenv("BRABO_AGENT_LEASE", "2s")
	const slowScript = `{"turns": [
  {"toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "sleep 20"}}]},
  {"content": "Done."}
]}`
	p := twoServersWith(t, slowScript, `{"allow": ["Terminal(sleep)"]}`)
	waitFor(t, "the agent to run its slow command", func() string {
		if p.eventCounts(t, p.a)["proposed_action.created"] > 0 {
			return "yes"
		}
		return ""
	})
	survivor := p.killHolder(t)
	var task map[string]any
	waitFor(t, "the survivor to block the cut turn's task", func() string {
		_, task, _ = survivor.call("GET", "/v1/tasks/"+p.task, p.admin, nil)
		if task["status"] == "blocked" {
			return "blocked"
		}
		return ""
	})
	if task["blockedOrigin"] != "infra" || !strings.Contains(fmt.Sprint(task["blockedReason"]), "mid-turn") {
		t.Fatalf("the blocked task: %v", task)
	}
	if len(p.holders(survivor)) != 1 {
		t.Fatalf("the task was blocked by a server that does not hold the agent:\n%s", survivor.logs)
	}
	time.Sleep(time.Second) // several scans: it is blocked once
	if count := p.eventCounts(t, survivor); count["backlog.task_blocked"] != 1 {
		t.Fatalf("events %v: want the task blocked once", count)
	}
}
