package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/store/storetest"
)

// TestAPlantedRepositoryRunsNothingThroughBrabo is the chain of a planted repository
// against the real `brabo serve`, on SQLite and on PostgreSQL: the
// agent's files plant a copy of .git whose config has a clean filter,
// point .git/commondir at the copy and write `* filter=x` to
// .gitattributes (real git then runs the filter on a mere diff). The
// agent proposes a git_commit (its card is built), proposes another past
// the pending limit (429), and a human approves the first: the planted
// program never runs, and the approved commit fails with
// repository_config_refused naming the filter. Then a planted
// core.sshCommand, credential.helper and diff.external refuse an approved
// git_push by name, and with a pre-push hook alone an approved git_push
// to the local bare remote and a pr_open succeed without running it.
//
// The same chain runs with the planter being a hook agent (its own
// process planted the files, and it reported that execution to brabo)
// which then proposes the git_commit itself, and against a server started
// --no-sandbox: nothing planted runs either way.
func TestAPlantedRepositoryRunsNothingThroughBrabo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	for _, db := range []string{"sqlite", "postgres"} {
		for _, v := range []chainVariant{{name: "api"}, {name: "hook", hook: true}, {name: "no-sandbox", flags: []string{"--no-sandbox"}}} {
			t.Run(db+"/"+v.name, func(t *testing.T) {
				args := append([]string{"--max-pending", "1"}, v.flags...)
				if db == "postgres" {
					args = append(args, "--db", storetest.PostgresURL(t))
				}
				plantedChain(t, startServe(t, t.TempDir(), args...), v)
			})
		}
	}
}

// chainVariant is who plants issue 22's chain and on what server.
type chainVariant struct {
	name string
	// hook: a hook agent plants it with a command it runs itself (an
	// external execution it reports), then proposes the git_commit.
	hook  bool
	flags []string // more flags of brabo serve
}

func plantedChain(t *testing.T, srv *server, v chainVariant) {
	admin := srv.token
	base := t.TempDir()
	root, remote := filepath.Join(base, "shop"), filepath.Join(base, "origin.git")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return string(out)
	}
	git(base, "init", "-q", "--bare", "--initial-branch=main", remote)
	git(base, "init", "-q", "--initial-branch=main", root)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"ask": ["GitCommit()", "GitPush()", "PrOpen()"]}`), 0o644)
	git(root, "add", "-A")
	git(root, "commit", "-q", "-m", "initial")
	git(root, "remote", "add", "origin", remote)
	git(root, "push", "-q", "origin", "main", "main:base")
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "coder"}, 201)["token"].(string)
	propose := func(typ string, payload map[string]any, want int) map[string]any {
		t.Helper()
		return srv.must(t, "POST", "/v1/projects/"+project+"/actions", agent, map[string]any{"type": typ, "payload": payload}, want)
	}
	approve := func(id string) map[string]any {
		t.Helper()
		return srv.must(t, "POST", "/v1/actions/"+id+"/approve", admin, nil, 200)["action"].(map[string]any)
	}

	// A hook agent's own command plants the chain: it proposes it as an
	// external execution, runs it itself once decided, and reports it.
	hookToken := ""
	var reportPlant func()
	if v.hook {
		hookToken = srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "claude", "kind": "hook"}, 201)["token"].(string)
		plant := srv.must(t, "POST", "/v1/projects/"+project+"/actions", hookToken, map[string]any{"type": "terminal",
			"payload":   map[string]any{"command": "sh plant.sh"},
			"execution": map[string]any{"mode": "external", "runner": "claude-code", "sessionId": "s-1", "toolUseId": "toolu_plant"}}, 201)
		id := plant["id"].(string)
		if plant["status"] == "pending" {
			approve(id)
		}
		reportPlant = func() {
			t.Helper()
			rep := srv.must(t, "POST", "/v1/actions/"+id+"/result", hookToken, map[string]any{"exitCode": 0, "output": "planted\n"}, 200)
			if rep["status"] != "executed" {
				t.Fatalf("the hook's report of its planting: %v", rep)
			}
		}
	}

	// What the agent's command planted, outside the project's sight of git.
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(root, "planted.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho ran >> '"+marker+"'\ncat\n"), 0o755)
	cp := filepath.Join(root, "node_modules", "gitcopy")
	os.MkdirAll(filepath.Dir(cp), 0o755)
	if out, err := exec.Command("cp", "-a", filepath.Join(root, ".git"), cp).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	git(base, "config", "--file", filepath.Join(cp, "config"), "filter.x.clean", script)
	os.WriteFile(filepath.Join(root, ".git", "commondir"), []byte(cp+"\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".gitattributes"), []byte("* filter=x\n"), 0o644)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop, changed\n"), 0o644)
	plain := exec.Command("git", "diff", "--quiet", "HEAD")
	plain.Dir = root
	plain.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the plant does not work with plain git, so the test proves nothing: %v", err)
	}
	os.Remove(marker)
	notRun := func(when string) {
		t.Helper()
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the planted program ran %s", when)
		}
	}

	proposer, commit := agent, map[string]any{"type": "git_commit", "payload": map[string]any{"message": "a change"}}
	if v.hook {
		reportPlant()
		proposer = hookToken
		commit["execution"] = map[string]any{"mode": "external", "runner": "claude-code", "sessionId": "s-1", "toolUseId": "toolu_commit"}
	}
	first := srv.must(t, "POST", "/v1/projects/"+project+"/actions", proposer, commit, 201)
	if first["status"] != "pending" {
		t.Fatalf("the git_commit was %v: %v", first["status"], first["reason"])
	}
	notRun("for the proposal")
	hasStat := func(a map[string]any) {
		t.Helper()
		if pv, _ := a["preview"].(map[string]any); pv == nil || pv["stat"] == nil {
			t.Errorf("the card shows no stat: %v", a["preview"])
		}
	}
	if !v.hook { // an external action's card shows who runs it, not a stat
		hasStat(first)
	}
	_, out, _ := srv.call("POST", "/v1/projects/"+project+"/actions", proposer, commit)
	if out["code"] != "too_many_pending" {
		t.Fatalf("the second proposal: %v", out)
	}
	notRun("for a proposal refused 429")
	if v.hook {
		// Approved, the hook's own git_commit is the agent's to run:
		// brabo runs nothing for it. brabo's git runs for the coder's.
		if a := approve(first["id"].(string)); a["status"] != "approved" || a["result"] != nil {
			t.Fatalf("the hook's approved git_commit: %v %v", a["status"], a["result"])
		}
		notRun("for the hook's approved git_commit")
		first = propose("git_commit", map[string]any{"message": "a change"}, 201)
		notRun("for the coder's proposal")
		hasStat(first)
	}
	done := approve(first["id"].(string))
	res, _ := done["result"].(map[string]any)
	if done["status"] != "failed" || res["code"] != "repository_config_refused" || !strings.Contains(res["error"].(string), "filter.x.clean") {
		t.Fatalf("the approved git_commit: %v %v", done["status"], res)
	}
	notRun("for the approved git_commit")
	if v.name != "api" {
		return // the push part, once per store
	}

	// The push: a planted ssh command, credential helper and external
	// diff refuse it by name; a pre-push hook alone never runs.
	os.Remove(filepath.Join(root, ".git", "commondir"))
	os.Remove(filepath.Join(root, ".gitattributes"))
	hook := filepath.Join(root, ".git", "hooks", "pre-push")
	os.WriteFile(hook, []byte("#!/bin/sh\n'"+script+"' </dev/null\n"), 0o755)
	git(root, "commit", "-q", "-am", "local work")
	cfg := filepath.Join(root, ".git", "config")
	clean, _ := os.ReadFile(cfg)
	for _, kv := range [][2]string{{"core.sshCommand", script}, {"credential.helper", script}, {"diff.external", script}} {
		git(root, "config", kv[0], kv[1])
		for _, a := range []struct {
			typ     string
			payload map[string]any
		}{{"git_push", map[string]any{"branch": "main"}}, {"pr_open", map[string]any{"branch": "main", "base": "base", "title": "t"}}} {
			done := approve(propose(a.typ, a.payload, 201)["id"].(string))
			res, _ := done["result"].(map[string]any)
			if done["status"] != "failed" || res["code"] != "repository_config_refused" || !strings.Contains(res["error"].(string), strings.ToLower(kv[0])) {
				t.Fatalf("%s with %s planted: %v %v", a.typ, kv[0], done["status"], res)
			}
		}
		os.WriteFile(cfg, clean, 0o644)
	}
	notRun("for a git_push with a planted key")
	pushed := approve(propose("git_push", map[string]any{"branch": "main"}, 201)["id"].(string))
	if pushed["status"] != "executed" {
		t.Fatalf("the git_push: %v %v", pushed["status"], pushed["result"])
	}
	pr := approve(propose("pr_open", map[string]any{"branch": "main", "base": "base", "title": "t"}, 201)["id"].(string))
	if pr["status"] != "executed" {
		t.Fatalf("the pr_open: %v %v", pr["status"], pr["result"])
	}
	notRun("for the approved git_push and pr_open (the pre-push hook)")
	plainPush := exec.Command("git", "push", "-q", "origin", "main:control")
	plainPush.Dir = root
	plainPush.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the pre-push hook does not run with plain git, so the push part proves nothing: %v", err)
	}
}
