package devagent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
)

// worktreeScript lists, runs a command that asks (touch) and prints where
// it ran, then reads back a file the test left in the worktree while the
// agent waited.
func worktreeScript(agentID string) string {
	return fmt.Sprintf(`{"turns": [
  {"toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "ls"}}]},
  {"expectToolResult": "README.md",
   "toolCalls": [{"id": "c2", "name": "terminal", "arguments": {"command": "touch made.txt && pwd"}}]},
  {"expectToolResult": %q,
   "toolCalls": [{"id": "c3", "name": "read_file", "arguments": {"path": "scratch.txt"}}]},
  {"expectToolResult": "left while waiting", "content": "Done."}
]}`, devagent.WorktreeRel(agentID))
}

// checkHeld checks that the agent's worktree exists, on the task's branch.
func (w *world) checkHeld(t *testing.T, a *brabo.Agent, task *brabo.Task) {
	t.Helper()
	dir := w.worktree(a)
	must(t, gitIn(t, dir, "rev-parse", "--abbrev-ref", "HEAD") == devagent.TaskBranch(task.ID),
		"the worktree %s is not on the task's branch", dir)
	must(t, samePath(gitIn(t, dir, "rev-parse", "--show-toplevel"), dir), "%s is not a worktree's top", dir)
}

func samePath(a, b string) bool {
	ra, _ := filepath.EvalSymlinks(a)
	rb, _ := filepath.EvalSymlinks(b)
	return ra != "" && ra == rb
}

func TestTheAgentWorksAndWaitsInItsOwnWorktreeAcrossARestart(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, worktreeScript(w.agent.ID))
	stop := w.startAgent(t, w.manager(rec, time.Hour))
	r := w.awaiting(t)

	// The pending command runs in the worktree, on the task's branch.
	a := w.action(t, r.AwaitingActionID)
	must(t, a.Payload.Cwd == devagent.WorktreeRel(w.agent.ID), "the pending command's cwd is %q", a.Payload.Cwd)
	w.checkHeld(t, w.agent, w.task)
	// The main checkout does not see the worktrees.
	must(t, gitIn(t, w.root, "status", "--porcelain") == "", "the main checkout is not clean: %q", gitIn(t, w.root, "status", "--porcelain"))
	// Something left in the worktree while the agent waits stays there.
	if err := os.WriteFile(filepath.Join(w.worktree(w.agent), "scratch.txt"), []byte("left while waiting\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A restart: the restored agent finds the same worktree, untouched.
	stop()
	rec2 := newRecorder(t, worktreeScript(w.agent.ID))
	m2 := w.manager(rec2, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); m2.Wait() })
	if err := m2.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	must(t, m2.Live(w.agent.ID), "Restore did not bring the agent back")
	run(t, func(ctx context.Context) { w.worker(m2).Run(ctx) })
	w.checkHeld(t, w.agent, w.task)
	must(t, w.exists("scratch.txt") && !w.exists("made.txt"), "the worktree changed while the agent waited")

	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	must(t, w.exists("made.txt"), "the approved command did not run in the worktree")
	_, err := os.Stat(filepath.Join(w.root, "made.txt"))
	must(t, os.IsNotExist(err), "the approved command ran in the main checkout")
	res, ok := toolResult(rec2.Req(t, 0), "c2")
	must(t, ok && strings.Contains(res.Content, devagent.WorktreeRel(w.agent.ID)) && !res.IsError,
		"the resumed command ran in %+v", res)
	// Done without a pull request: the work lives in the worktree only, so
	// it is kept.
	w.checkHeld(t, w.agent, w.task)
}

func TestTwoAgentsOfOneProjectGetTwoWorktrees(t *testing.T) {
	w := newWorld(t)
	second := w.newAgent(t, "coder-2", true)
	other := &brabo.Task{ID: brabo.NewID("tsk"), ProjectID: w.prj.ID, Title: "Another", Status: brabo.TaskTodo,
		CreatedAt: time.Now().UTC()}
	ctx := context.Background()
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateTask(ctx, other) }); err != nil {
		t.Fatal(err)
	}
	const waits = `{"turns": [{"toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "touch mine.txt && pwd"}}]}]}`
	actx, cancel := context.WithCancel(ctx)
	var mgrs []*devagent.Manager
	t.Cleanup(func() {
		cancel()
		for _, m := range mgrs {
			m.Wait()
		}
	})
	for _, a := range []*brabo.Agent{w.agent, second} {
		m := w.manager(newRecorder(t, waits), time.Hour)
		mgrs = append(mgrs, m)
		if err := m.Start(actx, a); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both agents to wait", func() bool {
		n := 0
		for _, a := range []*brabo.Agent{w.agent, second} {
			var r *brabo.Run
			w.store.View(ctx, func(tx brabo.Tx) error {
				r, _ = tx.WaitingRun(ctx, brabo.AgentKey(a.ID))
				return nil
			})
			if r != nil {
				n++
			}
		}
		return n == 2
	})
	tasks := map[string]*brabo.Task{}
	for _, id := range []string{w.task.ID, other.ID} {
		var task *brabo.Task
		w.store.View(ctx, func(tx brabo.Tx) error {
			var err error
			task, err = tx.Task(ctx, id)
			return err
		})
		tasks[task.AgentID] = task
	}
	for _, a := range []*brabo.Agent{w.agent, second} {
		task := tasks[a.ID]
		must(t, task != nil, "agent %s holds no task", a.Name)
		w.checkHeld(t, a, task)
		var r *brabo.Run
		w.store.View(ctx, func(tx brabo.Tx) error {
			r, _ = tx.WaitingRun(ctx, brabo.AgentKey(a.ID))
			return nil
		})
		act := w.action(t, r.AwaitingActionID)
		must(t, act.Payload.Cwd == devagent.WorktreeRel(a.ID), "agent %s's command runs in %q", a.Name, act.Payload.Cwd)
	}
	must(t, w.worktree(w.agent) != w.worktree(second), "one worktree for two agents")
	list := gitIn(t, w.root, "worktree", "list", "--porcelain")
	must(t, strings.Count(list, "worktree ") == 3, "want the main checkout and two worktrees:\n%s", list)
}

// The whole way of a task's branch: committed in the worktree, pushed by
// git_push (which waits for a human), opened as the pull request; then
// the worktree is removed and the branch stays.
func TestTheTaskBranchIsCommittedPushedAndOpenedFromTheWorktree(t *testing.T) {
	w := newWorld(t)
	remote := w.gitRoot(t)
	ctx := context.Background()
	// git_commit is auto-approved (the seeded autonomy of dev agents); even
	// a permissions file that allows every push cannot lift the push's cap.
	if err := w.store.Update(ctx, func(tx brabo.Tx) error {
		return tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: w.agent.ID, ActionType: brabo.GitCommit, Mode: brabo.AutoApprove})
	}); err != nil {
		t.Fatal(err)
	}
	perms := `{"allow":["Terminal(echo)","Terminal(cat)","GitPush()"]}`
	if err := os.WriteFile(filepath.Join(w.root, "permissions.json"), []byte(perms), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, `{"turns": [
  {"toolCalls": [{"id": "t1", "name": "terminal", "arguments": {"command": "echo made > made.txt"}}]},
  {"expectToolResult": "exit code: 0", "toolCalls": [{"id": "g1", "name": "git_commit", "arguments": {"message": "Make made.txt"}}]},
  {"expectToolResult": "commit", "toolCalls": [{"id": "p1", "name": "git_push", "arguments": {}}]},
  {"expectToolResult": "exit code: 0", "toolCalls": [{"id": "t2", "name": "terminal", "arguments": {"command": "cat made.txt"}}]},
  {"expectToolResult": "made", "toolCalls": [{"id": "r1", "name": "report_done", "arguments": {"title": "Make made.txt", "summary": "done"}}]}
]}`)
	w.startAgent(t, w.manager(rec, time.Hour))
	push := w.action(t, w.awaiting(t).AwaitingActionID)
	branch := devagent.TaskBranch(w.task.ID)
	must(t, push.Type == brabo.GitPush && push.Payload.Branch == branch && push.Payload.Remote == "" &&
		push.Status == brabo.StatusPending && strings.HasPrefix(push.Reason, "cap:"), "the run awaits %+v", push)
	head := gitIn(t, w.worktree(w.agent), "rev-parse", "HEAD")
	must(t, gitIn(t, w.root, "rev-parse", "refs/heads/"+branch) == head, "the commit is not on the task's branch")
	must(t, gitIn(t, w.root, "rev-parse", "main") != head, "the commit went to main")
	w.approve(t, push.ID)
	must(t, gitIn(t, remote, "rev-parse", "refs/heads/"+branch) == head, "the push did not reach the remote")

	var r *brabo.Run
	waitFor(t, "the run to await its pull request", func() bool {
		r = w.agentRun(t)
		return r != nil && r.State == brabo.RunAwaitingPR
	})
	w.checkHeld(t, w.agent, w.task)
	pr := w.action(t, r.AwaitingActionID)
	must(t, pr.Type == brabo.PrOpen && pr.Payload.Branch == branch, "the pull request: %+v", pr)
	w.approve(t, pr.ID)
	w.taskIn(t, brabo.TaskInReview)
	prs := w.prs(t)
	must(t, len(prs) == 1 && prs[0].Head == branch, "PRs: %+v", prs)
	waitFor(t, "the worktree to be removed", func() bool {
		_, err := os.Stat(w.worktree(w.agent))
		return os.IsNotExist(err)
	})
	must(t, gitIn(t, w.root, "rev-parse", "refs/heads/"+branch) == head, "the branch did not stay")
}

// A task left with uncommitted work in the worktree is not lost when the
// agent claims its next task: that worktree is moved aside.
func TestTheNextTaskSetsAsideAWorktreeWithUncommittedWork(t *testing.T) {
	w := newWorld(t)
	next := &brabo.Task{ID: brabo.NewID("tsk"), ProjectID: w.prj.ID, Title: "Next", Status: brabo.TaskTodo,
		CreatedAt: time.Now().UTC().Add(time.Second)}
	ctx := context.Background()
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateTask(ctx, next) }); err != nil {
		t.Fatal(err)
	}
	// The scripted model replays its script for each conversation: each
	// task leaves left.txt uncommitted and ends without a pull request.
	rec := newRecorder(t, `{"turns": [
  {"toolCalls": [{"id": "t1", "name": "terminal", "arguments": {"command": "echo left > left.txt"}}]},
  {"content": "Done."}
]}`)
	w.startAgent(t, w.manager(rec, time.Hour))
	waitFor(t, "both tasks to be done", func() bool {
		var task *brabo.Task
		w.store.View(ctx, func(tx brabo.Tx) error {
			var err error
			task, err = tx.Task(ctx, next.ID)
			return err
		})
		return w.getTask(t).Status == brabo.TaskDone && task.Status == brabo.TaskDone
	})
	w.checkHeld(t, w.agent, next)
	aside := w.worktree(w.agent) + "-" + w.task.ID
	data, err := os.ReadFile(filepath.Join(aside, "left.txt"))
	must(t, err == nil && string(data) == "left\n", "the first task's work: %q, %v", data, err)
	must(t, gitIn(t, aside, "rev-parse", "--abbrev-ref", "HEAD") == devagent.TaskBranch(w.task.ID), "the set-aside worktree's branch")
	must(t, gitIn(t, aside, "status", "--porcelain") == "?? left.txt", "the set-aside worktree: %q", gitIn(t, aside, "status", "--porcelain"))
}

func TestAProjectWithNoGitCommitBlocksTheClaimWithOriginInfra(t *testing.T) {
	for _, tc := range []struct {
		name, mention string
		prepare       func(t *testing.T, root string)
	}{
		{"not a repository", "not a git repository", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, ".git"))
		}},
		{"no commit", "no commit yet", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, ".git"))
			gitIn(t, root, "init", "--quiet", ".")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.prepare(t, w.root)
			rec := newRecorder(t, `{"turns": [{"content": "never called"}]}`)
			w.startAgent(t, w.manager(rec, time.Hour))
			task := w.taskIn(t, brabo.TaskBlocked)
			must(t, task.BlockedOrigin == brabo.OriginInfra && contains(task.BlockedReason, tc.mention) &&
				contains(task.BlockedReason, devagent.WorktreeRel(w.agent.ID)), "blocked task: %+v", task)
			must(t, rec.Calls() == 0, "the model was called")
		})
	}
}

// A blocked task keeps its worktree; reopened and claimed by another agent,
// the task takes that worktree along, uncommitted work included.
func TestAReopenedTaskTakesItsWorktreeToTheAgentThatClaimsIt(t *testing.T) {
	w := newWorld(t)
	recA := newRecorder(t, `{"turns": [
  {"toolCalls": [{"id": "t1", "name": "terminal", "arguments": {"command": "echo left > left.txt"}}]},
  {"toolCalls": [{"id": "t2", "name": "terminal", "arguments": {"command": "touch more.txt"}}]}
]}`)
	mA := w.manager(recA, time.Hour)
	stopA := w.startAgent(t, mA)
	w.awaiting(t)
	w.clock.Advance(2 * time.Hour) // nobody decides: blocked, origin policy
	w.sweep(t, mA)
	w.taskIn(t, brabo.TaskBlocked)
	stopA()
	w.checkHeld(t, w.agent, w.task)
	must(t, w.exists("left.txt"), "the blocked task's worktree lost its work")

	ctx := context.Background()
	task := w.getTask(t)
	task.Status, task.BlockedReason, task.BlockedOrigin = brabo.TaskTodo, "", ""
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.UpdateTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	second := w.newAgent(t, "coder-2", true)
	recB := newRecorder(t, `{"turns": [
  {"toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "cat left.txt"}}]},
  {"expectToolResult": "left", "content": "Found the earlier work."}
]}`)
	mB := w.manager(recB, time.Hour)
	actx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() { cancel(); mB.Wait() })
	if err := mB.Start(actx, second); err != nil {
		t.Fatal(err)
	}
	done := w.taskIn(t, brabo.TaskDone)
	must(t, done.AgentID == second.ID, "the task went to %q", done.AgentID)
	w.checkHeld(t, second, w.task)
	_, err := os.Stat(w.worktree(w.agent))
	must(t, os.IsNotExist(err), "the first agent's worktree is still there: %v", err)
}

// A worktree deleted while its agent was stopped is made again, on the
// task's branch, when the agent is restored (parked: the approved action
// runs there before the agent is resumed).
func TestARestoredAgentRemakesAWorktreeDeletedWhileItWasStopped(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	stop := w.startAgent(t, w.manager(rec, time.Hour))
	r := w.awaiting(t)
	stop()
	if err := os.RemoveAll(w.worktree(w.agent)); err != nil {
		t.Fatal(err)
	}
	m2 := w.manager(newRecorder(t, adrScript), time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); m2.Wait() })
	if err := m2.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	must(t, w.exists("README.md"), "the worktree was not made again at Restore")
	w.checkHeld(t, w.agent, w.task)
	run(t, func(ctx context.Context) { w.worker(m2).Run(ctx) })
	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	must(t, w.exists("made.txt"), "the approved command did not run in the remade worktree")
}

// Making the worktree is brabo's bookkeeping, not an approved action: the
// repository's hooks do not run.
func TestMakingTheWorktreeRunsNoHook(t *testing.T) {
	w := newWorld(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\ntouch " + marker + "\n"
	if err := os.WriteFile(filepath.Join(w.root, ".git", "hooks", "post-checkout"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, `{"turns": [{"content": "Done."}]}`)
	w.startAgent(t, w.manager(rec, time.Hour))
	w.taskIn(t, brabo.TaskDone)
	w.checkHeld(t, w.agent, w.task)
	_, err := os.Stat(marker)
	must(t, os.IsNotExist(err), "the post-checkout hook ran: %v", err)
}
