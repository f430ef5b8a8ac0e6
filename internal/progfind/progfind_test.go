package progfind

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo/policy"
)

// TestResolveRealGit resolves the machine's real git and its helper, and
// Decide then reads the helper as git push (the cap) and /usr/bin/git as
// the git a rule names.
func TestResolveRealGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(string(out[:len(out)-1]), "git-status")
	root := t.TempDir()
	cmd := helper + " --short && " + git + " status"
	progs := Resolve(policy.ProgramNames(cmd), Env{PATH: os.Getenv("PATH"), Cwd: root, Writable: []string{root}})
	if progs["git"].ExecPath == "" {
		t.Fatalf("git's exec-path not found: %+v", progs["git"])
	}
	rules, err := policy.NewRules("", []string{"Terminal(git status)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := policy.Decide(policy.Input{Type: "terminal", Command: cmd, Role: "owner", Rules: rules,
		Scope: policy.Scope{Root: root}, Programs: progs})
	if d.Policy != "auto_approve" {
		t.Fatalf("the real git's helper and binary are git status: %s %s %+v (%+v)", d.Policy, d.Reason, d.Segments, progs)
	}
}

// TestResolveWritable: a program the agent can write, and a name an entry
// it can write could shadow, are Writable.
func TestResolveWritable(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := Env{PATH: bin + ":/usr/bin:/bin", Cwd: root, Writable: []string{root}}
	got := Resolve([]string{"tool", "ls", "./gradlew", "nosuch", "/usr/bin/env"}, env)
	for name, want := range map[string]bool{"tool": true, "ls": true, "./gradlew": true, "nosuch": true, "/usr/bin/env": false} {
		if got[name].Writable != want {
			t.Errorf("%s: writable %v, want %v (%+v)", name, got[name].Writable, want, got[name])
		}
	}
	std := Resolve([]string{"ls"}, Env{Cwd: root, Writable: []string{root}})
	if std["ls"].Path == "" || std["ls"].Writable {
		t.Errorf("ls on the standard PATH: %+v", std["ls"])
	}
}

// SafePATH drops the entries an agent could fill: relative and empty ones
// and those inside a writable folder; the rest keep their order.
func TestSafePATHDropsWhatTheAgentCanWrite(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/usr/bin:/bin", "/usr/bin:/bin"},
		{"/tmp/x/bin:/usr/bin::.:bin:/proj/node_modules/.bin:/bin", "/usr/bin:/bin"},
		{"/tmp/only", StandardPATH},
	} {
		if got := SafePATH(c.in, []string{"/proj", "/tmp"}); got != c.want {
			t.Errorf("SafePATH(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
