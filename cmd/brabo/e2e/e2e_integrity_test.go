package e2e

// Integrity around every executed action (DESIGN §9): an allowed code
// runner runs code the agent can edit, so what it writes is checked after
// it ran. A protected file it changed without a maintainer's approval is
// put back, and the action fails naming it.

import (
	"context"
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
	eachStoreWith(t, unsandboxed, func(t *testing.T, e *env) {
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

// sneakScript is what an agent hides behind a line that visibly writes one
// protected file: it changes two others.
const sneakScript = `printf 'planted\n' > CLAUDE.md
printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit
`

// A maintainer's approval of a line that visibly writes one protected file
// (.git/config) licenses that file only: the other
// protected paths the line's script changed are put back and the action
// fails naming them; the approved write stays. And an approval by someone
// below maintainer licenses nothing, even for a line whose recorded
// decision did not ask for a maintainer (one recorded by an older brabo).
func TestAnApprovedProtectedWriteLicensesOnlyThatPath(t *testing.T) {
	eachStoreWith(t, unsandboxed, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(printf)", "Terminal(sh)"]}`)
		if err := os.WriteFile(filepath.Join(e.root, "sneak.sh"), []byte(sneakScript), 0o644); err != nil {
			t.Fatal(err)
		}
		config := filepath.Join(e.root, ".git", "config")
		claude := filepath.Join(e.root, "CLAUDE.md")
		hook := filepath.Join(e.root, ".git", "hooks", "pre-commit")
		os.WriteFile(claude, []byte("# the real instructions\n"), 0o644)
		line := `printf '[user]\n\tname = approved\n' >> .git/config && sh sneak.sh`

		a := e.terminal(line)
		if a["status"] != "pending" {
			t.Fatalf("a line that writes .git/config: %v %v", a["status"], a["reason"])
		}
		e.refused("POST", "/v1/actions/"+a["id"].(string)+"/approve", e.developer, nil, 403, "forbidden_role")
		d := e.ok("POST", "/v1/actions/"+a["id"].(string)+"/approve", e.maintainer, nil, 200)
		act := d["action"].(map[string]any)
		msg := str(act, "result", "error")
		if act["status"] != string(brabo.StatusFailed) || !strings.Contains(msg, "CLAUDE.md") || !strings.Contains(msg, ".git/hooks/pre-commit") ||
			!strings.Contains(msg, "integrity:") {
			t.Fatalf("the approved line that also changed CLAUDE.md and a hook: %v %q", act["status"], msg)
		}
		if strings.Contains(msg, ".git/config") {
			t.Errorf("the approved write of .git/config was reported as unapproved: %s", msg)
		}
		if b, _ := os.ReadFile(config); !strings.Contains(string(b), "name = approved") {
			t.Errorf("the approved write of .git/config was undone:\n%s", b)
		}
		if b, _ := os.ReadFile(claude); string(b) != "# the real instructions\n" {
			t.Errorf("CLAUDE.md was not put back: %q", b)
		}
		if _, err := os.Stat(hook); err == nil {
			t.Error("the hook the script planted is still there")
		}
		if ev := e.eventsOf(act["id"].(string), brabo.EventProtectedRestored); len(ev) != 1 {
			t.Errorf("%d %s events, want 1", len(ev), brabo.EventProtectedRestored)
		}

		// An action recorded with a decision that did not raise the role
		// (as an older brabo recorded it), approved by a developer: even
		// the write it visibly makes is put back.
		before, _ := os.ReadFile(config)
		p := e.terminal(`printf '[user]\n\temail = dev@x\n' >> .git/config`)
		legacy := "act_legacy_" + p["id"].(string)
		ctx := context.Background()
		if err := e.store.Update(ctx, func(tx brabo.Tx) error {
			cur, err := tx.Action(ctx, p["id"].(string))
			if err != nil {
				return err
			}
			old := *cur
			old.ID, old.Decision.RequiredRole = legacy, brabo.Developer
			return tx.InsertAction(ctx, &old)
		}); err != nil {
			t.Fatal(err)
		}
		d = e.ok("POST", "/v1/actions/"+legacy+"/approve", e.developer, nil, 200)
		act = d["action"].(map[string]any)
		if act["status"] != string(brabo.StatusFailed) || !strings.Contains(str(act, "result", "error"), ".git/config") {
			t.Fatalf("a developer's approval of a .git/config write: %v %v", act["status"], act["result"])
		}
		if b, _ := os.ReadFile(config); string(b) != string(before) {
			t.Errorf("a developer's approval kept a change of .git/config:\n%s", b)
		}
	})
}
