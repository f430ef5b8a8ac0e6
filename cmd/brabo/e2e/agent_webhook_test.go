package e2e

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/notify"
)

// TestAgentSendsTheWebhookServeSends: `brabo agent` is wired as `brabo
// serve` is (internal/app), so an action its dev agent proposes that waits
// for a human reaches the project's webhook as one proposed through
// serve's API does: the same event, the same fields, signed with the
// project's secret, at a real local receiver. Before the one wiring the
// agent process had no notifier and sent nothing.
func TestAgentSendsTheWebhookServeSends(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server and a real agent process")
	}
	hooks := &hook{}
	recv := httptest.NewServer(hooks)
	defer recv.Close()
	data, root := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)", "Terminal(echo)"]}`), 0o644)
	gitProject(t, root)

	srv := startServe(t, data)
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	bot := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "ci-bot"}, 201)["token"].(string)
	srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-api"}, 201)
	secret, _ := srv.must(t, "PUT", "/v1/projects/"+project+"/webhooks", admin, map[string]any{"webhooks": []map[string]any{
		{"url": recv.URL + "/brabo", "format": "json"}}}, 200)["secret"].(string)
	if secret == "" {
		t.Fatal("the json webhook has no secret")
	}
	served := srv.must(t, "POST", "/v1/projects/"+project+"/actions", bot,
		map[string]any{"type": "terminal", "payload": map[string]any{"command": "touch served.txt"}}, 201)
	if served["status"] != "pending" {
		t.Fatalf("the served proposal: %v", served)
	}
	fromServe := hooks.forAction(t, served["id"].(string), 1)[0]
	srv.must(t, "POST", "/v1/projects/"+project+"/tasks", admin, map[string]any{"title": "Create made.txt"}, 201)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()

	// The same data folder, now held by brabo agent: its dev agent takes
	// the task and proposes the command that waits.
	agent := exec.Command(braboBin, "agent", "--data", data, "--model", scriptedModel(t, agentScript))
	agent.Env = append(os.Environ(), "BRABO_DB=", "TMPDIR="+t.TempDir())
	logs := &logBuffer{}
	agent.Stdout, agent.Stderr = logs, logs
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { agent.Process.Kill(); agent.Wait() }()
	var fromAgent hookMessage
	deadline := time.Now().Add(60 * time.Second)
	for fromAgent.body == nil {
		if time.Now().After(deadline) {
			t.Fatalf("brabo agent sent no webhook for its dev agent's pending command; it sent:\n%s\n--- its log:\n%s", hooks.all(), logs.String())
		}
		hooks.mu.Lock()
		for _, m := range hooks.got {
			if strings.Contains(string(m.body), "touch made.txt") {
				fromAgent = m
			}
		}
		hooks.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}

	var a, s map[string]any
	if err := json.Unmarshal(fromAgent.body, &a); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(fromServe.body, &s)
	if a["event"] != s["event"] || a["event"] == nil {
		t.Errorf("the agent's webhook is event %v, serve's %v", a["event"], s["event"])
	}
	keys := func(m any) []string {
		var out []string
		for k := range m.(map[string]any) {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(keys(a), keys(s)) || !slices.Equal(keys(a["action"]), keys(s["action"])) {
		t.Errorf("the agent's webhook has the fields %v / action %v; serve's %v / %v", keys(a), keys(a["action"]), keys(s), keys(s["action"]))
	}
	act := a["action"].(map[string]any)
	if act["status"] != "pending" || act["agent"] != "dev-api" || !strings.HasPrefix(act["url"].(string), "http") {
		t.Errorf("the agent's webhook action: %v", act)
	}
	for _, m := range []hookMessage{fromServe, fromAgent} {
		ts := m.header.Get(notify.HeaderTimestamp)
		var at int64
		json.Unmarshal([]byte(ts), &at)
		if got := m.header.Get(notify.HeaderSignature); got == "" || got != notify.Sign(secret, at, m.body) {
			t.Errorf("a webhook's signature %q does not verify with the project's secret", got)
		}
	}
}
