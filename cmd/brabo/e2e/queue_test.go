package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The queue from the terminal: brabo queue lists what waits, show prints
// it, approve runs it and deny hands the reason to the agent, each through
// the API with the member's token from BRABO_TOKEN or --token-file, the
// project by its slug, and --json printing the API's own answer.
func TestTheQueueFromTheTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow":[],"deny":[],"ask":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, t.TempDir())
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "coder"}, 201)["token"].(string)
	propose := func(cmd string) string {
		a := srv.must(t, "POST", "/v1/projects/"+project+"/actions", agent, map[string]any{"type": "terminal", "payload": map[string]any{"command": cmd}}, 201)
		if a["status"] != "pending" {
			t.Fatalf("%s: want pending, got %v", cmd, a)
		}
		return a["id"].(string)
	}
	first, second := propose("echo hello > greeting.txt"), propose("touch other.txt")
	url := []string{"--url", srv.url}

	r := runBraboAs(t, admin, append([]string{"queue"}, url...)...)
	if r.code != 0 || !strings.Contains(r.stdout, first+"  shop  terminal: echo hello > greeting.txt") ||
		!strings.Contains(r.stdout, second) || !strings.Contains(r.stdout, "2 pending") {
		t.Fatalf("queue:\n%s", r)
	}
	r = runBraboAs(t, admin, append([]string{"queue", "--json", "--project", "shop"}, url...)...)
	var q struct {
		Actions []struct{ ID, Status string }
		Total   int
	}
	if err := json.Unmarshal([]byte(r.stdout), &q); r.code != 0 || err != nil || q.Total != 2 || q.Actions[0].Status != "pending" {
		t.Fatalf("queue --json: %v\n%s", err, r)
	}
	if r := runBraboAs(t, admin, append([]string{"show", first}, url...)...); r.code != 0 || !strings.Contains(r.stdout, "status    pending") ||
		!strings.Contains(r.stdout, "command   echo hello > greeting.txt") {
		t.Fatalf("show:\n%s", r)
	}

	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(admin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The approve names the card's revision, as brabo show prints it;
	// without it, nothing is approved.
	r = runBraboAs(t, admin, append([]string{"show", first}, url...)...)
	rev := regexp.MustCompile(`revision  (\S+)`).FindStringSubmatch(r.stdout)
	if rev == nil {
		t.Fatalf("show prints no revision:\n%s", r)
	}
	if r := runBraboAs(t, "", append([]string{"approve", "--token-file", tokenFile, first}, url...)...); r.code != exitUsage || !strings.Contains(r.stderr, "--revision is required") {
		t.Fatalf("approve without --revision:\n%s", r)
	}
	r = runBraboAs(t, "", append([]string{"approve", "--token-file", tokenFile, "--revision", rev[1], first}, url...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "approved "+first+": executed") {
		t.Fatalf("approve:\n%s", r)
	}
	if b, err := os.ReadFile(filepath.Join(root, "greeting.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("the approved command did not run: %q %v", b, err)
	}
	if r := runBraboAs(t, admin, append([]string{"deny", second}, url...)...); r.code != exitUsage || !strings.Contains(r.stderr, "--reason is required") {
		t.Fatalf("deny without a reason:\n%s", r)
	}
	r = runBraboAs(t, admin, append([]string{"deny", "--json", "--reason", "not today", second}, url...)...)
	var d struct {
		Action struct{ Status, Reason string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); r.code != 0 || err != nil || d.Action.Status != "denied" || !strings.Contains(d.Action.Reason, "not today") {
		t.Fatalf("deny --json: %v\n%s", err, r)
	}
	if _, err := os.Stat(filepath.Join(root, "other.txt")); !os.IsNotExist(err) {
		t.Fatal("the denied command ran")
	}
	if r := runBraboAs(t, admin, append([]string{"queue"}, url...)...); r.code != 0 || !strings.Contains(r.stdout, "nothing waits") {
		t.Fatalf("queue after both:\n%s", r)
	}
	r = runBraboAs(t, admin, append([]string{"log", "--project", project}, url...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "proposed_action.created") || !strings.Contains(r.stdout, second) {
		t.Fatalf("log:\n%s", r)
	}
	r = runBraboAs(t, admin, append([]string{"agents", "create", "helper", "--project", "shop"}, url...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "agent helper created in shop") || !strings.Contains(r.stdout, "brb_") {
		t.Fatalf("agents create:\n%s", r)
	}
}

// A client command with no token, or with no server where it looks, says
// so in one line and exits 1; the old --addr still works, with a warning.
func TestClientCommandsSayWhatIsMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	r := runBraboAs(t, "", "queue", "--url", "http://127.0.0.1:1")
	if r.code != exitFailure || !strings.Contains(r.stderr, "no token: export BRABO_TOKEN=") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("no token:\n%s", r)
	}
	r = runBraboAs(t, "brb_x", "queue", "--url", "http://127.0.0.1:1")
	if r.code != exitFailure || !strings.Contains(r.stderr, "cannot reach brabo at http://127.0.0.1:1") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("no server:\n%s", r)
	}
	srv := startServe(t, t.TempDir())
	r = runBraboAs(t, srv.token, "queue", "--addr", strings.TrimPrefix(srv.url, "http://"))
	if r.code != 0 || !strings.Contains(r.stderr, "--addr is deprecated") || !strings.Contains(r.stdout, "nothing waits") {
		t.Fatalf("--addr:\n%s", r)
	}
}

// brabo init makes the folder a project with a starting permissions.json
// that only reads; a second run changes nothing.
func TestInitMakesTheFolderAProjectOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	srv := startServe(t, t.TempDir())
	dir := filepath.Join(t.TempDir(), "My Shop")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runBraboAs(t, srv.token, "init", "--url", srv.url, "--dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "created project my-shop") || !strings.Contains(r.stdout, "wrote permissions.json") {
		t.Fatalf("init:\n%s", r)
	}
	b, err := os.ReadFile(filepath.Join(dir, "permissions.json"))
	if err != nil || !strings.Contains(string(b), "Terminal(git status)") || strings.Contains(string(b), "npm test") {
		t.Fatalf("the starting permissions.json: %s %v", b, err)
	}
	r = runBraboAs(t, srv.token, "init", "--url", srv.url, "--dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "already: nothing changed") {
		t.Fatalf("init again:\n%s", r)
	}
	if got := srv.must(t, "GET", "/v1/projects", srv.token, nil, 200)["projects"].([]any); len(got) != 1 {
		t.Fatalf("projects after two inits: %v", got)
	}
}
