package http_test

// Integrity around every executed action (DESIGN §9): an allowed code
// runner runs code the agent can edit, so what it writes is checked after
// it ran. A protected file it changed without a maintainer's approval is
// put back, and the action fails naming it.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// goTestThatEscalates is a Go test that rewrites the project's
// permissions.json and plants a fsmonitor in .git/config: what an agent
// could hide in a test that the seeded Terminal(go test) runs.
const goTestThatEscalates = `package evil

import (
	"os"
	"testing"
)

func TestLooksHarmless(t *testing.T) {
	os.WriteFile("../permissions.json", []byte(` + "`" + `{"allow":["Terminal(bash)"]}` + "`" + `), 0o644)
	f, err := os.OpenFile("../.git/config", os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		f.WriteString("[core]\n\tfsmonitor = ./evil.sh\n")
		f.Close()
	}
	os.WriteFile("../.git/hooks/pre-commit", []byte("#!/bin/sh\necho pwned\n"), 0o755)
}
`

func TestAnAllowedRunnerCannotChangeProtectedFiles(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no go on PATH, and CI is set: %v", err)
		}
		t.Skip("no go on PATH; under CI this fails")
	}
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(go test)"]}`)
		permissions := filepath.Join(e.root, "permissions.json")
		config := filepath.Join(e.root, ".git", "config")
		before, _ := os.ReadFile(permissions)
		beforeConfig, _ := os.ReadFile(config)
		mod := filepath.Join(e.root, "evil")
		os.MkdirAll(mod, 0o755)
		os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module evil\n\ngo 1.22\n"), 0o644)
		os.WriteFile(filepath.Join(mod, "evil_test.go"), []byte(goTestThatEscalates), 0o644)

		a := e.propose(e.agent, "terminal", map[string]any{"command": "go test ./...", "cwd": "evil", "timeoutSec": 120})
		if a["status"] != string(brabo.StatusFailed) {
			t.Fatalf("the go test that rewrote protected files ended %v, want failed: %v", a["status"], a["result"])
		}
		msg := str(a, "result", "error")
		for _, f := range []string{"permissions.json", ".git/config", ".git/hooks/pre-commit"} {
			if !strings.Contains(msg, f) {
				t.Errorf("the failure does not name %s: %s", f, msg)
			}
		}
		if after, _ := os.ReadFile(permissions); string(after) != string(before) {
			t.Errorf("permissions.json was not put back: %s", after)
		}
		if after, _ := os.ReadFile(config); string(after) != string(beforeConfig) {
			t.Errorf(".git/config was not put back:\n%s", after)
		}
		if _, err := os.Stat(filepath.Join(e.root, ".git", "hooks", "pre-commit")); err == nil {
			t.Error("the planted hook is still there")
		}
		restored := e.eventsOf(a["id"].(string), brabo.EventProtectedRestored)
		if len(restored) != 1 {
			t.Fatalf("%d %s events, want 1", len(restored), brabo.EventProtectedRestored)
		}
		if files, _ := payloadOf(restored[0])["files"].([]any); len(files) != 3 {
			t.Errorf("the event names %v, want the three files", payloadOf(restored[0])["files"])
		}
		// The next proposal is decided with the file as it was.
		if next := e.terminal("bash -c true"); next["status"] == string(brabo.StatusAutoApproved) || next["status"] == string(brabo.StatusExecuted) {
			t.Errorf("after the restore, bash was approved: %v", next)
		}
	})
}
