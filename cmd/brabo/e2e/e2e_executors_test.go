package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// Every action type of DESIGN §3.2 runs when approved. Each
// test proposes through the real server, is refused by a role below the
// type's minimum, approved by the right one, executed for real (a real git
// repository, the store's rows), with its events; and each named failure
// is refused with its sentence.

// decide approves an action as token and returns the action after it.
func (e *env) decide(id, token string) map[string]any {
	e.t.Helper()
	d := e.ok("POST", "/v1/actions/"+id+"/approve", token, nil, 200)
	if d["outcome"] != "approved" {
		e.t.Fatalf("approving %s: %v", id, d)
	}
	return d["action"].(map[string]any)
}

// lifecycle checks an executed (or failed) action's events: created,
// approved by approver, then one action.executed or action.failed.
func (e *env) lifecycle(id, approver, outcome string) {
	e.t.Helper()
	var got []string
	for _, ev := range e.eventsOf(id, "") {
		got = append(got, ev.Type)
		if ev.Type == brabo.EventActionApproved && ev.ActorID != e.memberID(approver) {
			e.t.Errorf("%s approved by %s, want %s", id, ev.ActorID, e.memberID(approver))
		}
	}
	want := []string{brabo.EventActionCreated, brabo.EventActionApproved, outcome}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		e.t.Errorf("events of %s: %v, want %v", id, got, want)
	}
}

// failedWith checks that an approved action failed, naming why.
func failedWith(t *testing.T, a map[string]any, why string) {
	t.Helper()
	if a["status"] != "failed" || !strings.Contains(str(a, "result", "error"), why) {
		t.Fatalf("want failed with %q, got %v: %v", why, a["status"], a["result"])
	}
}

func TestGitBranchProtectFeedsTheMergeCap(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		// Auto mode: a merge into a branch nobody protected runs at once.
		e.ok("PUT", e.pp("/agents/"+e.agentID+"/autonomy"), e.maintainer, map[string]any{"actionType": "*", "mode": "auto_approve"}, 200)
		e.pushBranch("release")
		e.branchWithCommit("feat/a", "release", "a.txt")
		if m := e.proposeMerge(e.agent, e.openPR("feat/a", "release", "a", "")); m["status"] != "executed" {
			t.Fatalf("before protection, an auto-mode merge into release: %v %v", m["status"], m["reason"])
		}

		// Protecting is not capped: in manual mode it waits for a human.
		e.ok("PUT", e.pp("/agents/"+e.agentID+"/autonomy"), e.maintainer, map[string]any{"actionType": "*", "mode": "require_approval"}, 200)
		a := e.propose(e.agent, "git_branch_protect", map[string]any{"branch": "release"})
		if a["status"] != "pending" {
			t.Fatalf("git_branch_protect: %v", a)
		}
		id := a["id"].(string)
		e.refused("POST", "/v1/actions/"+id+"/approve", e.developer, nil, 403, "forbidden_role")
		done := e.decide(id, e.maintainer)
		if done["status"] != "executed" || str(done, "result", "detail", "added") != "true" {
			t.Fatalf("approved git_branch_protect: %v", done)
		}
		e.lifecycle(id, e.maintainer, brabo.EventActionExecuted)
		list := e.ok("GET", e.pp("/protected-branches"), e.developer, nil, 200)
		added := list["added"].([]any)
		if len(added) != 1 || added[0].(map[string]any)["branch"] != "release" || added[0].(map[string]any)["actionId"] != id {
			t.Fatalf("protected branches: %v", list)
		}
		if b := list["builtIn"].([]any); len(b) != 4 {
			t.Fatalf("built-in protected branches: %v", b)
		}

		// The merge cap reads the list: the same auto-mode merge now waits.
		e.ok("PUT", e.pp("/agents/"+e.agentID+"/autonomy"), e.maintainer, map[string]any{"actionType": "*", "mode": "auto_approve"}, 200)
		e.branchWithCommit("feat/b", "release", "b.txt")
		m := e.proposeMerge(e.agent, e.openPR("feat/b", "release", "b", ""))
		if m["status"] != "pending" || m["reason"] != "cap: git_merge into the protected branch release" {
			t.Fatalf("after protection, an auto-mode merge into release: %v %v", m["status"], m["reason"])
		}
		// Protecting it again, or a built-in branch, changes nothing.
		e.ok("PUT", e.pp("/agents/"+e.agentID+"/autonomy"), e.maintainer, map[string]any{"actionType": "*", "mode": "require_approval"}, 200)
		again := e.decide(e.propose(e.agent, "git_branch_protect", map[string]any{"branch": "release"})["id"].(string), e.maintainer)
		if again["status"] != "executed" || str(again, "result", "detail", "added") != "" {
			t.Fatalf("protecting release twice: %v", again)
		}
		main := e.decide(e.propose(e.agent, "git_branch_protect", map[string]any{"branch": "main"})["id"].(string), e.maintainer)
		if main["status"] != "executed" || str(main, "result", "detail", "builtIn") != "true" {
			t.Fatalf("protecting main: %v", main)
		}
		if n := len(e.ok("GET", e.pp("/protected-branches"), e.developer, nil, 200)["added"].([]any)); n != 1 {
			t.Fatalf("%d added protected branches, want 1", n)
		}
		// A branch name git would misread is refused before anything.
		before := e.written()
		e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "git_branch_protect", "payload": map[string]any{"branch": "-x"}}, 400, "invalid_action")
		e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "git_branch_protect", "payload": map[string]any{}}, 400, "invalid_action")
		e.unchanged(before, "bad git_branch_protect")
	})
}

func TestGitBranchCreateMakesTheBranchInTheProjectsRepository(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		first := e.branchWithCommit("feat/base", "main", "base.txt")
		a := e.propose(e.agent, "git_branch_create", map[string]any{"branch": "feat/new", "from": first})
		if a["status"] != "pending" {
			t.Fatalf("git_branch_create: %v", a)
		}
		id := a["id"].(string)
		e.refused("POST", "/v1/actions/"+id+"/approve", e.developer, nil, 403, "forbidden_role")
		done := e.decide(id, e.maintainer)
		if done["status"] != "executed" || str(done, "result", "detail", "commit") != first {
			t.Fatalf("approved git_branch_create: %v", done)
		}
		e.lifecycle(id, e.maintainer, brabo.EventActionExecuted)
		// Real git sees the branch where the payload said.
		if got := strings.TrimSpace(run(t, e.root, "git", "rev-parse", "--verify", "refs/heads/feat/new")); got != first {
			t.Fatalf("feat/new is at %q, want %s", got, first)
		}
		// A branch that exists already, and a start point that is no
		// commit, fail by name; nothing moves.
		again := e.decide(e.propose(e.agent, "git_branch_create", map[string]any{"branch": "feat/new"})["id"].(string), e.maintainer)
		failedWith(t, again, "git branch failed")
		bad := e.decide(e.propose(e.agent, "git_branch_create", map[string]any{"branch": "feat/x", "from": "no-such-ref"})["id"].(string), e.maintainer)
		failedWith(t, bad, `start point "no-such-ref" is not a commit`)
		if got := strings.TrimSpace(run(t, e.root, "git", "rev-parse", "--verify", "refs/heads/feat/new")); got != first {
			t.Fatalf("feat/new moved to %q", got)
		}
		// A branch name git would misread is refused before anything.
		before := e.written()
		// The same rule holds for every type that names a branch, a remote
		// or a start point: what the executor would refuse after approval
		// is refused at once.
		for _, c := range []struct {
			typ     string
			payload map[string]any
			why     string
		}{
			{"git_branch_create", map[string]any{"branch": "-f"}, "is not a valid branch name"},
			{"git_push", map[string]any{"branch": "main..x"}, "is not a valid branch name"},
			{"pr_open", map[string]any{"branch": "feat/ok", "base": "--upload-pack=x", "title": "t"}, "is not a valid branch name"},
			{"git_branch_create", map[string]any{"branch": "ok", "from": "--orphan"}, "is not a revision"},
			{"git_push", map[string]any{"branch": "feat/ok", "remote": "https://evil.example/x.git"}, "is not the name of a configured remote"},
			{"pr_open", map[string]any{"branch": "feat/ok", "base": "main", "title": "t", "remote": "../other.git"}, "is not the name of a configured remote"},
			{"git_merge", map[string]any{"pr": 1, "remote": "--mirror"}, "is not the name of a configured remote"},
		} {
			r := e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": c.typ, "payload": c.payload}, 400, "invalid_action")
			if msg, _ := r["message"].(string); !strings.Contains(msg, c.why) {
				t.Errorf("%s %v: %v, want %q", c.typ, c.payload, r, c.why)
			}
		}
		e.unchanged(before, "bad branch names, remotes and start points")
	})
}

func TestGitRepoCreateMakesTheProjectsRepository(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	repos := filepath.Join(e.data, "repos") // the local provider's remotes
	// A plain folder, not yet a repository.
	plain := filepath.Join(t.TempDir(), "fresh")
	os.MkdirAll(filepath.Join(plain, "src"), 0o755)
	os.WriteFile(filepath.Join(plain, "src", "main.go"), []byte("package main\n"), 0o644)
	p := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "fresh", "mode": "local", "root": plain}, 201)
	pid, wsDir := p["id"].(string), p["workspaceDir"].(string)
	maint := e.ok("POST", "/v1/projects/"+pid+"/members", e.admin, map[string]any{"name": "max", "role": "maintainer"}, 201)["token"].(string)
	dev := e.ok("POST", "/v1/projects/"+pid+"/members", e.admin, map[string]any{"name": "dan", "role": "developer"}, 201)["token"].(string)
	ag := e.ok("POST", "/v1/projects/"+pid+"/agents", e.admin, map[string]any{"name": "builder"}, 201)["token"].(string)

	a := e.ok("POST", "/v1/projects/"+pid+"/actions", ag, map[string]any{"type": "git_repo_create", "payload": map[string]any{}}, 201)
	if a["status"] != "pending" {
		t.Fatalf("git_repo_create: %v", a)
	}
	id := a["id"].(string)
	e.refused("POST", "/v1/actions/"+id+"/approve", dev, nil, 403, "forbidden_role")
	done := e.decide(id, maint)
	if done["status"] != "executed" || str(done, "result", "detail", "initialised") != "true" ||
		str(done, "result", "detail", "repository") != wsDir+".git" || str(done, "result", "detail", "branch") != "main" {
		t.Fatalf("approved git_repo_create: %v", done)
	}
	// For real: the folder is a repository whose origin is the new bare
	// repository, and main there holds the folder's files.
	bare := filepath.Join(repos, wsDir+".git")
	if got := strings.TrimSpace(run(t, plain, "git", "remote", "get-url", "origin")); got != bare {
		t.Fatalf("origin is %q, want %q", got, bare)
	}
	if files := run(t, plain, "git", "--git-dir="+bare, "ls-tree", "-r", "--name-only", "main"); !strings.Contains(files, "src/main.go") {
		t.Fatalf("main on the new repository holds %q", files)
	}
	if head := strings.TrimSpace(run(t, plain, "git", "--git-dir="+bare, "rev-parse", "main")); head != str(done, "result", "detail", "commit") {
		t.Fatalf("the remote's main %s is not the reported commit %v", head, done["result"])
	}
	// The commit is the approver's.
	if who := run(t, plain, "git", "log", "-1", "--format=%cn <%ce>"); !strings.Contains(who, "max <") {
		t.Fatalf("the first commit was made by %q", who)
	}
	var types []string
	for _, ev := range e.ok("GET", "/v1/projects/"+pid+"/events", maint, nil, 200)["events"].([]any) {
		if ev.(map[string]any)["actionId"] == id {
			types = append(types, ev.(map[string]any)["type"].(string))
		}
	}
	if len(types) != 3 || types[2] != brabo.EventActionExecuted {
		t.Fatalf("events: %v", types)
	}

	// Named failures: a repository with its remote already, in this
	// project and in the env's own (whose origin exists).
	again := e.decide(e.ok("POST", "/v1/projects/"+pid+"/actions", ag, map[string]any{"type": "git_repo_create", "payload": map[string]any{}}, 201)["id"].(string), maint)
	failedWith(t, again, `has a remote "origin" already`)
	other := e.decide(e.propose(e.agent, "git_repo_create", map[string]any{})["id"].(string), e.admin)
	failedWith(t, other, `has a remote "origin" already`)
	// A bare repository left at the place (the remote removed by hand).
	run(t, plain, "git", "remote", "remove", "origin")
	left := e.decide(e.ok("POST", "/v1/projects/"+pid+"/actions", ag, map[string]any{"type": "git_repo_create", "payload": map[string]any{}}, 201)["id"].(string), maint)
	failedWith(t, left, "a repository exists already at")
	// A bad branch name is refused before anything.
	e.refused("POST", "/v1/projects/"+pid+"/actions", ag, map[string]any{"type": "git_repo_create", "payload": map[string]any{"branch": "a..b"}}, 400, "invalid_action")
}

func TestOpenAdrAndInfraPRsAddTheirDocument(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		adr := e.propose(e.agent, "open_adr_pr", map[string]any{"title": "Use PostgreSQL for jobs", "content": "# Use PostgreSQL\n\nBecause.\n"})
		if adr["status"] != "pending" {
			t.Fatalf("open_adr_pr: %v", adr)
		}
		id := adr["id"].(string)
		e.refused("POST", "/v1/actions/"+id+"/approve", e.developer, nil, 403, "forbidden_role")
		done := e.decide(id, e.maintainer)
		if done["status"] != "executed" {
			t.Fatalf("approved open_adr_pr: %v", done)
		}
		e.lifecycle(id, e.maintainer, brabo.EventActionExecuted)
		head, path := str(done, "result", "detail", "head"), str(done, "result", "detail", "path")
		if head != "adr/use-postgresql-for-jobs" || path != "docs/adr/0001-use-postgresql-for-jobs.md" {
			t.Fatalf("head %q, path %q", head, path)
		}
		// The PR is recorded, and its branch on the remote adds the document.
		var pr map[string]any
		for _, p := range e.ok("GET", e.pp("/pulls"), e.developer, nil, 200)["pulls"].([]any) {
			if p.(map[string]any)["head"] == head {
				pr = p.(map[string]any)
			}
		}
		if pr == nil || pr["base"] != "main" || pr["title"] != "Use PostgreSQL for jobs" || pr["state"] != "open" ||
			str(done, "result", "detail", "pr") == "" {
			t.Fatalf("the ADR's pull request: %v (detail %v)", pr, done["result"])
		}
		if got := run(t, e.root, "git", "--git-dir="+e.remote, "show", head+":"+path); got != "# Use PostgreSQL\n\nBecause.\n" {
			t.Fatalf("the document on %s: %q", head, got)
		}
		if diff := run(t, e.root, "git", "--git-dir="+e.remote, "diff", "--name-only", "main", head); strings.TrimSpace(diff) != path {
			t.Fatalf("the branch changes %q, want only %s", diff, path)
		}
		if files := run(t, e.root, "git", "--git-dir="+e.remote, "ls-tree", "-r", "--name-only", "main"); strings.Contains(files, "docs/adr") {
			t.Fatal("main changed: the document belongs on the PR's branch")
		}
		// The next ADR is numbered after it once it is on main.
		run(t, e.root, "git", "fetch", "--quiet", "origin")
		run(t, e.root, "git", "merge", "--quiet", "--ff-only", "origin/"+head)
		run(t, e.root, "git", "push", "--quiet", "origin", "main")
		second := e.decide(e.propose(e.agent, "open_adr_pr", map[string]any{"title": "Second", "content": "2\n"})["id"].(string), e.maintainer)
		if str(second, "result", "detail", "path") != "docs/adr/0002-second.md" {
			t.Fatalf("the second ADR: %v", second["result"])
		}

		infra := e.decide(e.propose(e.agent, "open_infra_pr", map[string]any{"title": "Database", "content": "db: postgres\n",
			"path": "infra/db.yaml", "branch": "infra/db"})["id"].(string), e.maintainer)
		if infra["status"] != "executed" || str(infra, "result", "detail", "path") != "infra/db.yaml" {
			t.Fatalf("open_infra_pr: %v", infra)
		}
		if got := run(t, e.root, "git", "--git-dir="+e.remote, "show", "infra/db:infra/db.yaml"); got != "db: postgres\n" {
			t.Fatalf("the infra document: %q", got)
		}

		// Named failures.
		failedWith(t, e.decide(e.propose(e.agent, "open_infra_pr", map[string]any{"title": "Database", "content": "x",
			"branch": "infra/db"})["id"].(string), e.maintainer), `branch "infra/db" exists on remote "origin" already`)
		failedWith(t, e.decide(e.propose(e.agent, "open_infra_pr", map[string]any{"title": "Readme", "content": "x",
			"path": "README.md"})["id"].(string), e.maintainer), `README.md exists on "main" already`)
		failedWith(t, e.decide(e.propose(e.agent, "open_adr_pr", map[string]any{"title": "Elsewhere", "content": "x",
			"base": "nowhere"})["id"].(string), e.maintainer), `cloning the remote "origin" at base "nowhere" failed`)
		before := e.written()
		for _, p := range []map[string]any{{"title": "t", "content": "x", "path": "../out.md"}, {"title": "t", "content": "x", "path": "/etc/x"},
			{"title": "t", "content": "x", "path": "a/.git/hooks/pre-commit"}, {"content": "x"}, {"title": "t"}} {
			e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "open_infra_pr", "payload": p}, 400, "invalid_action")
		}
		e.unchanged(before, "bad document PRs")
	})
}

func TestInstructionPatchReplacesAnAgentsInstructions(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		// A maintainer proposes; the cap makes it wait for a human even
		// where a rule would allow it.
		e.setPermissions(`{"allow": ["InstructionPatch()"]}`)
		a := e.propose(e.maintainer, "instruction_patch", map[string]any{"agent": "coder", "content": "Write the test first."})
		if a["status"] != "pending" || !strings.Contains(a["reason"].(string), "cap: instruction_patch") {
			t.Fatalf("instruction_patch: %v %v", a["status"], a["reason"])
		}
		if str(a, "payload", "agent") != e.agentID || str(a, "payload", "previous") != "" {
			t.Fatalf("the stored payload: %v", a["payload"])
		}
		id := a["id"].(string)
		e.refused("POST", "/v1/actions/"+id+"/approve", e.developer, nil, 403, "forbidden_role")
		done := e.decide(id, e.maintainer)
		if done["status"] != "executed" {
			t.Fatalf("approved instruction_patch: %v", done)
		}
		e.lifecycle(id, e.maintainer, brabo.EventActionExecuted)
		in := e.ok("GET", e.pp("/agents/"+e.agentID+"/instructions"), e.developer, nil, 200)
		if in["content"] != "Write the test first." || in["actionId"] != id || in["updatedBy"] != e.memberID(e.maintainer) {
			t.Fatalf("instructions: %v", in)
		}

		// Two patches against the same text: the second approved fails by
		// name, and the first one's text stays.
		p2 := e.propose(e.maintainer, "instruction_patch", map[string]any{"agent": e.agentID, "content": "v2",
			"previous": "a lie the proposer tells"})
		p3 := e.propose(e.maintainer, "instruction_patch", map[string]any{"agent": "coder", "content": "v3"})
		if str(p2, "payload", "previous") != "Write the test first." {
			t.Fatalf("previous is brabo's, not the proposer's: %v", p2["payload"])
		}
		// The card shows the change: from the stored text (brabo's, not
		// the proposer's "previous") to the new one.
		diff, _ := p3["preview"].(map[string]any)["diff"].(map[string]any)
		if diff == nil || diff["path"] != "the instructions of coder" ||
			diff["unified"] != "@@ -1 +1 @@\n-Write the test first.\n+v3\n" || diff["added"] != 1.0 || diff["removed"] != 1.0 {
			t.Fatalf("the preview of an instruction_patch: %v", p3["preview"])
		}
		if e.decide(p3["id"].(string), e.maintainer)["status"] != "executed" {
			t.Fatal("the third patch did not execute")
		}
		stale := e.decide(p2["id"].(string), e.maintainer)
		failedWith(t, stale, "the instructions of coder changed since this patch was proposed")
		e.lifecycle(p2["id"].(string), e.maintainer, brabo.EventActionFailed)
		if in := e.ok("GET", e.pp("/agents/"+e.agentID+"/instructions"), e.developer, nil, 200); in["content"] != "v3" {
			t.Fatalf("after a stale patch failed: %v", in)
		}
		// Refused before anything: an unknown agent, the same text.
		before := e.written()
		e.refused("POST", e.pp("/actions"), e.maintainer, map[string]any{"type": "instruction_patch", "payload": map[string]any{"agent": "nobody", "content": "x"}}, 400, "invalid_action")
		e.refused("POST", e.pp("/actions"), e.maintainer, map[string]any{"type": "instruction_patch", "payload": map[string]any{"agent": "coder", "content": "v3"}}, 400, "invalid_action")
		e.refused("POST", e.pp("/actions"), e.maintainer, map[string]any{"type": "instruction_patch", "payload": map[string]any{"content": "x"}}, 400, "invalid_action")
		e.unchanged(before, "bad instruction patches")
	})
}

func TestSpendDebitsTheBudget(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		// No budget: a spend fails by name.
		none := e.decide(e.propose(e.agent, "spend", map[string]any{"amount": "1.00", "purpose": "a domain"})["id"].(string), e.admin)
		failedWith(t, none, "no budget is set for this project")

		// Only the owner sets the budget.
		e.refused("PUT", e.pp("/budget"), e.maintainer, map[string]any{"limit": "10"}, 403, "forbidden_role")
		e.refused("PUT", e.pp("/budget"), e.admin, map[string]any{"limit": "ten"}, 400, "invalid_action")
		e.refused("PUT", e.pp("/budget"), e.admin, map[string]any{}, 400, "invalid_action")
		b := e.ok("PUT", e.pp("/budget"), e.admin, map[string]any{"limit": "10.00", "inputPricePerMTok": 3, "outputPricePerMTok": "15"}, 200)
		if str(b, "budget", "limit") != "10.00" || str(b, "budget", "inputPricePerMTok") != "3.00" || b["remaining"] != "10.00" {
			t.Fatalf("the budget: %v", b)
		}

		a := e.propose(e.agent, "spend", map[string]any{"amount": "4.25", "purpose": "a domain name"})
		if a["status"] != "pending" {
			t.Fatalf("spend: %v", a)
		}
		id := a["id"].(string)
		e.refused("POST", "/v1/actions/"+id+"/approve", e.maintainer, nil, 403, "forbidden_role")
		done := e.decide(id, e.admin)
		if done["status"] != "executed" || str(done, "result", "detail", "remaining") != "5.75" {
			t.Fatalf("approved spend: %v", done)
		}
		e.lifecycle(id, e.admin, brabo.EventActionExecuted)
		v := e.ok("GET", e.pp("/budget"), e.developer, nil, 200)
		entries := v["entries"].([]any)
		if str(v, "budget", "spent") != "4.25" || v["remaining"] != "5.75" || len(entries) != 1 ||
			entries[0].(map[string]any)["actionId"] != id || entries[0].(map[string]any)["note"] != "a domain name" {
			t.Fatalf("the budget after the spend: %v", v)
		}

		// Over what is left: a named failure, and nothing is debited.
		over := e.decide(e.propose(e.agent, "spend", map[string]any{"amount": "6"})["id"].(string), e.admin)
		failedWith(t, over, "over budget: 6.00 is more than the 5.75 left of the budget of 10.00")
		if v := e.ok("GET", e.pp("/budget"), e.developer, nil, 200); str(v, "budget", "spent") != "4.25" || len(v["entries"].([]any)) != 1 {
			t.Fatalf("a refused spend debited the budget: %v", v)
		}
		// Bad amounts are refused before anything.
		before := e.written()
		for _, amt := range []any{"0", "-1", "1.1234567", "abc", ""} {
			e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "spend", "payload": map[string]any{"amount": amt}}, 400, "invalid_action")
		}
		e.unchanged(before, "bad spends")
	})
}

// TestContainerStopAndRemoveAreAHumansOnly: an agent's proposal of
// container_stop or container_remove is refused with human_only and
// records nothing; a member's is decided like any other.
func TestContainerStopAndRemoveAreAHumansOnly(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		before := e.written()
		for _, typ := range []string{"container_stop", "container_remove"} {
			e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": typ, "payload": map[string]any{}}, 403, "human_only")
		}
		e.unchanged(before, "an agent's container_stop")
		// Even auto mode and an allow rule do not let an agent through.
		e.setPermissions(`{"allow": ["ContainerStop()"]}`)
		e.ok("PUT", e.pp("/agents/"+e.agentID+"/autonomy"), e.maintainer, map[string]any{"actionType": "*", "mode": "auto_approve"}, 200)
		e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "container_stop", "payload": map[string]any{}}, 403, "human_only")
		// A member's is decided: the allow rule approves it, and with no
		// engine configured it fails by name, as an ordinary failure.
		a := e.propose(e.maintainer, "container_stop", map[string]any{})
		if a["status"] != "failed" || !strings.Contains(str(a, "result", "error"), "no container engine is configured") {
			t.Fatalf("a member's container_stop with no engine: %v %v", a["status"], a["result"])
		}
		// container_remove is capped: it always asks.
		e.setPermissions(`{"allow": ["ContainerRemove()"]}`)
		if a := e.propose(e.maintainer, "container_remove", map[string]any{}); a["status"] != "pending" {
			t.Fatalf("container_remove allowed by the file: %v", a["status"])
		}
	})
}
