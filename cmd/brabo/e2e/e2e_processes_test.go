package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// TestGitHooksSettingEndToEnd: a project's git hooks are off until a
// maintainer turns them on (a developer cannot); with them off a
// pre-commit hook writing its environment does not run on an approved
// git_commit, with them on it runs — in the sandbox, where hooks run —,
// sees PATH, and none of the server's secrets. The change is an event
// naming the maintainer's setting.
func TestGitHooksSettingEndToEnd(t *testing.T) {
	secrets := map[string]string{"OPENAI_API_KEY": "sk-e2e-secret", "DATABASE_URL": "postgres://u:pw@db/e2e",
		"BRABO_TOKEN": "brb_e2e_secret"}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	if err := sandbox.Available(); err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatalf("BRABO_REQUIRE_SANDBOX is set and the sandbox is missing: %v", err)
		}
		t.Skip("the sandbox is missing (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
	}
	// brabo's own wiring runs the commands in the sandbox (the test
	// binary is its helper, TestMain).
	eachStore(t, func(t *testing.T, e *env) { gitHooksSetting(t, e, secrets) })
}

// gitHooksSetting is TestGitHooksSettingEndToEnd on one store.
func gitHooksSetting(t *testing.T, e *env, secrets map[string]string) {
	out := filepath.Join(e.root, "hook-env") // the sandbox writes the project, not elsewhere
	hook := filepath.Join(e.root, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nenv > '"+out+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit := func(file string) map[string]any {
		t.Helper()
		os.WriteFile(filepath.Join(e.root, file), []byte(file), 0o644)
		a := e.propose(e.agent, "git_commit", map[string]any{"message": "add " + file})
		d := e.ok("POST", "/v1/actions/"+a["id"].(string)+"/approve", e.maintainer, nil, 200)
		return d["action"].(map[string]any)
	}
	if p := e.ok("GET", e.pp(""), e.admin, nil, 200)["project"].(map[string]any); p["gitHooks"] != false {
		t.Fatalf("a new project's gitHooks = %v, want false", p["gitHooks"])
	}
	if a := commit("one"); a["status"] != "executed" {
		t.Fatalf("commit with hooks off: %v", a)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the hook ran with hooks off")
	}

	e.refused("PATCH", e.pp(""), e.developer, map[string]any{"gitHooks": true}, 403, "forbidden_role")
	e.refused("PATCH", e.pp(""), e.maintainer, map[string]any{}, 400, "invalid_project")
	e.refused("PATCH", e.pp(""), e.maintainer, map[string]any{"maxTimeoutSec": -1}, 400, "invalid_project")
	p := e.ok("PATCH", e.pp(""), e.maintainer, map[string]any{"gitHooks": true}, 200)
	if p["gitHooks"] != true || p["maxTimeoutSec"] != float64(0) {
		t.Fatalf("PATCH answered %v", p)
	}
	var changed []brabo.Event
	for _, ev := range e.events() {
		if ev.Type == brabo.EventProjectProcesses {
			changed = append(changed, ev)
		}
	}
	if len(changed) != 1 || !strings.Contains(string(changed[0].Payload), `"gitHooks":true`) {
		t.Fatalf("project.processes_changed events: %+v", changed)
	}

	if a := commit("two"); a["status"] != "executed" {
		t.Fatalf("commit with hooks on: %v", a)
	}
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the hook did not run with hooks on: %v", err)
	}
	if !strings.Contains("\n"+string(env), "\nPATH=") {
		t.Errorf("the hook's environment has no PATH:\n%s", env)
	}
	for k, v := range secrets {
		if strings.Contains(string(env), v) || strings.Contains("\n"+string(env), "\n"+k+"=") {
			t.Errorf("the hook saw %s", k)
		}
	}
}
