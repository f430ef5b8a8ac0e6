package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/gitrepo"
)

// An approval binds to what was shown (issue 28, item 1; docs/api.md,
// "Approving what was shown"): through the real server, with a real git
// repository and its real bare origin, on both stores.

// revEnv is newEnv with the repository reader the served binary has, so
// that cards read the repository.
func revEnv(t *testing.T, e *env) *env {
	e.svc.Repo = &gitrepo.Reader{}
	return e
}

// card reads the action as a human sees it now.
func (e *env) card(id string) map[string]any {
	e.t.Helper()
	return e.ok("GET", "/v1/actions/"+id, e.maintainer, nil, 200)
}

// approveAt approves id naming revision rev, as the maintainer.
func (e *env) approveAt(id, rev string) (int, map[string]any) {
	e.t.Helper()
	return e.callBare("POST", "/v1/actions/"+id+"/approve", e.maintainer, map[string]any{"revision": rev})
}

func (e *env) git(args ...string) string {
	e.t.Helper()
	return strings.TrimSpace(run(e.t, e.root, append([]string{"git"}, args...)...))
}

func (e *env) originMain() string {
	e.t.Helper()
	return strings.TrimSpace(run(e.t, e.root, "git", "--git-dir", e.remote, "rev-parse", "refs/heads/main"))
}

// agentCommits makes a commit on main as the agent would, behind brabo's
// back: it returns the new commit's hash.
func (e *env) agentCommits(file, content string) string {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.root, file), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.git("add", "--", file)
	e.git("commit", "--quiet", "-m", "later: "+file)
	return e.git("rev-parse", "HEAD")
}

// cardChanged checks a refusal as card_changed naming what moved, and
// that it was recorded with the action still pending.
func (e *env) cardChanged(id string, status int, out map[string]any, moved ...string) {
	e.t.Helper()
	if status != 409 || out["code"] != string(brabo.CodeCardChanged) {
		e.t.Fatalf("approve: %d %v, want 409 card_changed", status, out)
	}
	msg, _ := out["message"].(string)
	for _, m := range moved {
		if !strings.Contains(msg, m) {
			e.t.Errorf("the refusal does not name %q as moved: %s", m, msg)
		}
	}
	if got := str(e.card(id), "status"); got != "pending" {
		e.t.Fatalf("after card_changed the action is %s, want pending", got)
	}
	n := 0
	for _, ev := range e.events() {
		if ev.Type == brabo.EventCardChanged && ev.ActionID == id {
			n++
		}
	}
	if n == 0 {
		e.t.Errorf("no %s event recorded for %s", brabo.EventCardChanged, id)
	}
}

func commitsOf(a map[string]any) []string {
	var out []string
	pv, _ := a["preview"].(map[string]any)
	cs, _ := pv["commits"].([]any)
	for _, c := range cs {
		out = append(out, c.(map[string]any)["hash"].(string))
	}
	return out
}

// TestApproveRefusesAStalePushCard is (a) and (b): a git_push whose card
// showed nothing to push, approved with that card's revision after a
// later commit, is refused card_changed, stays pending (the same action)
// with a new revision that shows the new commit, and the remote is
// unchanged; approved with the new revision it pushes exactly that commit.
func TestApproveRefusesAStalePushCard(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		before := e.originMain()
		id := str(e.propose(e.agent, "git_push", map[string]any{"branch": "main"}), "id")
		shown := e.card(id)
		if str(shown, "status") != "pending" || len(commitsOf(shown)) != 0 {
			t.Fatalf("the card should be pending with nothing to push: %v", shown)
		}
		rev0 := str(shown, "revision")
		if rev0 == "" || str(shown, "preview", "revision") != rev0 {
			t.Fatalf("the card has no revision: %v", shown)
		}
		later := e.agentCommits("later.txt", "later\n")

		// (a)
		status, out := e.approveAt(id, rev0)
		e.cardChanged(id, status, out, "commit")
		if got := e.originMain(); got != before {
			t.Fatalf("the remote moved to %s on a refused approval", got)
		}
		now := e.card(id)
		rev1 := str(now, "revision")
		if rev1 == "" || rev1 == rev0 {
			t.Fatalf("the card kept its revision %q after the branch moved", rev1)
		}
		if cs := commitsOf(now); len(cs) != 1 || !strings.HasPrefix(later, cs[0]) {
			t.Fatalf("the new card shows %v, want the one commit %s", cs, later)
		}
		if n := len(e.ok("GET", e.pp("/actions"), e.maintainer, nil, 200)["actions"].([]any)); n != 1 {
			t.Fatalf("%d actions after card_changed, want the one still pending", n)
		}

		// (b)
		status, out = e.approveAt(id, rev1)
		if status != 200 || str(out, "action", "status") != "executed" {
			t.Fatalf("approve at the new revision: %d %v", status, out)
		}
		if got := e.originMain(); got != later {
			t.Fatalf("the remote is at %s, want exactly the shown %s", got, later)
		}
		if got := str(out, "action", "result", "detail", "commit"); got != later {
			t.Fatalf("the push reports %s, want %s", got, later)
		}
		// The card as decided is the card approved, not the proposal's.
		if decided := e.card(id); str(decided, "revision") != rev1 || len(commitsOf(decided)) != 1 {
			t.Fatalf("the decided card is not the approved one: %v", decided["preview"])
		}
	})
}

// TestApproveRefusesACommitCardWhosePermissionsMoved is (c): a git_commit
// whose card showed one file, with permissions.json edited on disk after
// the proposal, is refused card_changed and commits nothing; approved at
// the new card's revision it commits exactly the paths that card shows.
func TestApproveRefusesACommitCardWhosePermissionsMoved(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		head := e.git("rev-parse", "HEAD")
		os.WriteFile(filepath.Join(e.root, "src", "notes.txt"), []byte("hello, edited\n"), 0o644)
		id := str(e.propose(e.agent, "git_commit", map[string]any{"message": "one file"}), "id")
		shown := e.card(id)
		if str(shown, "status") != "pending" {
			t.Fatalf("git_commit is %s, want pending", str(shown, "status"))
		}
		if paths := boundPart(shown, "paths"); paths != "src/notes.txt" {
			t.Fatalf("the card binds the paths %q, want src/notes.txt", paths)
		}
		if boundPart(shown, "tree") == "" {
			t.Fatalf("the card binds no tree: %v", shown["preview"])
		}
		os.WriteFile(filepath.Join(e.root, "permissions.json"), []byte(`{"allow":["Terminal(*)"]}`), 0o644)

		status, out := e.approveAt(id, str(shown, "revision"))
		e.cardChanged(id, status, out, "tree", "paths")
		if got := e.git("rev-parse", "HEAD"); got != head {
			t.Fatalf("HEAD moved to %s on a refused approval", got)
		}
		now := e.card(id)
		if paths := boundPart(now, "paths"); paths != "permissions.json\nsrc/notes.txt" {
			t.Fatalf("the new card binds %q, want both files", paths)
		}
		status, out = e.approveAt(id, str(now, "revision"))
		if status != 200 || str(out, "action", "status") != "executed" {
			t.Fatalf("approve at the new revision: %d %v", status, out)
		}
		committed := strings.Fields(e.git("show", "--name-only", "--format=", "HEAD"))
		if !slices.Equal(committed, []string{"permissions.json", "src/notes.txt"}) {
			t.Fatalf("the commit holds %v, want what the card showed", committed)
		}
		if tree := e.git("rev-parse", "HEAD^{tree}"); tree != boundPart(now, "tree") {
			t.Fatalf("the commit records the tree %s, the card showed %s", tree, boundPart(now, "tree"))
		}
	})
}

func boundPart(a map[string]any, name string) string {
	pv, _ := a["preview"].(map[string]any)
	bs, _ := pv["bound"].([]any)
	for _, b := range bs {
		if m := b.(map[string]any); m["name"] == name {
			return m["value"].(string)
		}
	}
	return ""
}

// TestApproveRefusesAWriteCardWhoseFileMoved is (d): a write_file whose
// target changed on disk between the card and the approval is refused
// card_changed and writes nothing; at the new revision it writes.
func TestApproveRefusesAWriteCardWhoseFileMoved(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		target := filepath.Join(e.root, "src", "notes.txt")
		id := str(e.propose(e.agent, "write_file", map[string]any{"path": "src/notes.txt", "content": "the agent's\n"}), "id")
		shown := e.card(id)
		if str(shown, "status") != "pending" {
			t.Fatalf("write_file is %s, want pending", str(shown, "status"))
		}
		os.WriteFile(target, []byte("a human's edit\n"), 0o644)

		status, out := e.approveAt(id, str(shown, "revision"))
		e.cardChanged(id, status, out, "file")
		if b, _ := os.ReadFile(target); string(b) != "a human's edit\n" {
			t.Fatalf("a refused approval wrote %q", b)
		}
		now := e.card(id)
		if !strings.Contains(str(now, "preview", "diff", "unified"), "-a human's edit") {
			t.Fatalf("the new card does not show the edit it replaces: %v", now["preview"])
		}
		status, out = e.approveAt(id, str(now, "revision"))
		if status != 200 || str(out, "action", "status") != "executed" {
			t.Fatalf("approve at the new revision: %d %v", status, out)
		}
		if b, _ := os.ReadFile(target); string(b) != "the agent's\n" {
			t.Fatalf("the approved write left %q", b)
		}
	})
}

// TestApproveWithoutARevisionIsRefused is (e): an approve naming no
// revision approves nothing, through the API and the web form alike.
func TestApproveWithoutARevisionIsRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		id := str(e.terminal("touch norev.txt"), "id")
		status, out := e.callBare("POST", "/v1/actions/"+id+"/approve", e.maintainer, nil)
		e.cardChanged(id, status, out)
		if msg := str(out, "message"); !strings.Contains(msg, str(e.card(id), "revision")) {
			t.Errorf("the refusal does not give the card's revision: %s", msg)
		}
		status, out = e.callBare("POST", "/v1/actions/"+id+"/approve-always", e.maintainer, nil)
		e.cardChanged(id, status, out)
		if _, err := os.Stat(filepath.Join(e.root, "norev.txt")); err == nil {
			t.Fatal("an approve without a revision ran the command")
		}
	})
}

// movingExecutor is the real executor, with the repository moved between
// the approval's claim and the run: what a commit made in that instant
// does.
type movingExecutor struct {
	*executor.Executor
	move func(req brabo.ExecRequest)
}

func (m *movingExecutor) Execute(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	m.move(req)
	return m.Executor.Execute(ctx, req)
}

// TestRunFailsWhenTheRepositoryMovedAfterApproval is (f): a repository
// that moves between the approval and the run fails the action
// changed_since_approved, and nothing runs: the remote keeps its commit,
// the file its content.
func TestRunFailsWhenTheRepositoryMovedAfterApproval(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		shownCommit := e.agentCommits("shown.txt", "shown\n")
		before := e.originMain()
		var moved string
		e.svc.Executor = &movingExecutor{Executor: e.app.Executor, move: func(req brabo.ExecRequest) {
			switch req.Action.Type {
			case brabo.GitPush:
				moved = e.agentCommits("unseen.txt", "unseen\n")
			case brabo.WriteFile:
				os.WriteFile(filepath.Join(e.root, "src", "notes.txt"), []byte("moved\n"), 0o644)
			case brabo.GitCommit:
				os.WriteFile(filepath.Join(e.root, "extra.txt"), []byte("unseen\n"), 0o644)
			}
		}}
		id := str(e.propose(e.agent, "git_push", map[string]any{"branch": "main"}), "id")
		shown := e.card(id)
		if cs := commitsOf(shown); len(cs) != 1 || !strings.HasPrefix(shownCommit, cs[0]) {
			t.Fatalf("the card shows %v, want %s", cs, shownCommit)
		}
		status, out := e.approveAt(id, str(shown, "revision"))
		if status != 200 || str(out, "action", "status") != "failed" ||
			str(out, "action", "result", "code") != string(brabo.CodeChangedSinceApproved) {
			t.Fatalf("push after the branch moved: %d %v, want failed changed_since_approved", status, out)
		}
		if got := e.originMain(); got != before {
			t.Fatalf("the remote moved to %s (the unseen commit is %s); nothing should have run", got, moved)
		}

		id = str(e.propose(e.agent, "write_file", map[string]any{"path": "src/notes.txt", "content": "approved\n"}), "id")
		status, out = e.approveAt(id, str(e.card(id), "revision"))
		if status != 200 || str(out, "action", "result", "code") != string(brabo.CodeChangedSinceApproved) {
			t.Fatalf("write after the file moved: %d %v, want failed changed_since_approved", status, out)
		}
		if b, _ := os.ReadFile(filepath.Join(e.root, "src", "notes.txt")); string(b) != "moved\n" {
			t.Fatalf("the write ran over the moved file: %q", b)
		}

		head := e.git("rev-parse", "HEAD")
		id = str(e.propose(e.agent, "git_commit", map[string]any{"message": "the shown tree"}), "id")
		status, out = e.approveAt(id, str(e.card(id), "revision"))
		if status != 200 || str(out, "action", "result", "code") != string(brabo.CodeChangedSinceApproved) {
			t.Fatalf("commit after the tree moved: %d %v, want failed changed_since_approved", status, out)
		}
		if got := e.git("rev-parse", "HEAD"); got != head {
			t.Fatalf("HEAD moved to %s: a commit of a tree nobody saw", got)
		}
		if st := e.git("status", "--porcelain"); !strings.Contains(st, "?? extra.txt") {
			t.Fatalf("the refused commit staged what it should not have: %q", st)
		}
	})
}

// countingStager is the real executor, counting the stagings of commit
// cards.
type countingStager struct {
	*executor.Executor
	n int
}

func (c *countingStager) StageTree(ctx context.Context, req brabo.ExecRequest) (*brabo.StagedTree, error) {
	c.n++
	return c.Executor.StageTree(ctx, req)
}

// TestShowingTheQueueAgainStagesNothingThatDidNotMove: a commit card is
// computed again when shown, from the cache while the repository is as it
// was; an edit of the working tree computes it again; an approval always
// does.
func TestShowingTheQueueAgainStagesNothingThatDidNotMove(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		revEnv(t, e)
		c := &countingStager{Executor: e.app.Executor}
		e.svc.Executor = c
		os.WriteFile(filepath.Join(e.root, "src", "notes.txt"), []byte("edited\n"), 0o644)
		id := str(e.propose(e.agent, "git_commit", map[string]any{"message": "cached"}), "id")
		for range 3 {
			e.ok("GET", "/v1/queue", e.maintainer, nil, 200)
			e.card(id)
		}
		if c.n != 1 {
			t.Fatalf("%d stagings for six views of one unchanged card, want 1", c.n)
		}
		os.WriteFile(filepath.Join(e.root, "src", "more.txt"), []byte("more\n"), 0o644)
		if paths := boundPart(e.card(id), "paths"); paths != "src/more.txt\nsrc/notes.txt" || c.n != 2 {
			t.Fatalf("after an edit: %d stagings, paths %q", c.n, paths)
		}
		approved := str(e.card(id), "revision")
		if status, out := e.approveAt(id, approved); status != 200 {
			t.Fatalf("approve: %d %v", status, out)
		}
		if c.n < 3 {
			t.Fatalf("the approval used the cached card (%d stagings)", c.n)
		}
		// The card as decided is the one approved (with its tree), not the
		// proposal's.
		if decided := e.card(id); str(decided, "revision") != approved || boundPart(decided, "tree") == "" {
			t.Fatalf("the decided card is not the approved one: %v", decided["preview"])
		}
	})
}
