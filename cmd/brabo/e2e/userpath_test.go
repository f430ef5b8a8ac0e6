package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The README's user path with --json, in a fresh home: brabo serve with
// its default data folder, brabo init --agent claude in a new git folder,
// two tool calls through Claude Code's hook as the agent makes them, then
// brabo queue, show, approve, deny --reason and log, each answer read as
// the JSON it says it is. TestREADME runs the same path as the README
// writes it and checks the lines for people; this checks the shapes a
// script reads, and that the hook's answers are what was decided.
func TestTheUserPathWithJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "BRABO_") && !strings.HasPrefix(name, "XDG_") && name != "HOME" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home)
	srv := startServeIn(t, home, env)
	if srv.token == "" {
		t.Fatalf("the first start printed no admin token:\n%s", strings.Join(srv.out, "\n"))
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "state", "brabo", "brabo.db")); err != nil {
		t.Fatalf("the database is not in the fresh home's default data folder: %v", err)
	}
	env = append(env, "BRABO_URL="+srv.url, "BRABO_TOKEN="+srv.token)
	shop := filepath.Join(home, "shop")
	if err := os.Mkdir(shop, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", shop, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	brabo := func(v any, args ...string) {
		t.Helper()
		r := runBraboEnv(t, shop, env, args...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("brabo %q: %s", args, r)
		}
		if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
			t.Fatalf("brabo %q printed no JSON: %v\n%s", args, err, r)
		}
	}

	var ini struct {
		Project            struct{ ID, Slug, Root string }
		Created            bool
		PermissionsWritten bool
		Hook               *struct {
			Agent, Scope               string
			Installed, OnDisk, Reaches bool
		}
	}
	brabo(&ini, "init", "--agent", "claude", "--json")
	if !strings.HasPrefix(ini.Project.ID, "prj_") || ini.Project.Slug != "shop" || ini.Project.Root != shop || !ini.Created || !ini.PermissionsWritten ||
		ini.Hook == nil || ini.Hook.Agent != "claude" || ini.Hook.Scope != "project" || !ini.Hook.Installed || !ini.Hook.OnDisk || !ini.Hook.Reaches {
		t.Fatalf("init --json: %+v %+v", ini, ini.Hook)
	}
	brabo(&ini, "init", "--json")
	if ini.Created || ini.PermissionsWritten || ini.Project.Slug != "shop" || ini.Hook != nil {
		t.Fatalf("init --json again: %+v", ini)
	}

	// The agent's two calls, as the README makes them: Claude Code's
	// PreToolUse hook, the command its settings name, waiting for a human.
	b, err := os.ReadFile(filepath.Join(shop, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var settings struct {
		Hooks map[string][]struct{ Hooks []struct{ Command string } }
	}
	if err := json.Unmarshal(b, &settings); err != nil || len(settings.Hooks["PreToolUse"]) == 0 {
		t.Fatalf("Claude Code's settings: %v\n%s", err, b)
	}
	hook := settings.Hooks["PreToolUse"][0].Hooks[0].Command
	type answer struct {
		out  bytes.Buffer
		done chan error
	}
	ask := func(command string) *answer {
		call, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": shop,
			"tool_name": "Bash", "tool_input": map[string]string{"command": command}})
		cmd := exec.Command("sh", "-c", hook)
		cmd.Dir, cmd.Env, cmd.Stdin = shop, env, bytes.NewReader(call)
		a := &answer{done: make(chan error, 1)}
		cmd.Stdout = &a.out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		go func() { a.done <- cmd.Wait() }()
		return a
	}
	changelog, todo := ask("touch CHANGELOG.md"), ask("touch TODO.md")

	type action struct {
		ID, Status, Type, ProjectID, Reason, Revision string
		Payload                                       struct{ Command string }
		Execution                                     *struct{ Mode, Runner string }
	}
	var q struct {
		Actions []action
		Total   int
	}
	for deadline := time.Now().Add(time.Minute); q.Total != 2; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's two calls never both waited: %+v", q)
		}
		brabo(&q, "queue", "--json")
	}
	ids := map[string]string{}
	for _, a := range q.Actions {
		if a.Status != "pending" || a.Type != "terminal" || a.ProjectID != ini.Project.ID || !strings.HasPrefix(a.ID, "act_") {
			t.Fatalf("queue --json: %+v", a)
		}
		ids[a.Payload.Command] = a.ID
	}
	if len(ids) != 2 || ids["touch CHANGELOG.md"] == "" || ids["touch TODO.md"] == "" {
		t.Fatalf("queue --json: %+v", q)
	}
	var one action
	brabo(&one, "show", "--json", ids["touch CHANGELOG.md"])
	if one.ID != ids["touch CHANGELOG.md"] || one.Status != "pending" || one.Payload.Command != "touch CHANGELOG.md" ||
		one.Execution == nil || one.Execution.Mode != "external" || one.Execution.Runner != "claude-code" {
		t.Fatalf("show --json: %+v", one)
	}

	var decided struct {
		Action  action
		Outcome string
	}
	// The approve names the card brabo show printed.
	brabo(&decided, "approve", "--json", "--revision", one.Revision, ids["touch CHANGELOG.md"])
	if decided.Action.ID != ids["touch CHANGELOG.md"] || decided.Action.Status != "approved" {
		t.Fatalf("approve --json: %+v", decided)
	}
	decided.Action = action{}
	brabo(&decided, "deny", "--json", "--reason", "no TODO files, use the issue tracker", ids["touch TODO.md"])
	if decided.Action.ID != ids["touch TODO.md"] || decided.Action.Status != "denied" || !strings.Contains(decided.Action.Reason, "no TODO files") {
		t.Fatalf("deny --json: %+v", decided)
	}
	for name, a := range map[string]*answer{"approved": changelog, "denied": todo} {
		select {
		case <-a.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("the hook of the %s call did not answer", name)
		}
		var out struct {
			HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
		}
		if err := json.Unmarshal(a.out.Bytes(), &out); err != nil {
			t.Fatalf("the hook's answer to the %s call: %v\n%s", name, err, a.out.String())
		}
		want := map[string]string{"approved": "allow", "denied": "deny"}[name]
		if d := out.HookSpecificOutput; d.PermissionDecision != want || name == "denied" && !strings.Contains(d.PermissionDecisionReason, "no TODO files") {
			t.Errorf("the hook answered the %s call %+v, want %s", name, d, want)
		}
	}
	brabo(&q, "queue", "--json")
	if q.Total != 0 || len(q.Actions) != 0 {
		t.Errorf("queue --json after both: %+v", q)
	}
	var log struct {
		Events []struct{ Type, ActionID string }
	}
	brabo(&log, "log", "--json", "--project", "shop")
	seen := map[string]int{}
	for _, e := range log.Events {
		seen[e.Type]++
	}
	if seen["proposed_action.created"] != 2 || seen["proposed_action.approved"] != 1 || seen["proposed_action.denied"] != 1 {
		t.Errorf("log --json: %v", seen)
	}
}
