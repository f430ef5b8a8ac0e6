package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/agenthook"
	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/policy"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// The five places that ask "what would brabo decide" build their policy
// input with one builder (policy.NewInput, and pipeline's input on the
// server), so for the same state they decide alike: a
// real proposal on a real SQLite store, the reason its pending card shows
// now, the web check page's pipeline.Check, the brabo check binary and the
// agents' hook. Each row is decided by every one that can express it, and
// the whole decisions must be equal: Decide is pure, so a fact one of them
// left out of its input (the home folder, the programs, the agent, the
// trusted rules) shows as a different decision on the row that needs it.
func TestCheckFiveBuildersDecideAlike(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	ctx := context.Background()
	root := t.TempDir()
	// The home folder is the project folder, so its rows are in scope:
	// every builder must know it (HOME, as the server's protection reads
	// it, and as brabo check and the hook read it).
	t.Setenv("HOME", root)
	file := `{"allow": ["Terminal(echo *)", "Terminal(git status)", "Terminal(./tool)", "ReadFile(*)"], "deny": ["Terminal(rm -rf *)"]}`
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := &pipeline.Service{Store: st, Protect: app.Protection("", os.Environ()),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	now := time.Now().UTC()
	owner := &brabo.Member{ID: "mem_owner", Name: "ana", TokenHash: "h1", CreatedAt: now}
	dev := &brabo.Member{ID: "mem_dev", Name: "dev", TokenHash: "h2", CreatedAt: now}
	p := &brabo.Project{ID: "prj_1", Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: root,
		WorkspaceDir: "shop-12345678", OwnerID: owner.ID, CreatedAt: now}
	agent := &brabo.Agent{ID: "agt_1", ProjectID: p.ID, Name: "coder", PrincipalID: dev.ID, TokenHash: "h3", CreatedAt: now}
	if err := st.Update(ctx, func(tx brabo.Tx) error {
		for _, m := range []*brabo.Member{owner, dev} {
			if err := tx.CreateMember(ctx, m); err != nil {
				return err
			}
		}
		if err := tx.CreateProject(ctx, p); err != nil {
			return err
		}
		if err := tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: owner.ID, Role: brabo.Owner}); err != nil {
			return err
		}
		if err := tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: dev.ID, Role: brabo.Developer}); err != nil {
			return err
		}
		return tx.CreateAgent(ctx, agent)
	}); err != nil {
		t.Fatal(err)
	}
	propose := func(typ brabo.ActionType, pl brabo.Payload) *brabo.ProposedAction {
		t.Helper()
		req := pipeline.ProposeRequest{ProjectID: p.ID, Actor: pipeline.Actor{Agent: agent}, Type: typ, Payload: pl}
		if typ == brabo.ReadFile {
			// brabo runs no read: the hook's agent reads once allowed.
			req.Execution = &brabo.Execution{Mode: brabo.ExecutionExternal}
		}
		a, err := svc.Propose(ctx, req)
		if err != nil {
			t.Fatalf("propose %s %+v: %v", typ, pl, err)
		}
		return a
	}
	// same compares two decisions whole, as JSON: the policy, the reason,
	// every segment with its tokens, rule, notes and flags, the warnings
	// and the role. Only the scope root's ID differs by design: brabo check
	// knows the folder's name, the server the project's workspace name.
	same := func(what string, got, want brabo.Decision) {
		t.Helper()
		got.ScopeRoot.ID, want.ScopeRoot.ID = "", ""
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s:\n%s\nthe proposal:\n%s", what, g, w)
		}
	}

	for _, command := range []string{
		"echo hello",
		"rm -rf build",
		"echo '{}' > permissions.json",
		"echo x >> .git/config",
		"echo x >> " + filepath.Join(root, ".bashrc"),
		"git status",
		git + " status",
		"./tool",
		"cd sub && ls",
	} {
		a := propose(brabo.Terminal, brabo.Payload{Command: command})
		for _, as := range []string{"", agent.Name} {
			ans, err := svc.Check(ctx, p, brabo.CheckRequest{Command: command, Agent: as})
			if err != nil {
				t.Fatal(err)
			}
			same("the web check page of "+command+" as "+as, ans.Decision, a.Decision)
		}
		if a.Status == brabo.StatusPending {
			if now, err := svc.CurrentReason(ctx, a); err != nil || now != a.Reason {
				t.Errorf("the current reason of %q: %q %v, the proposal's %q", command, now, err, a.Reason)
			}
		}
		r := runBrabo(t, root, nil, "check", "--json", "--root", root, "--", command)
		same("brabo check "+command, decision(t, r), a.Decision)
	}

	// The hook decides reads locally, with the rules the server decides
	// with now.
	rules, _, err := svc.EffectiveRules(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"src/a.go", "permissions.json", ".git/config", "/etc/hostname", filepath.Join(root, ".ssh/id_ed25519")} {
		a := propose(brabo.ReadFile, brabo.Payload{Path: path})
		got := policy.Decide(policy.NewInput(brabo.ReadFile, brabo.Payload{Path: path}, agenthook.ReadSituation(rules, root)))
		same("the hook's read of "+path, got, a.Decision)
	}
}
