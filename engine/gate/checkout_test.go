package gate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/gate"
)

// whereScript prints where the sub-agent's terminal runs, reads a file of
// the task's work with read_file, and gives its verdict.
func whereScript(dir, file, content, verdict string) string {
	return fmt.Sprintf(`{"turns": [
  {"toolCalls": [{"id": "w1", "name": "terminal", "arguments": {"command": "pwd"}}]},
  {"expectToolResult": %q, "toolCalls": [{"id": "w2", "name": "read_file", "arguments": {"path": %q}}]},
  {"expectToolResult": %q, "content": %q}
]}`, dir, file, content, verdict)
}

// With the dev's worktree gone (its PR opened), the area checks out the
// task's branch in its own worktree: the sub-agents' terminal runs there
// and read_file reads the task's work there; the main checkout is not
// touched, and the worktree goes when the area completes.
func TestTheSubAgentsWorkInTheGatesCheckoutOfTheTaskBranch(t *testing.T) {
	w := newWorld(t)
	auto := newRecorder(t, "auto", whereScript(w.gateDir(), "feature.txt", "the checkout page", "qa-automation: PASS"))
	perf := newRecorder(t, "perf", `{"turns": [
  {"toolCalls": [{"id": "p1", "name": "terminal", "arguments": {"command": "cat feature.txt"}}]},
  {"expectToolResult": "the checkout page", "content": "qa-performance-security: no findings"}
]}`)
	res, err := w.lead(auto, perf).RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := res.(gate.Completed)
	must(t, ok && len(c.Verdicts) == 2, "the area ended %#v", res)
	pwd, _ := toolResult(auto.Req(t, 1), "w1")
	must(t, contains(pwd.Content, w.gateDir()) && !pwd.IsError, "pwd printed %q", pwd.Content)
	must(t, contains(auto.Req(t, 0).Tools[0].Description, devagent.TaskBranch(w.task.ID)),
		"the terminal tool does not name the task's branch: %q", auto.Req(t, 0).Tools[0].Description)
	must(t, !offers(auto.Req(t, 0).Tools, "git_commit"), "git_commit is offered in the gate's detached worktree, where a commit would be lost")
	w.gateRemoved(t)
	must(t, gitIn(t, w.root, "status", "--porcelain") == "", "the main checkout changed: %q", gitIn(t, w.root, "status", "--porcelain"))
	must(t, !w.exists("feature.txt"), "the task's work leaked into the main checkout")
}

// While the dev agent holds its worktree on the task's branch (working,
// or waiting for a decision), the sub-agents act in it and see its
// uncommitted work; the area leaves it as it was and makes no worktree.
func TestTheSubAgentsUseTheDevAgentsWorktreeWhileItHoldsIt(t *testing.T) {
	w := newWorld(t)
	rel := devagent.WorktreeRel("agt_dev")
	dir := filepath.Join(w.root, filepath.FromSlash(rel))
	gitIn(t, w.root, "worktree", "add", "--quiet", dir, devagent.TaskBranch(w.task.ID))
	if err := os.WriteFile(filepath.Join(dir, "wip.txt"), []byte("work in progress\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	auto := newRecorder(t, "auto", whereScript(dir, "wip.txt", "work in progress", "qa-automation: PASS"))
	perf := newRecorder(t, "perf", whereScript(dir, "feature.txt", "the checkout page", "qa-performance-security: no findings"))
	res, err := w.lead(auto, perf).RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, ok := res.(gate.Completed)
	must(t, ok, "the area ended %#v", res)
	must(t, offers(auto.Req(t, 0).Tools, "git_commit"), "git_commit is not offered in the dev's worktree, which has a branch to commit to")
	data, err := os.ReadFile(filepath.Join(dir, "wip.txt"))
	must(t, err == nil && string(data) == "work in progress\n", "the dev's worktree after the area: %q, %v", data, err)
	must(t, gitIn(t, dir, "rev-parse", "--abbrev-ref", "HEAD") == devagent.TaskBranch(w.task.ID), "the dev's worktree left its branch")
	_, err = os.Stat(w.gateDir())
	must(t, os.IsNotExist(err), "the area made its own worktree beside the dev's: %v", err)
}

// A task no dev agent worked on has no branch: the area fails before any
// delegation, with origin infra and a reason, and no model is called. So
// does a project folder that is not a git repository, or one without a
// commit.
func TestAnAreaWithNoWorkToExamineFailsWithOriginInfra(t *testing.T) {
	for _, tc := range []struct {
		name, mention string
		prepare       func(t *testing.T, w *world) *brabo.Task
	}{
		{"no branch", "has no branch brabo/", func(t *testing.T, w *world) *brabo.Task {
			ctx := context.Background()
			task := &brabo.Task{ID: brabo.NewID("tsk"), ProjectID: w.prj.ID, Title: "Never started", Status: brabo.TaskTodo,
				CreatedAt: w.task.CreatedAt}
			if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateTask(ctx, task) }); err != nil {
				t.Fatal(err)
			}
			return task
		}},
		{"not a repository", "not a git repository", func(t *testing.T, w *world) *brabo.Task {
			os.RemoveAll(filepath.Join(w.root, ".git"))
			return w.task
		}},
		{"no commit", "no commit yet", func(t *testing.T, w *world) *brabo.Task {
			os.RemoveAll(filepath.Join(w.root, ".git"))
			gitIn(t, w.root, "init", "--quiet", ".")
			return w.task
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			task := tc.prepare(t, w)
			auto, perf := newRecorder(t, "auto", autoScript), newRecorder(t, "perf", perfScript)
			res, err := w.lead(auto, perf).RunArea(context.Background(), task.ID)
			if err != nil {
				t.Fatal(err)
			}
			f, ok := res.(gate.Failed)
			must(t, ok && f.Origin == brabo.OriginInfra && contains(f.Reason, tc.mention) && f.SubAgent == gate.QAAutomation,
				"the area ended %#v", res)
			evs := w.events(t, gate.EventDelegationFailed)
			must(t, len(evs) == 1 && payload(t, evs[0])["origin"] == string(brabo.OriginInfra), "delegation.failed: %v", evs)
			must(t, len(w.events(t, gate.EventDelegationStarted)) == 0, "a delegation started")
			must(t, len(w.events(t, gate.EventDelegationAwaiting)) == 0, "a delegation waits")
			var got *brabo.Task
			ctx := context.Background()
			w.store.View(ctx, func(tx brabo.Tx) error { got, err = tx.Task(ctx, task.ID); return err })
			must(t, got.Status == brabo.TaskBlocked && got.BlockedOrigin == brabo.OriginInfra, "the task: %+v", got)
			must(t, auto.Calls() == 0 && perf.Calls() == 0, "a model was called")
		})
	}
}

// A failed area keeps the gate's worktree. A later area on the task
// refuses it while it holds what the earlier one left (origin infra,
// naming it), and once it is clean moves it to the branch's new tip.
func TestALaterAreaRefreshesACleanGateWorktreeAndRefusesADirtyOne(t *testing.T) {
	w := newWorld(t)
	halting := newRecorder(t, "auto1", `{"turns": [{"toolCalls": [{"id": "a1", "name": "terminal", "arguments": {"command": "ls"}}]}]}`)
	res, err := w.lead(halting, newRecorder(t, "perf1", perfScript)).RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := res.(gate.Failed)
	must(t, ok && f.Origin == brabo.OriginModel, "the first area ended %#v", res)
	must(t, w.existsInGate("feature.txt"), "the failed area did not keep its worktree")

	// The dev adds to the branch; something was left in the worktree.
	w.commitOnBranch(t, "second.txt", "second commit\n")
	if err := os.WriteFile(filepath.Join(w.gateDir(), "left.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	auto := newRecorder(t, "auto2", `{"turns": [{"content": "never called"}]}`)
	res, err = w.lead(auto, newRecorder(t, "perf2", perfScript)).RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	f, ok = res.(gate.Failed)
	must(t, ok && f.Origin == brabo.OriginInfra && contains(f.Reason, gate.WorktreeRel(w.task.ID)) && contains(f.Reason, "left.txt"),
		"the area on a dirty worktree ended %#v", res)
	must(t, auto.Calls() == 0 && w.existsInGate("left.txt"), "the dirty worktree was used or cleaned")

	// Clean again, the worktree is refreshed to the branch's tip.
	os.Remove(filepath.Join(w.gateDir(), "left.txt"))
	auto = newRecorder(t, "auto3", whereScript(w.gateDir(), "second.txt", "second commit", "qa-automation: PASS"))
	res, err = w.lead(auto, newRecorder(t, "perf3", perfScript)).RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, ok = res.(gate.Completed)
	must(t, ok, "the area on the refreshed worktree ended %#v", res)
	w.gateRemoved(t)
}

// An area that suspended in the dev's worktree, which is removed while it
// waits (the dev's PR was opened), goes on in the gate's own checkout of
// the branch once the decision arrives: the sub-agent is not failed.
func TestAnAreaWhoseDevWorktreeWentWhileItWaitedGoesOnInTheGatesCheckout(t *testing.T) {
	w := newWorld(t)
	dir := filepath.Join(w.root, filepath.FromSlash(devagent.WorktreeRel("agt_dev")))
	gitIn(t, w.root, "worktree", "add", "--quiet", dir, devagent.TaskBranch(w.task.ID))
	auto := newRecorder(t, "auto", fmt.Sprintf(`{"turns": [
  {"toolCalls": [{"id": "a1", "name": "terminal", "arguments": {"command": "touch qa.txt"}}]},
  {"toolCalls": [{"id": "a2", "name": "terminal", "arguments": {"command": "pwd"}}]},
  {"expectToolResult": %q, "content": "qa-automation: PASS"}
]}`, w.gateDir()))
	perf := newRecorder(t, "perf", `{"turns": [{"content": "qa-performance-security: no findings"}]}`)
	l := w.lead(auto, perf)
	res, err := l.RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := res.(gate.Suspended)
	must(t, ok, "the area ended %#v", res)
	must(t, w.action(t, s.ActionID).Payload.Cwd == devagent.WorktreeRel("agt_dev"), "the pending action's cwd: %q", w.action(t, s.ActionID).Payload.Cwd)

	gitIn(t, w.root, "worktree", "remove", "--force", dir)
	if _, err := w.svc.Deny(context.Background(), s.ActionID, w.owner, "not in the dev's tree"); err != nil {
		t.Fatal(err)
	}
	w.startWake(t, l, false)
	vs, _ := w.completedVerdicts(t)
	must(t, len(vs) == 2 && vs[0].Verdict == "qa-automation: PASS", "the verdicts are %+v", vs)
	w.gateRemoved(t)
}
