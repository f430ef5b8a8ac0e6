package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/brabo-dev/brabo"
)

// branchWithCommit makes branch name from base in the project repository
// with one commit adding file, pushes it to origin, goes back to main, and
// returns the commit's hash.
func (e *env) branchWithCommit(name, base, file string) string {
	e.t.Helper()
	run(e.t, e.root, "git", "checkout", "--quiet", "-b", name, base)
	if err := os.WriteFile(filepath.Join(e.root, file), []byte(name+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	run(e.t, e.root, "git", "add", "--", file)
	run(e.t, e.root, "git", "commit", "--quiet", "-m", "add "+file)
	hash := strings.TrimSpace(run(e.t, e.root, "git", "rev-parse", "HEAD"))
	run(e.t, e.root, "git", "push", "--quiet", "origin", name)
	run(e.t, e.root, "git", "checkout", "--quiet", "main")
	return hash
}

// pushBranch creates branch name at main on origin.
func (e *env) pushBranch(name string) {
	e.t.Helper()
	run(e.t, e.root, "git", "branch", name, "main")
	run(e.t, e.root, "git", "push", "--quiet", "origin", name)
}

// fetch updates the project's remote-tracking branches, as an agent does
// before it proposes a PR or a merge: a card shows the remote's branches
// as last fetched (gitrepo.Reader), and an approval of a card whose base
// has moved since is refused (changed_since_approved).
func (e *env) fetch() {
	e.t.Helper()
	run(e.t, e.root, "git", "fetch", "--quiet", "origin")
}

// openPR opens a PR through the pipeline: the agent proposes pr_open, which
// is capped (pending), and the admin approves it. It returns the number.
func (e *env) openPR(head, base, title, taskID string) int64 {
	e.t.Helper()
	e.fetch()
	payload := map[string]any{"branch": head, "base": base, "title": title}
	if taskID != "" {
		payload["taskId"] = taskID
	}
	a := e.propose(e.agent, "pr_open", payload)
	if a["status"] != "pending" {
		e.t.Fatalf("pr_open must wait for a human: %v", a)
	}
	d := e.ok("POST", "/v1/actions/"+a["id"].(string)+"/approve", e.admin, nil, 200)
	if str(d, "action", "status") != "executed" {
		e.t.Fatalf("approving pr_open: %v", d)
	}
	n, err := strconv.ParseInt(str(d, "action", "result", "detail", "pr"), 10, 64)
	if err != nil || n <= 0 {
		e.t.Fatalf("pr_open gave no PR number: %v", d["action"])
	}
	// The stored action says it too, not only the answer to the click.
	stored := e.ok("GET", "/v1/actions/"+a["id"].(string), e.admin, nil, 200)
	if str(stored, "result", "detail", "pr") != strconv.FormatInt(n, 10) {
		e.t.Fatalf("the stored pr_open result lacks the PR number: %v", stored["result"])
	}
	return n
}

func (e *env) pull(n int64) map[string]any {
	e.t.Helper()
	for _, p := range e.ok("GET", e.pp("/pulls"), e.developer, nil, 200)["pulls"].([]any) {
		m := p.(map[string]any)
		if m["number"] == float64(n) {
			return m
		}
	}
	e.t.Fatalf("PR #%d is not listed", n)
	return nil
}

func (e *env) proposeMerge(token string, pr int64) map[string]any {
	e.t.Helper()
	e.fetch()
	return e.propose(token, "git_merge", map[string]any{"pr": pr})
}

// onRemote reports whether commit is reachable from branch on the bare
// origin.
func (e *env) onRemote(commit, branch string) bool {
	e.t.Helper()
	cmd := exec.Command("git", "--git-dir="+e.remote, "merge-base", "--is-ancestor", commit, "refs/heads/"+branch)
	err := cmd.Run()
	if err == nil {
		return true
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return false
	}
	e.t.Fatalf("git merge-base: %v", err)
	return false
}

func (e *env) taskEvents() []brabo.Event {
	var out []brabo.Event
	for _, ev := range e.events() {
		if ev.Type == brabo.EventTaskStatusChanged {
			out = append(out, ev)
		}
	}
	return out
}

func TestMergeLifecycle(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		commit := e.branchWithCommit("feat/login", "main", "login.txt")
		n := e.openPR("feat/login", "main", "Login", "task_42")
		pr := e.pull(n)
		if pr["state"] != "open" || pr["head"] != "feat/login" || pr["base"] != "main" || pr["taskId"] != "task_42" || pr["title"] != "Login" {
			t.Fatalf("the opened PR: %v", pr)
		}
		if e.onRemote(commit, "main") {
			t.Fatal("the branch is on main before any merge")
		}

		first := e.proposeMerge(e.agent, n)
		if first["status"] != "pending" || str(first, "payload", "targetBranch") != "main" {
			t.Fatalf("a merge into main: %v", first)
		}
		// One live proposal per PR, whoever proposes.
		before := e.written()
		e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "git_merge", "payload": map[string]any{"pr": n}}, 409, "merge_already_proposed")
		e.refused("POST", e.pp("/actions"), e.maintainer, map[string]any{"type": "git_merge", "payload": map[string]any{"pr": n}}, 409, "merge_already_proposed")
		e.unchanged(before, "a second merge proposal")

		// A denied proposal does not block a new one.
		e.ok("POST", "/v1/actions/"+first["id"].(string)+"/deny", e.maintainer, map[string]any{"reason": "wait for QA"}, 200)
		second := e.proposeMerge(e.agent, n)
		if second["status"] != "pending" {
			t.Fatalf("a merge after a denied one: %v", second)
		}
		id := second["id"].(string)

		d := e.ok("POST", "/v1/actions/"+id+"/approve", e.admin, nil, 200)
		if d["outcome"] != "approved" || str(d, "action", "status") != "executed" {
			t.Fatalf("approving the merge: %v", d)
		}
		mergeCommit := str(d, "action", "result", "detail", "merge_commit")
		// The merge is real: origin's main holds the branch's commit, under a
		// merge commit that names the PR.
		if !e.onRemote(commit, "main") || mergeCommit == "" || !e.onRemote(mergeCommit, "main") {
			t.Fatalf("origin's main lacks the merged commit %s (merge %q)", commit, mergeCommit)
		}
		log := run(t, e.root, "git", "--git-dir="+e.remote, "log", "-1", "--format=%H %s", "main")
		if want := fmt.Sprintf("%s Merge pull request #%d: Login", mergeCommit, n); strings.TrimSpace(log) != want {
			t.Errorf("origin main's head is %q, want %q", strings.TrimSpace(log), want)
		}
		pr = e.pull(n)
		if pr["state"] != "merged" || pr["mergedBy"] != id {
			t.Fatalf("the merged PR: %v", pr)
		}

		// Merged: no new proposal, whoever proposes.
		before = e.written()
		e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "git_merge", "payload": map[string]any{"pr": n}}, 409, "pr_already_merged")
		e.refused("POST", e.pp("/actions"), e.admin, map[string]any{"type": "git_merge", "payload": map[string]any{"pr": n}}, 409, "pr_already_merged")
		e.unchanged(before, "a merge proposal of a merged PR")

		// The task moved to done once.
		tasks := e.taskEvents()
		if len(tasks) != 1 {
			t.Fatalf("%d backlog.task_status_changed events, want 1: %v", len(tasks), tasks)
		}
		if p := payloadOf(tasks[0]); p["taskId"] != "task_42" || p["status"] != "done" || tasks[0].ActionID != id {
			t.Errorf("task event: %v (action %s)", p, tasks[0].ActionID)
		}

		// Clicking again runs nothing and moves nothing.
		again := e.ok("POST", "/v1/actions/"+id+"/approve", e.admin, nil, 200)
		if again["outcome"] != "already_approved" {
			t.Fatalf("a second click: %v", again)
		}
		if head := run(t, e.root, "git", "--git-dir="+e.remote, "rev-parse", "main"); strings.TrimSpace(head) != mergeCommit {
			t.Errorf("a second click moved main to %s", head)
		}
		if k := len(e.taskEvents()); k != 1 {
			t.Errorf("%d task events after a second click", k)
		}
		if k := len(e.eventsOf(id, brabo.EventActionExecuted)); k != 1 {
			t.Errorf("%d action.executed events for the merge", k)
		}
		e.refused("POST", "/v1/actions/"+first["id"].(string)+"/approve", e.admin, nil, 409, "action_already_denied")
	})
}

func TestApprovingAMergeOfAMergedPRLeavesItPending(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		commit := e.branchWithCommit("feat/cart", "main", "cart.txt")
		n := e.openPR("feat/cart", "main", "Cart", "task_7")
		id := e.proposeMerge(e.agent, n)["id"].(string)

		// Another proposal merged it meanwhile.
		var marked bool
		if err := e.store.Update(context.Background(), func(tx brabo.Tx) error {
			var err error
			marked, err = tx.MarkPRMerged(context.Background(), e.project, n, "act_elsewhere")
			return err
		}); err != nil || !marked {
			t.Fatalf("MarkPRMerged: %v %v", marked, err)
		}

		before := e.written()
		out := e.refused("POST", "/v1/actions/"+id+"/approve", e.admin, nil, 409, "pr_already_merged")
		if !strings.Contains(out["message"].(string), "act_elsewhere") {
			t.Errorf("the refusal does not name the merging action: %v", out["message"])
		}
		e.unchanged(before, "approving a merge of a merged PR")
		a := e.ok("GET", "/v1/actions/"+id, e.admin, nil, 200)
		if a["status"] != "pending" || a["decidedBy"] != nil || a["result"] != nil {
			t.Fatalf("the action left pending: %v", a)
		}
		if len(e.eventsOf(id, brabo.EventActionApproved)) != 0 || len(e.eventsOf(id, brabo.EventActionExecuted)) != 0 {
			t.Fatal("a refused approval recorded events")
		}
		if e.onRemote(commit, "main") {
			t.Fatal("a refused approval merged")
		}
		if k := len(e.taskEvents()); k != 0 {
			t.Fatalf("%d task events for a merge that did not run", k)
		}
		if pr := e.pull(n); pr["mergedBy"] != "act_elsewhere" {
			t.Errorf("mergedBy changed: %v", pr)
		}
		// It is still in the queue and can be denied.
		queued := false
		for _, x := range e.ok("GET", "/v1/queue", e.maintainer, nil, 200)["actions"].([]any) {
			queued = queued || x.(map[string]any)["id"] == id
		}
		if !queued {
			t.Error("the pending merge is not in the queue")
		}
		e.ok("POST", "/v1/actions/"+id+"/deny", e.maintainer, map[string]any{"reason": "merged elsewhere"}, 200)
	})
}

func TestAutoModeMergesIntoFeatureBranchesOnly(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.pushBranch("feat/base")
		e.pushBranch("rc")
		commit := e.branchWithCommit("feat/x", "main", "x.txt")
		e.ok("PUT", e.pp("/agents/"+e.agentID+"/autonomy"), e.maintainer, map[string]any{"actionType": "*", "mode": "auto_approve"}, 200)

		// pr_open stays capped in auto mode (openPR checks it is pending).
		toFeature := e.openPR("feat/x", "feat/base", "X into base", "task_f")
		toMain := e.openPR("feat/x", "main", "X into main", "task_m")
		toRC := e.openPR("feat/x", "rc", "X into rc", "")

		auto := e.proposeMerge(e.agent, toFeature)
		if auto["status"] != "executed" || auto["decidedBy"] != nil {
			t.Fatalf("a merge into a feature branch in auto mode: %v", auto)
		}
		if auto["reason"] != "agent_autonomy: auto_approve (wildcard)" {
			t.Errorf("reason %q", auto["reason"])
		}
		if !e.onRemote(commit, "feat/base") {
			t.Fatal("the auto-approved merge did not reach origin's feat/base")
		}
		if e.onRemote(commit, "main") {
			t.Fatal("merging into feat/base touched main")
		}
		created := e.eventsOf(auto["id"].(string), brabo.EventActionCreated)
		if len(created) != 1 || payloadOf(created[0])["status"] != "auto_approved" {
			t.Errorf("created event: %v", created)
		}
		if len(e.eventsOf(auto["id"].(string), brabo.EventActionApproved)) != 0 {
			t.Error("an auto-approval recorded proposed_action.approved")
		}
		if pr := e.pull(toFeature); pr["state"] != "merged" {
			t.Errorf("the feature PR: %v", pr)
		}

		for _, c := range []struct {
			pr     int64
			branch string
		}{{toMain, "main"}, {toRC, "rc"}} {
			capped := e.proposeMerge(e.agent, c.pr)
			if capped["status"] != "pending" || capped["reason"] != "cap: git_merge into the protected branch "+c.branch {
				t.Fatalf("a merge into %s in auto mode: %v", c.branch, capped)
			}
			if e.onRemote(commit, c.branch) {
				t.Fatalf("a capped merge reached %s", c.branch)
			}
			e.ok("POST", "/v1/actions/"+capped["id"].(string)+"/deny", e.maintainer, map[string]any{"reason": "not yet"}, 200)
		}

		// The target is the PR's base, whatever the proposal claims.
		spoof := e.propose(e.agent, "git_merge", map[string]any{"pr": toMain, "targetBranch": "feat/base"})
		if spoof["status"] != "pending" || str(spoof, "payload", "targetBranch") != "main" {
			t.Fatalf("a merge claiming another target: %v", spoof)
		}
		if e.onRemote(commit, "main") {
			t.Fatal("a spoofed target merged into main")
		}
		if k := len(e.taskEvents()); k != 1 {
			t.Fatalf("%d task events, want 1 (the feature PR's)", k)
		}
	})
}

func TestConcurrentMergeProposalsLeaveOneLive(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.branchWithCommit("feat/race", "main", "race.txt")
		n := e.openPR("feat/race", "main", "Race", "")
		before := e.written()
		const k = 20
		var wg sync.WaitGroup
		results := make(chan string, k)
		for i := 0; i < k; i++ {
			wg.Add(1)
			go func(token string) {
				defer wg.Done()
				status, out := e.call("POST", e.pp("/actions"), token, map[string]any{"type": "git_merge", "payload": map[string]any{"pr": n}})
				if status == 201 {
					results <- "created"
				} else {
					results <- fmt.Sprint(status, " ", out["code"])
				}
			}([]string{e.agent, e.maintainer, e.admin}[i%3])
		}
		wg.Wait()
		close(results)
		counts := map[string]int{}
		for r := range results {
			counts[r]++
		}
		if counts["created"] != 1 || counts["409 merge_already_proposed"] != k-1 {
			t.Fatalf("outcomes %v: want one created and %d merge_already_proposed", counts, k-1)
		}
		after := e.written()
		if after.actions != before.actions+1 || after.events != before.events+1 {
			t.Fatalf("the refused proposals wrote: before %+v after %+v", before, after)
		}
	})
}

func TestAFailedMergeDoesNotBlockTheNext(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.branchWithCommit("feat/a", "main", "README.md")
		conflicting := e.branchWithCommit("feat/b", "main", "README.md")
		a := e.openPR("feat/a", "main", "A", "task_a")
		b := e.openPR("feat/b", "main", "B", "task_b")
		ma := e.proposeMerge(e.agent, a)["id"].(string)
		if d := e.ok("POST", "/v1/actions/"+ma+"/approve", e.admin, nil, 200); str(d, "action", "status") != "executed" {
			t.Fatalf("merging A: %v", d)
		}
		head := strings.TrimSpace(run(t, e.root, "git", "--git-dir="+e.remote, "rev-parse", "main"))

		mb := e.proposeMerge(e.agent, b)["id"].(string)
		d := e.ok("POST", "/v1/actions/"+mb+"/approve", e.admin, nil, 200)
		if str(d, "action", "status") != "failed" || str(d, "action", "result", "error") != "merge conflict" {
			t.Fatalf("merging B over A: %v", d["action"])
		}
		if now := strings.TrimSpace(run(t, e.root, "git", "--git-dir="+e.remote, "rev-parse", "main")); now != head || e.onRemote(conflicting, "main") {
			t.Fatalf("a failed merge moved origin's main from %s to %s", head, now)
		}
		if len(e.eventsOf(mb, brabo.EventActionFailed)) != 1 {
			t.Error("no action.failed for the conflicting merge")
		}
		if pr := e.pull(b); pr["state"] != "open" || pr["mergedBy"] != nil {
			t.Fatalf("a failed merge marked the PR: %v", pr)
		}
		tasks := e.taskEvents()
		if len(tasks) != 1 || payloadOf(tasks[0])["taskId"] != "task_a" {
			t.Fatalf("task events: %v", tasks)
		}
		// The failed proposal is not live: a new one may be made.
		if again := e.proposeMerge(e.agent, b); again["status"] != "pending" {
			t.Fatalf("a merge after a failed one: %v", again)
		}
	})
}
