package devagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/pipeline"
)

// gitRoot gives the world's repository a bare origin with main pushed to
// it, so that a pr_open of the task's branch can execute once the branch
// is pushed too.
func (w *world) gitRoot(t *testing.T) (remote string) {
	t.Helper()
	remote = t.TempDir() + "/origin.git"
	gitIn(t, w.root, "init", "--quiet", "--bare", "--initial-branch=main", remote)
	gitIn(t, w.root, "remote", "add", "origin", remote)
	gitIn(t, w.root, "push", "--quiet", "origin", "main")
	return remote
}

// pushTaskBranch pushes the task's branch to origin by hand (the scripts
// here do not push it with git_push), so that its pr_open can execute.
func (w *world) pushTaskBranch(t *testing.T) {
	t.Helper()
	gitIn(t, w.root, "push", "--quiet", "origin", devagent.TaskBranch(w.task.ID))
}

// reportScript reports done too early (refused), runs the tests (echo,
// allowed: exit 0), then reports done again: that one proposes pr_open.
const reportScript = `{"turns": [
  {"toolCalls": [{"id": "r1", "name": "report_done", "arguments": {"title": "Make made.txt", "summary": "made it"}}]},
  {"expectToolResult": "run the tests",
   "toolCalls": [{"id": "t1", "name": "terminal", "arguments": {"command": "echo ok"}}]},
  {"expectToolResult": "exit code: 0",
   "toolCalls": [{"id": "r2", "name": "report_done", "arguments": {"title": "Make made.txt", "summary": "made it; echo ok passes"}}]},
  {"content": "the model must not be called once the PR is asked for"}
]}`

// awaitingPR waits until the agent's run awaits its pr_open, and checks
// what the wait left in the store.
func (w *world) awaitingPR(t *testing.T, rec *recorder) (*brabo.Run, *brabo.ProposedAction) {
	t.Helper()
	var r *brabo.Run
	waitFor(t, "the run to await its pull request", func() bool {
		r = w.agentRun(t)
		if r != nil && r.State == brabo.RunBlocked {
			t.Fatalf("the run blocked instead of waiting: %+v", w.getTask(t))
		}
		return r != nil && r.State == brabo.RunAwaitingPR
	})
	a := w.action(t, r.AwaitingActionID)
	must(t, a.Type == brabo.PrOpen && a.Status == brabo.StatusPending && a.Payload.Branch == devagent.TaskBranch(w.task.ID) &&
		a.Payload.Base == "main" && a.Payload.Title == "Make made.txt" && a.Payload.TaskID == w.task.ID,
		"the run awaits %+v", a)
	c := storedCtx(t, r)
	must(t, c.Awaits(a.ID) && c.PendingToolCallID == "r2" && c.PendingToolName == devagent.ReportDone,
		"stored Ctx awaits %q on call %q (%s)", c.AwaitingActionID, c.PendingToolCallID, c.PendingToolName)
	evs := w.events(t, devagent.EventAwaitingPR)
	must(t, len(evs) == 1 && evs[0].ActionID == a.ID && evs[0].ActorID == w.agent.ID, "dev.awaiting_pr events: %+v", evs)
	var p map[string]string
	json.Unmarshal(evs[0].Payload, &p)
	must(t, p["taskId"] == w.task.ID && p["actionId"] == a.ID && p["summary"] == "made it; echo ok passes", "dev.awaiting_pr payload %s", evs[0].Payload)
	must(t, len(w.events(t, devagent.EventAwaitingApproval)) == 0, "a pr_open wait was told as awaiting_approval")
	task := w.getTask(t)
	must(t, task.Status == brabo.TaskInProgress, "the task while the PR waits: %+v", task)
	must(t, rec.Calls() == 3, "the model was called %d times before the wait; want 3", rec.Calls())

	// The early report_done was refused and proposed nothing.
	res, ok := toolResult(rec.Req(t, 1), "r1")
	must(t, ok && res.IsError && contains(res.Content, "no terminal command has exited 0") && contains(res.Content, "no pull request was proposed"),
		"the early report_done answered %+v", res)
	prOpens := 0
	for _, e := range w.events(t, brabo.EventActionCreated) {
		if w.action(t, e.ActionID).Type == brabo.PrOpen {
			prOpens++
		}
	}
	must(t, prOpens == 1, "%d pr_open actions were proposed; want 1", prOpens)
	return r, a
}

func (w *world) prs(t *testing.T) []*brabo.PullRequest {
	t.Helper()
	ctx := context.Background()
	var prs []*brabo.PullRequest
	if err := w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		prs, err = tx.PRs(ctx, w.prj.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return prs
}

// prDone checks a task whose PR was opened: in review (not done: only the
// merge makes it done), the agent's run done.
func (w *world) prDone(t *testing.T, rec *recorder, r *brabo.Run, a *brabo.ProposedAction) {
	t.Helper()
	task := w.taskIn(t, brabo.TaskInReview)
	must(t, task.BlockedReason == "" && task.BlockedOrigin == "", "task in review: %+v", task)
	prs := w.prs(t)
	must(t, len(prs) == 1 && prs[0].Head == devagent.TaskBranch(w.task.ID) && prs[0].Base == "main" && prs[0].TaskID == w.task.ID, "PRs: %+v", prs)
	statuses := w.statusChanges(t)
	var review []map[string]any
	for _, e := range w.events(t, brabo.EventTaskStatusChanged) {
		var p map[string]any
		json.Unmarshal(e.Payload, &p)
		if p["status"] == string(brabo.TaskInReview) {
			review = append(review, p)
			must(t, e.ActionID == a.ID, "the in_review event names action %q", e.ActionID)
		}
	}
	must(t, len(review) == 1 && review[0]["pr"] == float64(prs[0].Number), "in_review events: %+v", review)
	must(t, slices.Equal(statuses, []string{"in_progress", "in_review"}), "the task's status changes: %v", statuses)
	waitFor(t, "the run to be done", func() bool { return w.agentRun(t).State == brabo.RunDone })
	final := w.agentRun(t)
	must(t, final.ID == r.ID && final.AwaitingActionID == "", "the run ended %+v", final)
	must(t, len(w.events(t, devagent.EventTaskBlocked)) == 0, "the task was blocked")
	time.Sleep(50 * time.Millisecond) // a stray model call would show now
	must(t, rec.Calls() == 3, "the model was called %d times; want 3", rec.Calls())
}

func TestReportDoneIsRefusedBeforeTestsPassThenWaitsForThePRAndAnApprovalFinishesTheTask(t *testing.T) {
	w := newWorld(t)
	w.gitRoot(t)
	rec := newRecorder(t, reportScript)
	w.startAgent(t, w.manager(rec, time.Hour))
	r, a := w.awaitingPR(t, rec)
	w.pushTaskBranch(t)
	w.approve(t, a.ID)
	w.prDone(t, rec, r, a)
}

// statusChanges lists the statuses of the task's
// backlog.task_status_changed events, in order.
func (w *world) statusChanges(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, e := range w.events(t, brabo.EventTaskStatusChanged) {
		var p map[string]any
		json.Unmarshal(e.Payload, &p)
		if p["taskId"] == w.task.ID {
			out = append(out, fmt.Sprint(p["status"]))
		}
	}
	return out
}

// The whole flow, report_done → PR → approval → merge: the task moves to
// done exactly once, when the merge executes (DESIGN §6.4), never when
// the PR opens.
func TestTheWholeFlowMovesTheTaskToDoneExactlyOnce(t *testing.T) {
	w := newWorld(t)
	w.gitRoot(t)
	rec := newRecorder(t, reportScript)
	w.startAgent(t, w.manager(rec, time.Hour))
	r, a := w.awaitingPR(t, rec)
	// The work on the task's branch, committed in the agent's worktree.
	wt := w.worktree(w.agent)
	must(t, os.WriteFile(filepath.Join(wt, "made.txt"), []byte("made\n"), 0o644) == nil, "writing made.txt")
	gitIn(t, wt, "add", "made.txt")
	gitIn(t, wt, "commit", "--quiet", "-m", "made.txt")
	w.pushTaskBranch(t)
	w.approve(t, a.ID)
	w.prDone(t, rec, r, a)
	pr := w.prs(t)[0]

	merge, err := w.svc.Propose(context.Background(), pipeline.ProposeRequest{ProjectID: w.prj.ID,
		Actor: pipeline.Actor{Member: w.owner}, Type: brabo.GitMerge, Payload: brabo.Payload{PR: pr.Number}})
	must(t, err == nil && merge.Status == brabo.StatusPending, "the merge proposal: %+v, %v", merge, err)
	d, err := w.svc.Approve(context.Background(), merge.ID, w.owner, w.svc.RevisionNow(context.Background(), merge.ID))
	must(t, err == nil && d.Action.Status == brabo.StatusExecuted, "the merge: %+v, %v", d, err)
	task := w.getTask(t)
	must(t, task.Status == brabo.TaskDone, "the task after the merge: %+v", task)
	statuses := w.statusChanges(t)
	must(t, slices.Equal(statuses, []string{"in_progress", "in_review", "done"}), "the task's status changes: %v", statuses)
	var doneBy []string
	for _, e := range w.events(t, brabo.EventTaskStatusChanged) {
		if strings.Contains(string(e.Payload), `"status":"done"`) {
			doneBy = append(doneBy, e.ActionID)
		}
	}
	must(t, slices.Equal(doneBy, []string{merge.ID}), "done recorded by %v; want the merge %s alone", doneBy, merge.ID)
	time.Sleep(50 * time.Millisecond) // a late transition by the agent would show now
	must(t, slices.Equal(w.statusChanges(t), statuses), "the status changed again: %v", w.statusChanges(t))
}

func TestADeniedPRIsAUserDecisionNotAFailure(t *testing.T) {
	w := newWorld(t)
	w.gitRoot(t)
	rec := newRecorder(t, reportScript)
	w.startAgent(t, w.manager(rec, time.Hour))
	r, a := w.awaitingPR(t, rec)
	if _, err := w.svc.Deny(context.Background(), a.ID, w.owner, "not this sprint"); err != nil {
		t.Fatal(err)
	}
	task := w.taskIn(t, brabo.TaskBlocked)
	must(t, task.BlockedOrigin == brabo.OriginUser && contains(task.BlockedReason, "not this sprint") && contains(task.BlockedReason, a.ID),
		"the task after the denial: %+v", task)
	blocked := w.events(t, devagent.EventTaskBlocked)
	must(t, len(blocked) == 1, "%d task_blocked events; want 1", len(blocked))
	var p map[string]string
	json.Unmarshal(blocked[0].Payload, &p)
	must(t, p["origin"] == string(brabo.OriginUser), "blocked with origin %q", p["origin"])
	must(t, len(w.prs(t)) == 0, "a PR was recorded")
	waitFor(t, "the run to be blocked", func() bool { return w.agentRun(t).State == brabo.RunBlocked })
	must(t, w.agentRun(t).ID == r.ID, "another run")
	time.Sleep(50 * time.Millisecond)
	must(t, rec.Calls() == 3, "the model was called %d times after the denial; want 3", rec.Calls())
}

func TestAPRDecidedWhileNoActorHoldsTheRunIsFinishedByTheWakeWorker(t *testing.T) {
	w := newWorld(t)
	w.gitRoot(t)
	rec := newRecorder(t, reportScript)
	stop := w.startAgent(t, w.manager(rec, time.Hour))
	r, a := w.awaitingPR(t, rec)
	stop()
	w.pushTaskBranch(t)
	w.approve(t, a.ID)
	// A second process: a wake worker and a manager that holds no actor.
	mgr := w.manager(rec, time.Hour)
	run(t, func(ctx context.Context) { w.worker(mgr).Run(ctx) })
	w.prDone(t, rec, r, a)
	must(t, !mgr.Live(w.agent.ID), "the manager started an actor")
}

func TestARestartedAgentStillWaitsForItsPR(t *testing.T) {
	w := newWorld(t)
	w.gitRoot(t)
	rec := newRecorder(t, reportScript)
	stop := w.startAgent(t, w.manager(rec, time.Hour))
	r, a := w.awaitingPR(t, rec)
	stop()
	mgr := w.manager(rec, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); mgr.Wait() })
	if err := mgr.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	must(t, mgr.Live(w.agent.ID), "Restore did not bring back the actor awaiting its PR")
	run(t, func(ctx context.Context) { w.worker(mgr).Run(ctx) })
	w.pushTaskBranch(t)
	w.approve(t, a.ID)
	w.prDone(t, rec, r, a)
}

func TestNobodyDecidingOnThePRWithinTheWaitCapBlocksWithOriginPolicy(t *testing.T) {
	w := newWorld(t)
	w.gitRoot(t)
	rec := newRecorder(t, reportScript)
	mgr := w.manager(rec, time.Hour)
	w.startAgent(t, mgr)
	_, a := w.awaitingPR(t, rec)
	w.clock.Advance(2 * time.Hour)
	must(t, w.sweep(t, mgr) == 1, "the sweep did not expire the PR's wait")
	task := w.taskIn(t, brabo.TaskBlocked)
	must(t, task.BlockedOrigin == brabo.OriginPolicy && contains(task.BlockedReason, "nobody decided") && contains(task.BlockedReason, a.ID),
		"blocked task: %+v", task)
}

func TestAFailedPROpenGoesBackToTheModel(t *testing.T) {
	w := newWorld(t)
	w.gitRoot(t)
	// The task's branch was never pushed: the approved pr_open fails, and
	// the model reads why.
	rec := newRecorder(t, `{"turns": [
  {"toolCalls": [{"id": "t1", "name": "terminal", "arguments": {"command": "echo ok"}}]},
  {"toolCalls": [{"id": "r1", "name": "report_done", "arguments": {"title": "Make made.txt", "summary": "s"}}]},
  {"expectToolResult": "not on remote", "content": "I will push it first."}
]}`)
	w.startAgent(t, w.manager(rec, time.Hour))
	var r *brabo.Run
	waitFor(t, "the run to await its pull request", func() bool {
		r = w.agentRun(t)
		return r != nil && r.State == brabo.RunAwaitingPR
	})
	d, err := w.svc.Approve(context.Background(), r.AwaitingActionID, w.owner, w.svc.RevisionNow(context.Background(), r.AwaitingActionID))
	if err != nil || d.Action.Status != brabo.StatusFailed {
		t.Fatalf("approve: %+v, %v", d, err)
	}
	w.taskIn(t, brabo.TaskDone) // the model ended the conversation
	res, ok := toolResult(rec.Req(t, 2), "r1")
	must(t, ok && res.IsError && strings.Contains(res.Content, devagent.TaskBranch(w.task.ID)), "the model read %+v", res)
	must(t, len(w.prs(t)) == 0, "a PR was recorded")
}

// With no wake worker at all, an agent restored after the decision reads
// the settled pr_open itself and still records the PR's number.
func TestAnAgentRestoredAfterThePRWasDecidedFinishesFromTheAction(t *testing.T) {
	w := newWorld(t)
	w.gitRoot(t)
	rec := newRecorder(t, reportScript)
	stop := w.startAgent(t, w.manager(rec, time.Hour))
	r, a := w.awaitingPR(t, rec)
	stop()
	w.pushTaskBranch(t)
	w.approve(t, a.ID)
	mgr := w.manager(rec, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); mgr.Wait() })
	if err := mgr.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	w.prDone(t, rec, r, a)
}
