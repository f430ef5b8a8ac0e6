package e2e

// Git never runs configuration or repositories the agent planted (DESIGN
// §9): one test per route of git's control files — a gitfile, an embedded repository,
// git config, core.hooksPath, husky. Each plants a program the way the
// route needs (directly on disk, as an allowed code runner could), shows
// that the agent's own line planting it is held for a human, then runs the
// seeded git through the real pipeline and asserts the program never ran.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// plantScript writes an executable that leaves a marker when it runs.
func plantScript(t *testing.T, path string) (marker string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "ran")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return marker
}

func mustNotHaveRun(t *testing.T, marker, route string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("%s: the planted program ran", route)
	}
}

// heldForAHuman proposes the agent's planting line and requires that it
// was not auto-approved (and so did not run).
func heldForAHuman(t *testing.T, e *env, line string) {
	t.Helper()
	a := e.terminal(line)
	if a["status"] != string(brabo.StatusPending) {
		t.Fatalf("the planting line %q was %v (%s), want pending for a human", line, a["status"], str(a, "reason"))
	}
}

func TestGitRoutesRunNoPlantedProgram(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(permissionsOf(append(policy.SeedAllow(), "Terminal(echo)", "Terminal(mkdir)", "Terminal(printf)", "GitCommit()")))

		t.Run("a gitfile pointing at a planted repository", func(t *testing.T) {
			sub := filepath.Join(e.root, "sub")
			evil := filepath.Join(e.root, "evil")
			marker := plantScript(t, filepath.Join(e.root, "fsmon.sh"))
			for _, d := range []string{"objects", "refs/heads"} {
				os.MkdirAll(filepath.Join(evil, d), 0o755)
			}
			os.WriteFile(filepath.Join(evil, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			os.WriteFile(filepath.Join(evil, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "+filepath.Join(e.root, "fsmon.sh")+"\n"), 0o644)
			os.MkdirAll(sub, 0o755)
			heldForAHuman(t, e, "echo 'gitdir: ../evil' > sub/.git")
			os.WriteFile(filepath.Join(sub, ".git"), []byte("gitdir: ../evil\n"), 0o644)
			a := e.propose(e.agent, "terminal", map[string]any{"command": "git status", "cwd": "sub"})
			if a["status"] != string(brabo.StatusExecuted) && a["status"] != string(brabo.StatusFailed) {
				t.Fatalf("git status in sub: %v (%s)", a["status"], str(a, "reason"))
			}
			mustNotHaveRun(t, marker, "gitfile")
			os.RemoveAll(sub)
			os.RemoveAll(evil)
		})

		t.Run("an embedded bare repository", func(t *testing.T) {
			x := filepath.Join(e.root, "x")
			marker := plantScript(t, filepath.Join(e.root, "fsmon2.sh"))
			heldForAHuman(t, e, "mkdir -p x/objects x/refs && echo 'ref: refs/heads/main' > x/HEAD")
			for _, d := range []string{"objects", "refs/heads"} {
				os.MkdirAll(filepath.Join(x, d), 0o755)
			}
			os.WriteFile(filepath.Join(x, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			os.WriteFile(filepath.Join(x, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = "+filepath.Join(e.root, "fsmon2.sh")+"\n"), 0o644)
			a := e.terminal("cd x && git status")
			if a["status"] != string(brabo.StatusExecuted) {
				t.Fatalf("cd x && git status: %v (%s)", a["status"], str(a, "reason"))
			}
			mustNotHaveRun(t, marker, "embedded repository")
			os.RemoveAll(x)
		})

		t.Run("core.fsmonitor in .git/config", func(t *testing.T) {
			marker := plantScript(t, filepath.Join(e.root, "fsmon3.sh"))
			heldForAHuman(t, e, "git config core.fsmonitor ./fsmon3.sh")
			heldForAHuman(t, e, "printf '[core]\\n\\tfsmonitor = ./fsmon3.sh\\n' >> .git/config")
			cfg := filepath.Join(e.root, ".git", "config")
			before, _ := os.ReadFile(cfg)
			os.WriteFile(cfg, append(append([]byte{}, before...), []byte("[core]\n\tfsmonitor = "+filepath.Join(e.root, "fsmon3.sh")+"\n")...), 0o644)
			a := e.terminal("git status")
			if a["status"] != string(brabo.StatusExecuted) {
				t.Fatalf("git status: %v (%s)", a["status"], str(a, "reason"))
			}
			mustNotHaveRun(t, marker, "git config")
			os.WriteFile(cfg, before, 0o644)
		})

		// A hooks folder git does not use yet is an ordinary folder (the
		// line setting core.hooksPath is the one held); .husky is husky's
		// and held itself.
		for _, c := range []struct {
			route, hooks string
			protected    bool
		}{
			{"core.hooksPath", ".myhooks", false},
			{"husky", ".husky", true},
		} {
			t.Run(c.route, func(t *testing.T) {
				marker := plantScript(t, filepath.Join(e.root, c.hooks, "pre-commit"))
				heldForAHuman(t, e, "git config core.hooksPath "+c.hooks)
				if c.protected {
					heldForAHuman(t, e, "echo 'touch /tmp/x' > "+c.hooks+"/pre-commit")
				}
				cfg := filepath.Join(e.root, ".git", "config")
				before, _ := os.ReadFile(cfg)
				os.WriteFile(cfg, append(append([]byte{}, before...), []byte("[core]\n\thooksPath = "+c.hooks+"\n")...), 0o644)
				os.WriteFile(filepath.Join(e.root, "src", "change-"+c.route+".txt"), []byte("x\n"), 0o644)
				// brabo's git refuses a repository whose config names a
				// hooks folder, by name.
				a := e.propose(e.agent, "git_commit", map[string]any{"message": "a change"})
				if a["status"] != string(brabo.StatusFailed) || str(a, "result", "code") != string(brabo.CodeRepositoryConfigRefused) ||
					!strings.Contains(str(a, "result", "error"), "core.hookspath") {
					t.Fatalf("git_commit: %v (%s) %v", a["status"], str(a, "reason"), a["result"])
				}
				mustNotHaveRun(t, marker, c.route)
				os.WriteFile(cfg, before, 0o644)
			})
		}
	})
}
