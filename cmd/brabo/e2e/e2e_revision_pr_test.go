package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// A pull request's card binds its head and base by SHA (issue 28, item 1):
// pr_open opens, and git_merge merges, exactly the commits shown, through
// the real server, a real repository and its real bare origin.

// approveAs approves id naming revision rev, as the member of token.
func (e *env) approveAs(token, id, rev string) (int, map[string]any) {
	e.t.Helper()
	return e.callBare("POST", "/v1/actions/"+id+"/approve", token, map[string]any{"revision": rev})
}

// advance commits file on branch in the project and pushes it to origin
// (the project's remote-tracking ref follows): it returns the commit.
func (e *env) advance(branch, file string) string {
	e.t.Helper()
	e.git("checkout", "--quiet", branch)
	if err := os.WriteFile(filepath.Join(e.root, file), []byte(file+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.git("add", "--", file)
	e.git("commit", "--quiet", "-m", "more: "+file)
	hash := e.git("rev-parse", "HEAD")
	e.git("push", "--quiet", "origin", branch)
	e.git("checkout", "--quiet", "main")
	return hash
}

// pushBehindBrabo commits file on branch in another clone of origin and
// pushes it there: the remote moves and the project's view of it (as last
// fetched) does not. It returns the commit.
func (e *env) pushBehindBrabo(branch, file string) string {
	e.t.Helper()
	other := filepath.Join(e.t.TempDir(), "other")
	run(e.t, filepath.Dir(other), "git", "clone", "--quiet", "--branch", branch, e.remote, other)
	os.WriteFile(filepath.Join(other, file), []byte(file+"\n"), 0o644)
	run(e.t, other, "git", "add", "--", file)
	run(e.t, other, "git", "commit", "--quiet", "-m", "behind brabo: "+file)
	run(e.t, other, "git", "push", "--quiet", "origin", branch)
	return strings.TrimSpace(run(e.t, other, "git", "rev-parse", "HEAD"))
}

func (e *env) originAt(branch string) string {
	e.t.Helper()
	return strings.TrimSpace(run(e.t, e.root, "git", "--git-dir", e.remote, "rev-parse", "refs/heads/"+branch))
}

func (e *env) pullCount() int {
	e.t.Helper()
	return len(e.ok("GET", e.pp("/pulls"), e.developer, nil, 200)["pulls"].([]any))
}

// mergeCard proposes the merge of a fresh PR of branch head into main and
// reads its card: the action, the card, the head's commit.
func (e *env) mergeCard(head string) (string, map[string]any, string) {
	e.t.Helper()
	commit := e.branchWithCommit(head, "main", strings.ReplaceAll(head, "/", "-")+".txt")
	n := e.openPR(head, "main", "PR "+head, "")
	id := str(e.proposeMerge(e.agent, n), "id")
	shown := e.card(id)
	if str(shown, "status") != "pending" || boundPart(shown, "head") != commit || boundPart(shown, "base") != e.originMain() {
		e.t.Fatalf("the merge card binds head %q base %q, want %s and main's %s: %v",
			boundPart(shown, "head"), boundPart(shown, "base"), commit, e.originMain(), shown["preview"])
	}
	return id, shown, commit
}

// TestMergeRunsTheShownHeadIntoTheShownBase: a merge whose head or base
// moves on the remote between the approval and the run fails
// changed_since_approved and merges nothing; one that did not move merges
// exactly the shown head.
func TestMergeRunsTheShownHeadIntoTheShownBase(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		var move func(req brabo.ExecRequest)
		e.svc.Executor = &movingExecutor{Executor: e.app.Executor, move: func(req brabo.ExecRequest) {
			if req.Action.Type == brabo.GitMerge && move != nil {
				move(req)
			}
		}}

		// The head moves.
		id, shown, _ := e.mergeCard("feat/head")
		var unseen string
		move = func(brabo.ExecRequest) { unseen = e.pushBehindBrabo("feat/head", "unseen.txt") }
		before := e.originMain()
		status, out := e.approveAs(e.admin, id, str(shown, "revision"))
		if status != 200 || str(out, "action", "status") != "failed" ||
			str(out, "action", "result", "code") != string(brabo.CodeChangedSinceApproved) {
			t.Fatalf("merge after the head moved: %d %v, want failed changed_since_approved", status, out)
		}
		if got := e.originMain(); got != before || e.onRemote(unseen, "main") {
			t.Fatalf("origin's main moved to %s: the unseen head %s was merged", got, unseen)
		}

		// The base moves.
		id, shown, head := e.mergeCard("feat/base")
		move = func(brabo.ExecRequest) { e.pushBehindBrabo("main", "base-moved.txt") }
		status, out = e.approveAs(e.admin, id, str(shown, "revision"))
		if status != 200 || str(out, "action", "result", "code") != string(brabo.CodeChangedSinceApproved) {
			t.Fatalf("merge after the base moved: %d %v, want failed changed_since_approved", status, out)
		}
		if e.onRemote(head, "main") {
			t.Fatal("the head was merged into a base nobody saw")
		}

		// Nothing moves: the shown head is merged, by SHA.
		e.git("fetch", "--quiet", "origin")
		e.git("merge", "--quiet", "--ff-only", "origin/main")
		move = nil
		id, shown, head = e.mergeCard("feat/shown")
		status, out = e.approveAs(e.admin, id, str(shown, "revision"))
		if status != 200 || str(out, "action", "status") != "executed" {
			t.Fatalf("approve the shown merge: %d %v", status, out)
		}
		merge := str(out, "action", "result", "detail", "merge_commit")
		parents := strings.Fields(run(t, e.root, "git", "--git-dir", e.remote, "rev-list", "--parents", "-n1", merge))
		if len(parents) != 3 || parents[1] != boundPart(shown, "base") || parents[2] != head {
			t.Fatalf("the merge %v is not the shown head %s into the shown base %s", parents, head, boundPart(shown, "base"))
		}
		if got := str(out, "action", "result", "detail", "head_commit"); got != head {
			t.Fatalf("the merge reports head %q, want %s", got, head)
		}
	})
}

// TestMergeApprovedAtAStaleCardIsRefused: the head gets a new commit
// between the card and the approval: 409 card_changed, the merge waits
// with a new revision naming the new head, nothing merged; at the new
// revision it merges that head.
func TestMergeApprovedAtAStaleCardIsRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		id, shown, _ := e.mergeCard("feat/stale")
		before := e.originMain()
		later := e.advance("feat/stale", "later.txt")
		status, out := e.approveAs(e.admin, id, str(shown, "revision"))
		e.cardChanged(id, status, out, "head")
		if got := e.originMain(); got != before {
			t.Fatalf("origin's main moved to %s on a refused approval", got)
		}
		now := e.card(id)
		if rev := str(now, "revision"); rev == str(shown, "revision") || boundPart(now, "head") != later {
			t.Fatalf("the new card binds head %q (revision %s), want %s", boundPart(now, "head"), rev, later)
		}
		status, out = e.approveAs(e.admin, id, str(now, "revision"))
		if status != 200 || str(out, "action", "status") != "executed" || !e.onRemote(later, "main") {
			t.Fatalf("approve at the new revision: %d %v", status, out)
		}
	})
}

// TestPROpenOpensOnTheShownHead: pr_open binds its head and base by SHA.
// A head that moves on the remote between the approval and the run opens
// nothing (changed_since_approved); a stale card is 409 card_changed and
// the action waits with the new head; the current card opens on exactly
// the shown head.
func TestPROpenOpensOnTheShownHead(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		var move func()
		e.svc.Executor = &movingExecutor{Executor: e.app.Executor, move: func(req brabo.ExecRequest) {
			if req.Action.Type == brabo.PrOpen && move != nil {
				move()
			}
		}}
		head := e.branchWithCommit("feat/pr", "main", "pr.txt")
		propose := func() (string, map[string]any) {
			id := str(e.propose(e.agent, "pr_open", map[string]any{"branch": "feat/pr", "base": "main", "title": "PR"}), "id")
			shown := e.card(id)
			if str(shown, "status") != "pending" || boundPart(shown, "head") == "" {
				t.Fatalf("the pr_open card binds no head: %v", shown)
			}
			return id, shown
		}

		// Moved between the approval and the run.
		id, shown := propose()
		if boundPart(shown, "head") != head {
			t.Fatalf("the card binds head %q, want %s", boundPart(shown, "head"), head)
		}
		move = func() { e.pushBehindBrabo("feat/pr", "unseen.txt") }
		status, out := e.approveAs(e.admin, id, str(shown, "revision"))
		if status != 200 || str(out, "action", "status") != "failed" ||
			str(out, "action", "result", "code") != string(brabo.CodeChangedSinceApproved) {
			t.Fatalf("pr_open after the head moved: %d %v, want failed changed_since_approved", status, out)
		}
		if n := e.pullCount(); n != 0 {
			t.Fatalf("%d pull requests opened on a head nobody saw", n)
		}
		move = nil
		e.git("fetch", "--quiet", "origin")
		e.git("branch", "--force", "feat/pr", "origin/feat/pr")

		// A stale card.
		id, shown = propose()
		later := e.advance("feat/pr", "later.txt")
		status, out = e.approveAs(e.admin, id, str(shown, "revision"))
		e.cardChanged(id, status, out, "head")
		if n := e.pullCount(); n != 0 {
			t.Fatalf("%d pull requests opened on a refused approval", n)
		}
		now := e.card(id)
		if boundPart(now, "head") != later {
			t.Fatalf("the new card binds head %q, want %s", boundPart(now, "head"), later)
		}

		// The current card.
		status, out = e.approveAs(e.admin, id, str(now, "revision"))
		if status != 200 || str(out, "action", "status") != "executed" {
			t.Fatalf("approve at the new revision: %d %v", status, out)
		}
		if got := str(out, "action", "result", "detail", "head_commit"); got != later || e.originAt("feat/pr") != later {
			t.Fatalf("the PR opened on %q (origin at %s), want the shown %s", got, e.originAt("feat/pr"), later)
		}
	})
}
