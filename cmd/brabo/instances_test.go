package main

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

// TestTwoServersOnOnePostgresDatabase runs two `brabo serve --model …` on
// one PostgreSQL database (DESIGN §7.3): the agent suspends on a pending
// action proposed through either, the action is approved through B, and
// the agent resumes with the real output — whichever process holds it.
func TestTwoServersOnOnePostgresDatabase(t *testing.T) {
	base := os.Getenv("BRABO_TEST_POSTGRES")
	if base == "" {
		t.Skip("BRABO_TEST_POSTGRES is not set; .ci/run sets it")
	}
	if testing.Short() {
		t.Skip("starts real servers")
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
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(agentScript), 0o644)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)", "Terminal(echo)"]}`), 0o644)
	gitProject(t, root)

	a := startServe(t, t.TempDir(), "--db", db, "--model", "scripted:"+script)
	b := startServe(t, t.TempDir(), "--db", db, "--model", "scripted:"+script)
	admin := a.token
	if admin == "" || b.token != "" {
		t.Fatalf("the first server must print the admin token, the second none (a=%q b=%q)", a.token, b.token)
	}
	project := a.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	agent := a.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-api"}, 201)["agent"].(map[string]any)["id"].(string)
	task := a.must(t, "POST", "/v1/projects/"+project+"/tasks", admin, map[string]any{"title": "Create made.txt"}, 201)["id"].(string)

	pending := waitFor(t, "the agent to suspend on a pending action", func() string {
		_, out, _ := b.call("GET", "/v1/queue", admin, nil)
		for _, x := range asList(out["actions"]) {
			if strings.Contains(x["payload"].(map[string]any)["command"].(string), "touch made.txt") {
				return x["id"].(string)
			}
		}
		return ""
	})
	if d := b.must(t, "POST", "/v1/actions/"+pending+"/approve", admin, nil, 200); d["outcome"] != "approved" {
		t.Fatalf("approve through B: %v", d)
	}
	waitFor(t, "the task to be done", func() string {
		_, out, _ := a.call("GET", "/v1/tasks/"+task, admin, nil)
		if out["status"] == "blocked" {
			t.Fatalf("the task was blocked: %v", out)
		}
		if out["status"] == "done" {
			return "done"
		}
		return ""
	})
	if _, err := os.Stat(filepath.Join(worktreeOf(root, agent), "made.txt")); err != nil {
		t.Fatal("the approved command did not run")
	}
	// Exactly one suspension and one resumption: the log has one awaiting
	// event and the task moved to done once.
	_, evs, _ := a.call("GET", "/v1/projects/"+project+"/events", admin, nil)
	count := map[string]int{}
	for _, e := range asList(evs["events"]) {
		count[e["type"].(string)]++
	}
	if count["dev.awaiting_approval"] != 1 || count["action.executed"] != 2 || count["backlog.task_status_changed"] != 2 {
		t.Fatalf("events %v: want one suspension, two executed commands (ls, then the approved touch) and the task moved twice (in progress, done)", count)
	}
}
