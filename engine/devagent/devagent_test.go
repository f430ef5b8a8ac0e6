package devagent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
)

// adrScript lists, then runs touch (which asks), then reads a file once
// the real output of touch came back.
const adrScript = `{"turns": [
  {"content": "Looking around.", "toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "ls"}}]},
  {"expectToolResult": "README.md",
   "toolCalls": [{"id": "c2", "name": "terminal", "arguments": {"command": "touch made.txt && echo made-it"}}]},
  {"expectToolResult": "made-it", "toolCalls": [{"id": "c3", "name": "read_file", "arguments": {"path": "README.md"}}]},
  {"expectToolResult": "# shop", "content": "Done: made.txt exists."}
]}`

// suspended checks what ADR 0052 says of a suspension: run row, Ctx, event,
// no model call.
func suspended(t *testing.T, w *world, rec *recorder) (*brabo.Run, suspension) {
	t.Helper()
	r := w.awaiting(t)
	a := w.action(t, r.AwaitingActionID)
	must(t, a.Status == brabo.StatusPending && a.Payload.Command == "touch made.txt && echo made-it",
		"the run awaits %+v", a)
	c := storedCtx(t, r)
	must(t, c.Iterations == 2 && c.Awaits(a.ID) && c.PendingToolCallID == "c2", "stored Ctx: %d iterations, awaits %q, call %q",
		c.Iterations, c.AwaitingActionID, c.PendingToolCallID)
	must(t, rec.Calls() == 2, "the model was called %d times before the suspension; want 2", rec.Calls())
	evs := w.events(t, devagent.EventAwaitingApproval)
	must(t, len(evs) >= 1, "no %s event", devagent.EventAwaitingApproval)
	var p map[string]string
	json.Unmarshal(evs[len(evs)-1].Payload, &p)
	must(t, p["taskId"] == w.task.ID && p["actionId"] == a.ID && p["toolName"] == "terminal" && evs[len(evs)-1].ActorID == w.agent.ID,
		"the event is %s by %s", evs[len(evs)-1].Payload, evs[len(evs)-1].ActorID)
	task := w.getTask(t)
	must(t, task.Status == brabo.TaskInProgress && task.AgentID == w.agent.ID, "the task while waiting: %+v", task)
	must(t, !w.exists("made.txt"), "made.txt exists before the approval")
	return r, suspension{iterations: c.Iterations}
}

type suspension struct{ iterations int }

func TestADR0052TheAgentWaitsForTheApprovalAndResumesWithTheRealOutput(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	w.startAgent(t, w.manager(rec, 2*time.Hour))
	r, before := suspended(t, w, rec)

	// An hour passes: nothing is spent while waiting, and the cap (2 h)
	// is not reached.
	w.clock.Advance(time.Hour)
	time.Sleep(50 * time.Millisecond)
	again := w.agentRun(t)
	must(t, again.State == brabo.RunAwaitingApproval && again.AwaitingActionID == r.AwaitingActionID &&
		storedCtx(t, again).Iterations == before.iterations, "after an hour the run is %s awaiting %q", again.State, again.AwaitingActionID)
	must(t, rec.Calls() == 2, "the model was called while waiting (%d calls)", rec.Calls())

	w.approve(t, r.AwaitingActionID)
	task := w.taskIn(t, brabo.TaskDone)
	must(t, task.AgentID == w.agent.ID && task.BlockedReason == "", "done task: %+v", task)
	must(t, w.exists("made.txt"), "made.txt does not exist after the approval")
	must(t, rec.Calls() == 4, "the model was called %d times; want 4", rec.Calls())
	res, ok := toolResult(rec.Req(t, 2), "c2")
	must(t, ok && strings.Contains(res.Content, "made-it") && strings.Contains(res.Content, "exit code: 0") && !res.IsError,
		"after the approval the model read %+v", res)
	for i := range 4 {
		for _, m := range rec.Req(t, i).Messages {
			must(t, !strings.Contains(strings.ToLower(m.Content), "pending"), "request %d says pending: %q", i+1, m.Content)
		}
	}
	final := w.agentRun(t)
	must(t, final.State == brabo.RunDone && final.AwaitingActionID == "" && final.ID == r.ID, "the run ended %+v", final)
	must(t, len(w.events(t, brabo.EventTaskStatusChanged)) == 2, "want in_progress and done status events")
}

func TestADenialResumesWithTheReasonAndTheTaskFinishes(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, `{"turns": [
  {"toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "touch made.txt"}}]},
  {"expectToolResult": "denied by a human: not in this project", "content": "Understood; nothing to do."}
]}`)
	w.startAgent(t, w.manager(rec, time.Hour))
	r := w.awaiting(t)
	if _, err := w.svc.Deny(context.Background(), r.AwaitingActionID, w.owner, "not in this project"); err != nil {
		t.Fatal(err)
	}
	w.taskIn(t, brabo.TaskDone)
	must(t, !w.exists("made.txt"), "made.txt exists after a denial")
	res, ok := toolResult(rec.Req(t, 1), "c1")
	must(t, ok && res.IsError && res.Content == "denied by a human: not in this project", "the model read %+v", res)
	must(t, len(w.events(t, devagent.EventTaskBlocked)) == 0, "a denial blocked the task")
}

func TestNobodyDecidingWithinTheWaitCapBlocksTheTaskWithOriginPolicy(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	mgr := w.manager(rec, time.Hour)
	// The wake worker is driven by hand here, to know when it has seen the
	// late decision.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); mgr.Wait() })
	if err := mgr.Start(ctx, w.agent); err != nil {
		t.Fatal(err)
	}
	r, _ := suspended(t, w, rec)
	must(t, r.Deadline.Equal(r.UpdatedAt.Add(time.Hour)), "the run waits until %v, suspended at %v; want an hour after", r.Deadline, r.UpdatedAt)

	// Before the deadline the sweep leaves it; the actor holds no timer.
	w.clock.Advance(59 * time.Minute)
	must(t, w.sweep(t, mgr) == 0, "the sweep expired a wait before its deadline")
	must(t, w.getTask(t).Status == brabo.TaskInProgress, "the task moved before the deadline: %+v", w.getTask(t))
	w.clock.Advance(2 * time.Minute)
	must(t, w.getTask(t).Status == brabo.TaskInProgress, "the task moved without the sweep: %+v", w.getTask(t))
	must(t, w.sweep(t, mgr) == 1, "the sweep did not expire the wait past its deadline")
	task := w.taskIn(t, brabo.TaskBlocked)
	must(t, task.BlockedOrigin == brabo.OriginPolicy && strings.Contains(task.BlockedReason, "nobody decided") &&
		strings.Contains(task.BlockedReason, r.AwaitingActionID) && strings.Contains(task.BlockedReason, "(terminal: touch made.txt && echo made-it)") &&
		strings.Contains(task.BlockedReason, "wait cap of 1h0m0s"), "blocked task: %+v", task)
	must(t, w.sweep(t, mgr) == 0, "a second sweep expired the wait again")
	waitFor(t, "the actor to leave the wait", func() bool { return !mgr.Waits(w.agent.ID) })
	run := w.agentRun(t)
	must(t, run.State == brabo.RunBlocked && run.AwaitingActionID == "", "the run after the cap: %+v", run)
	evs := w.events(t, devagent.EventTaskBlocked)
	must(t, len(evs) == 1 && strings.Contains(string(evs[0].Payload), `"origin":"policy"`), "blocked events: %v", evs)

	// A late decision is recorded and executed by the pipeline, and
	// resumes nothing.
	w.approve(t, r.AwaitingActionID)
	must(t, w.exists("made.txt"), "the approved action did not run")
	n, err := w.worker(mgr).Once(context.Background())
	must(t, err == nil && n >= 1, "the wake worker: %d, %v", n, err)
	time.Sleep(100 * time.Millisecond)
	must(t, rec.Calls() == 2, "the model was called after the cap (%d calls)", rec.Calls())
	task = w.getTask(t)
	must(t, task.Status == brabo.TaskBlocked && task.BlockedOrigin == brabo.OriginPolicy, "the task after the late decision: %+v", task)
	must(t, w.agentRun(t).State == brabo.RunBlocked, "the run moved after the late decision")
}

func TestAfterARestartTheRestoredActorResumesOnTheDecision(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	m1 := w.manager(rec, 2*time.Hour)
	stop := w.startAgent(t, m1)
	r, _ := suspended(t, w, rec)
	stop()
	must(t, !m1.Live(w.agent.ID), "the first manager's actor is still live")
	must(t, w.agentRun(t).State == brabo.RunAwaitingApproval, "stopping changed the run")

	rec2 := newRecorder(t, adrScript)
	m2 := w.manager(rec2, 2*time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); m2.Wait() })
	if err := m2.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	must(t, m2.Live(w.agent.ID), "Restore did not bring the waiting agent back")
	run(t, func(ctx context.Context) { w.worker(m2).Run(ctx) })
	time.Sleep(30 * time.Millisecond)
	must(t, rec2.Calls() == 0, "the restored agent called the model before the decision")

	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	must(t, rec2.Calls() == 2, "after the restart the model was called %d times; want 2", rec2.Calls())
	res, ok := toolResult(rec2.Req(t, 0), "c2")
	must(t, ok && strings.Contains(res.Content, "made-it"), "the resumed model read %+v", res)
	must(t, rec.Calls() == 2, "the stopped manager's model was called again")
}

func TestWithNoLiveActorTheWakeWorkerResumesTheStoredRun(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	stop := w.startAgent(t, w.manager(rec, 2*time.Hour))
	r, _ := suspended(t, w, rec)
	stop()

	rec2 := newRecorder(t, adrScript)
	m2 := w.manager(rec2, 2*time.Hour) // no Restore: the store's path
	run(t, func(ctx context.Context) { w.worker(m2).Run(ctx) })
	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	must(t, !m2.Live(w.agent.ID), "an actor was started")
	must(t, rec2.Calls() == 2, "the model was called %d times; want 2", rec2.Calls())
	res, ok := toolResult(rec2.Req(t, 0), "c2")
	must(t, ok && strings.Contains(res.Content, "made-it"), "the resumed model read %+v", res)
	must(t, w.agentRun(t).State == brabo.RunDone, "the run is not done")
}

// unrestorable suspends the agent, stops it and overwrites its stored Ctx.
func unrestorable(t *testing.T, ctxText string) (*world, *brabo.Run) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	stop := w.startAgent(t, w.manager(rec, 2*time.Hour))
	r, _ := suspended(t, w, rec)
	stop()
	r.Ctx = json.RawMessage(ctxText)
	w.saveRun(t, r)
	return w, r
}

func blockedInfra(t *testing.T, w *world, r *brabo.Run, rec *recorder, mention string) {
	t.Helper()
	task := w.taskIn(t, brabo.TaskBlocked)
	must(t, task.BlockedOrigin == brabo.OriginInfra && strings.Contains(task.BlockedReason, r.AwaitingActionID) &&
		strings.Contains(task.BlockedReason, mention), "blocked task: %+v", task)
	must(t, w.agentRun(t).State == brabo.RunBlocked, "the run is not blocked")
	must(t, rec.Calls() == 0, "the model was called")
}

// A restored agent is parked, its conversation left in the store; a Ctx
// that cannot be restored is found when the decision arrives, and blocks
// the task with origin infra, naming the action, which is recorded.
func TestACorruptCtxBlocksTheTaskWithOriginInfraWhenTheDecisionArrives(t *testing.T) {
	w, r := unrestorable(t, `{"version": 1, "messages": [garbage`)
	rec := newRecorder(t, adrScript)
	m2 := w.manager(rec, 2*time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); m2.Wait() })
	if err := m2.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	must(t, m2.Live(w.agent.ID) && !m2.Running(w.agent.ID), "the restored agent is not parked")
	must(t, w.getTask(t).Status == brabo.TaskInProgress, "Restore moved the task: %+v", w.getTask(t))
	run(t, func(ctx context.Context) { w.worker(m2).Run(ctx) })
	// The decision is still the human's to make, and is recorded.
	w.approve(t, r.AwaitingActionID)
	blockedInfra(t, w, r, rec, "unreadable")
	must(t, w.action(t, r.AwaitingActionID).Status == brabo.StatusExecuted, "the action was not executed")
	waitFor(t, "the agent to be forgotten", func() bool { return !m2.Live(w.agent.ID) })
}

func TestACtxOfAnotherVersionBlocksTheTaskWhenTheDecisionArrives(t *testing.T) {
	w, r := unrestorable(t, `{"version": 99, "messages": []}`)
	rec := newRecorder(t, adrScript)
	m2 := w.manager(rec, 2*time.Hour)
	run(t, func(ctx context.Context) { w.worker(m2).Run(ctx) })
	w.approve(t, r.AwaitingActionID)
	blockedInfra(t, w, r, rec, "version 99")
	must(t, w.action(t, r.AwaitingActionID).Status == brabo.StatusExecuted, "the decided action is not recorded")
}

func TestASettledEventForAnotherActionIsIgnored(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, adrScript)
	mgr := w.manager(rec, 2*time.Hour)
	w.startAgent(t, mgr)
	r, _ := suspended(t, w, rec)

	other, _ := json.Marshal(brabo.Settled{ActionID: "act_other", Status: brabo.StatusExecuted, Result: &brabo.Result{Output: "nope"}})
	msg := brabo.OutboxMessage{ProjectID: w.prj.ID, Topic: brabo.TopicActionSettled, ActorKey: brabo.AgentKey(w.agent.ID),
		ActionID: "act_other", Payload: other}
	// A live actor takes only the action it waits on: anything else goes
	// the store's way (where a run not awaiting it ignores it too).
	must(t, !mgr.Deliver(msg.ActorKey, msg), "the live actor took mail for an action it does not wait on")
	must(t, mgr.Resume(context.Background(), r, msg) == nil, "the store path did not ignore another action's event")
	must(t, !mgr.Deliver("agent:nobody", msg), "a delivery to no actor was accepted")
	time.Sleep(50 * time.Millisecond)
	still := w.agentRun(t)
	must(t, still.State == brabo.RunAwaitingApproval && still.AwaitingActionID == r.AwaitingActionID, "the run moved: %+v", still)
	must(t, rec.Calls() == 2, "the model was called (%d calls)", rec.Calls())

	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	// The same decision delivered again is a duplicate: nothing runs.
	dup, _ := json.Marshal(brabo.Settled{ActionID: r.AwaitingActionID, Status: brabo.StatusExecuted, Result: &brabo.Result{Output: "again"}})
	msg.ActionID, msg.Payload = r.AwaitingActionID, dup
	must(t, !mgr.Deliver(msg.ActorKey, msg), "the actor took a decision it no longer waits on")
	must(t, mgr.Resume(context.Background(), r, msg) == nil, "the store path did not ignore a duplicate")
	time.Sleep(50 * time.Millisecond)
	must(t, rec.Calls() == 4, "a duplicate reached the model (%d calls)", rec.Calls())
}

func TestTheIterationCapBlocksTheTaskAndSaysSo(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, `{"turns": [
  {"toolCalls": [{"id": "c1", "name": "terminal", "arguments": {"command": "ls"}}]},
  {"toolCalls": [{"id": "c2", "name": "terminal", "arguments": {"command": "echo hi"}}]}
]}`)
	mgr := w.manager(rec, time.Hour)
	mgr.MaxIterations = 1
	w.startAgent(t, mgr)
	task := w.taskIn(t, brabo.TaskBlocked)
	must(t, task.BlockedOrigin == brabo.OriginPolicy && task.BlockedReason == "max_iterations", "blocked task: %+v", task)
	lim := w.events(t, devagent.EventLimitReached)
	must(t, len(lim) == 1 && strings.Contains(string(lim[0].Payload), `"max_iterations":1`), "limit events: %v", lim)
}

func TestTwoAgentsRacingForOneTaskGiveItToOne(t *testing.T) {
	w := newWorld(t)
	const done = `{"turns": [{"content": "Done."}]}`
	second := w.newAgent(t, "coder-2", true)
	ctx, cancel := context.WithCancel(context.Background())
	var mgrs []*devagent.Manager
	t.Cleanup(func() {
		cancel()
		for _, m := range mgrs {
			m.Wait()
		}
	})
	var wg sync.WaitGroup
	for _, a := range []*brabo.Agent{w.agent, second} {
		m := w.manager(newRecorder(t, done), time.Hour)
		mgrs = append(mgrs, m)
		wg.Go(func() {
			if err := m.Start(ctx, a); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	task := w.taskIn(t, brabo.TaskDone)
	time.Sleep(100 * time.Millisecond)
	changes := w.events(t, brabo.EventTaskStatusChanged)
	must(t, len(changes) == 2, "status events %d; want one claim and one done", len(changes))
	must(t, task.AgentID == w.agent.ID || task.AgentID == second.ID, "the task went to %q", task.AgentID)
}

func TestReadFileStaysInTheProjectFolder(t *testing.T) {
	tool := devagent.ReadFileTool("/srv/shop", nil)
	for _, p := range []string{"../etc/passwd", "/etc/passwd", "a/../../x", "/srv/shopping/x"} {
		_, err := tool.Direct(context.Background(), json.RawMessage(`{"path":`+quote(p)+`}`))
		must(t, err != nil && strings.Contains(err.Error(), "outside the project folder"), "%s: %v", p, err)
	}
	w := newWorld(t)
	tool = devagent.ReadFileTool(w.root, nil)
	for _, p := range []string{"README.md", "./a/../README.md", w.root + "/README.md"} {
		out, err := tool.Direct(context.Background(), json.RawMessage(`{"path":`+quote(p)+`}`))
		must(t, err == nil && out == "# shop\n", "%s: %q, %v", p, out, err)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
