package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/gate"
)

// autoScript is ADR 0057's qa-automation: a compound command with one
// segment outside allow (touch asks), then its verdict once the real output
// came back.
const autoScript = `{"turns": [
  {"content": "Looking around.", "toolCalls": [{"id": "a1", "name": "terminal", "arguments": {"command": "ls && touch qa-report.txt"}}]},
  {"expectToolResult": "README.md", "content": "qa-automation: PASS, report written"}
]}`

// perfScript runs an allowed command (auto-approved) and gives its verdict.
const perfScript = `{"turns": [
  {"toolCalls": [{"id": "p1", "name": "terminal", "arguments": {"command": "grep -c shop README.md"}}]},
  {"expectToolResult": "1", "content": "qa-performance-security: no findings"}
]}`

// suspended checks what ADR 0057 says of an area waiting for a sub-agent's
// action: a Run keyed by the sub-agent, awaiting the action; the event; no
// failure, no consolidation, the task not blocked.
func suspended(t *testing.T, w *world, res gate.Result, perf *recorder) gate.Suspended {
	t.Helper()
	s, ok := res.(gate.Suspended)
	must(t, ok, "the area ended %#v; want Suspended", res)
	key := brabo.AgentKey(w.auto.ID)
	must(t, s.SubAgent == gate.QAAutomation && s.ActorKey == key && len(s.Verdicts) == 0, "suspended: %+v", s)
	a := w.action(t, s.ActionID)
	must(t, a.Status == brabo.StatusPending && a.Payload.Command == "ls && touch qa-report.txt" && a.ActorID == w.auto.ID &&
		a.Payload.Cwd == gate.WorktreeRel(w.task.ID), "the area awaits %+v (proposed by %s)", a, a.ActorID)
	r, err := w.awaitingRun(t, key, s.ActionID)
	must(t, err == nil && r.ID == s.RunID && r.State == brabo.RunAwaitingApproval && r.TaskID == w.task.ID,
		"AwaitingRun(%s, %s) = %+v, %v", key, s.ActionID, r, err)
	evs := w.events(t, gate.EventDelegationAwaiting)
	must(t, len(evs) == 1, "%d %s events; want 1", len(evs), gate.EventDelegationAwaiting)
	p := payload(t, evs[0])
	must(t, p["actionId"] == s.ActionID && p["subAgent"] == gate.QAAutomation && evs[0].ActorID == w.auto.ID,
		"the event is %s by %s", evs[0].Payload, evs[0].ActorID)
	must(t, len(w.events(t, gate.EventDelegationFailed)) == 0, "an awaiting delegation was recorded as failed")
	must(t, len(w.events(t, gate.EventGateCompleted)) == 0, "the area consolidated while waiting")
	must(t, len(w.events(t, gate.EventDelegationCompleted)) == 0, "a verdict was given while waiting")
	task := w.getTask(t)
	must(t, task.Status == brabo.TaskInProgress && task.BlockedOrigin == "", "the task while waiting: %+v", task)
	must(t, !w.exists("qa-report.txt") && !w.existsInGate("qa-report.txt"), "qa-report.txt exists before the approval")
	must(t, w.existsInGate("feature.txt"), "the gate's worktree does not hold the task's work")
	must(t, perf.Calls() == 0, "qa-performance-security ran while qa-automation waited")
	return s
}

// bothVerdicts checks the end of the area: gate.completed with both
// verdicts, in order, by the lead.
func bothVerdicts(t *testing.T, w *world, auto string) {
	t.Helper()
	vs, ev := w.completedVerdicts(t)
	must(t, len(vs) == 2 && vs[0].SubAgent == gate.QAAutomation && vs[0].Verdict == auto &&
		vs[1].SubAgent == gate.QAPerformanceSecurity && vs[1].Verdict == "qa-performance-security: no findings",
		"the verdicts are %+v", vs)
	must(t, ev.ActorID == gate.DefaultLeadID, "gate.completed by %q", ev.ActorID)
	done := w.events(t, gate.EventDelegationCompleted)
	must(t, len(done) == 2 && done[0].ActorID == w.auto.ID && done[1].ActorID == w.perf.ID &&
		payload(t, done[0])["verdict"] == auto, "delegation.completed events: %d", len(done))
	must(t, len(w.events(t, gate.EventDelegationFailed)) == 0, "a delegation failed")
	must(t, len(w.events(t, gate.EventDelegationStarted)) == 2, "want two delegation.started")
}

func TestADR0057TheAreaWaitsForTheApprovalAndCompletesWithBothVerdicts(t *testing.T) {
	w := newWorld(t)
	auto, perf := newRecorder(t, "auto", autoScript), newRecorder(t, "perf", perfScript)
	l := w.lead(auto, perf)
	w.startWake(t, l, true)
	res, err := l.RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s := suspended(t, w, res, perf)
	must(t, l.Waits(s.ActorKey, s.ActionID), "the lead does not know it waits")

	d, err := w.svc.Approve(context.Background(), s.ActionID, w.owner, w.svc.RevisionNow(context.Background(), s.ActionID))
	must(t, err == nil && d.Action.Status == brabo.StatusExecuted, "approve: %+v, %v", d, err)
	bothVerdicts(t, w, "qa-automation: PASS, report written")
	// The approved command ran in the gate's worktree, not in the main
	// checkout; the completed area removed that worktree, not the branch.
	must(t, w.action(t, s.ActionID).Status == brabo.StatusExecuted && !w.exists("qa-report.txt"), "the approved command: %+v", w.action(t, s.ActionID))
	w.gateRemoved(t)
	res1, ok := toolResult(auto.Req(t, 1), "a1")
	must(t, ok && contains(res1.Content, "README.md") && contains(res1.Content, "exit code: 0") && !res1.IsError,
		"after the approval qa-automation read %+v", res1)
	for i := range auto.Calls() {
		for _, m := range auto.Req(t, i).Messages {
			must(t, !contains(strings.ToLower(m.Content), "pending"), "request %d says pending: %q", i+1, m.Content)
		}
	}
	pres, ok := toolResult(perf.Req(t, 1), "p1")
	must(t, ok && contains(pres.Content, "1") && !pres.IsError, "qa-performance-security read %+v", pres)
	must(t, contains(perf.Req(t, 0).Messages[0].Content, "qa-automation: PASS"), "the second delegation was not told the first verdict")
	r := w.getRun(t, s.RunID)
	must(t, r.State == brabo.RunDone && r.AwaitingActionID == "", "the run ended %+v", r)
	_, err = w.awaitingRun(t, s.ActorKey, s.ActionID)
	must(t, errors.Is(err, brabo.ErrNotFound), "the run still awaits the action: %v", err)
	must(t, !l.Waits(s.ActorKey, s.ActionID), "the lead still thinks it waits")
	must(t, w.getTask(t).Status == brabo.TaskInProgress, "the gate changed the task: %+v", w.getTask(t))
}

func TestADenialResumesTheSubAgentWithTheReasonAndTheAreaGoesOn(t *testing.T) {
	w := newWorld(t)
	auto := newRecorder(t, "auto", `{"turns": [
  {"toolCalls": [{"id": "a1", "name": "terminal", "arguments": {"command": "ls && touch qa-report.txt"}}]},
  {"expectToolResult": "denied by a human: no files in the dev's tree", "content": "qa-automation: PASS without a report"}
]}`)
	perf := newRecorder(t, "perf", perfScript)
	l := w.lead(auto, perf)
	// No Local: the wake worker resumes through the store (Lead.Resume).
	w.startWake(t, l, false)
	res, err := l.RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s := suspended(t, w, res, perf)
	if _, err := w.svc.Deny(context.Background(), s.ActionID, w.owner, "no files in the dev's tree"); err != nil {
		t.Fatal(err)
	}
	bothVerdicts(t, w, "qa-automation: PASS without a report")
	must(t, !w.exists("qa-report.txt"), "qa-report.txt exists after a denial")
	res1, ok := toolResult(auto.Req(t, 1), "a1")
	must(t, ok && res1.IsError && res1.Content == "denied by a human: no files in the dev's tree", "qa-automation read %+v", res1)
	must(t, w.getTask(t).Status == brabo.TaskInProgress, "a denial blocked the task: %+v", w.getTask(t))
}

func TestARestartedLeadCompletesTheAreaAfterTheApproval(t *testing.T) {
	w := newWorld(t)
	auto, perf := newRecorder(t, "auto", autoScript), newRecorder(t, "perf", perfScript)
	first := w.lead(auto, perf)
	res, err := first.RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s := suspended(t, w, res, perf)
	// Something left in the gate's worktree while the area waits: the
	// restored area goes on in that very worktree, not refreshed.
	if err := os.WriteFile(filepath.Join(w.gateDir(), "marker.txt"), []byte("left while waiting\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The process dies: the store is closed and opened again, and a new
	// lead with fresh models takes the area back from the Run.
	if err := w.store.Close(); err != nil {
		t.Fatal(err)
	}
	w.open(t)
	auto2 := newRecorder(t, "auto2", autoScript)
	perf2 := newRecorder(t, "perf2", `{"turns": [
  {"toolCalls": [{"id": "p1", "name": "terminal", "arguments": {"command": "cat marker.txt"}}]},
  {"expectToolResult": "left while waiting", "content": "qa-performance-security: no findings"}
]}`)
	second := w.lead(auto2, perf2)
	must(t, !second.Waits(s.ActorKey, s.ActionID), "a new lead knows the wait before Restore")
	if err := second.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	must(t, second.Waits(s.ActorKey, s.ActionID), "Restore did not take back the waiting area")
	w.startWake(t, second, true)

	d, err := w.svc.Approve(context.Background(), s.ActionID, w.owner, w.svc.RevisionNow(context.Background(), s.ActionID))
	must(t, err == nil && d.Action.Status == brabo.StatusExecuted, "approve: %+v, %v", d, err)
	bothVerdicts(t, w, "qa-automation: PASS, report written")
	must(t, auto.Calls() == 1 && auto2.Calls() == 1, "qa-automation was called %d then %d times; want 1 and 1", auto.Calls(), auto2.Calls())
	res1, ok := toolResult(auto2.Req(t, 0), "a1")
	must(t, ok && contains(res1.Content, "README.md"), "after the restart qa-automation read %+v", res1)
	must(t, perf.Calls() == 0 && perf2.Calls() == 2, "qa-performance-security calls: %d, %d", perf.Calls(), perf2.Calls())
	w.gateRemoved(t)
}

func TestASubAgentHaltedByItsModelFailsTheDelegationWithOriginModel(t *testing.T) {
	w := newWorld(t)
	// The script ends before the verdict: the scripted model fails the
	// second call, which is not retryable.
	auto := newRecorder(t, "auto", `{"turns": [
  {"toolCalls": [{"id": "a1", "name": "terminal", "arguments": {"command": "ls"}}]}
]}`)
	perf := newRecorder(t, "perf", perfScript)
	l := w.lead(auto, perf)
	res, err := l.RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := res.(gate.Failed)
	must(t, ok && f.SubAgent == gate.QAAutomation && f.Origin == brabo.OriginModel && contains(f.Reason, "model:"),
		"the area ended %#v", res)
	evs := w.events(t, gate.EventDelegationFailed)
	must(t, len(evs) == 1 && evs[0].ActorID == w.auto.ID, "%d delegation.failed events", len(evs))
	p := payload(t, evs[0])
	must(t, p["origin"] == string(brabo.OriginModel) && contains(p["reason"].(string), "script exhausted"),
		"delegation.failed: %s", evs[0].Payload)
	task := w.getTask(t)
	must(t, task.Status == brabo.TaskBlocked && task.BlockedOrigin == brabo.OriginModel, "the task: %+v", task)
	must(t, len(w.events(t, gate.EventGateCompleted)) == 0, "the area consolidated after a failure")
	must(t, len(w.events(t, gate.EventDelegationAwaiting)) == 0, "an awaiting event for a halted loop")
	must(t, perf.Calls() == 0, "qa-performance-security ran after qa-automation failed")
}

func TestTheStoredStateIsAGateStateWithTheSubAgentsLoop(t *testing.T) {
	w := newWorld(t)
	auto, perf := newRecorder(t, "auto", autoScript), newRecorder(t, "perf", perfScript)
	res, err := w.lead(auto, perf).RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s := suspended(t, w, res, perf)
	var st gate.State
	if err := json.Unmarshal(w.getRun(t, s.RunID).Ctx, &st); err != nil {
		t.Fatal(err)
	}
	must(t, st.Gate == gate.StateVersion && st.Current == gate.QAAutomation && len(st.Remaining) == 1 &&
		st.Remaining[0] == gate.QAPerformanceSecurity && len(st.Verdicts) == 0 && st.Loop != nil &&
		st.Loop.Awaits(s.ActionID) && st.Loop.PendingToolCallID == "a1" && st.Worktree == gate.WorktreeRel(w.task.ID),
		"stored state: %+v", st)
}

func TestTheSecondDelegationWaitsTooAndTheFirstVerdictIsKept(t *testing.T) {
	w := newWorld(t)
	auto := newRecorder(t, "auto", `{"turns": [{"content": "qa-automation: PASS"}]}`)
	perf := newRecorder(t, "perf", `{"turns": [
  {"toolCalls": [{"id": "p1", "name": "terminal", "arguments": {"command": "touch perf.txt && echo timed"}}]},
  {"expectToolResult": "timed", "content": "qa-performance-security: no findings"}
]}`)
	l := w.lead(auto, perf)
	w.startWake(t, l, true)
	res, err := l.RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := res.(gate.Suspended)
	key := brabo.AgentKey(w.perf.ID)
	must(t, ok && s.SubAgent == gate.QAPerformanceSecurity && s.ActorKey == key && len(s.Verdicts) == 1 &&
		s.Verdicts[0].Verdict == "qa-automation: PASS", "the area ended %#v", res)
	r, err := w.awaitingRun(t, key, s.ActionID)
	must(t, err == nil && r.ID == s.RunID, "AwaitingRun by qa-performance-security's key: %+v, %v", r, err)
	var st gate.State
	json.Unmarshal(r.Ctx, &st)
	must(t, len(st.Verdicts) == 1 && st.Verdicts[0].SubAgent == gate.QAAutomation && len(st.Remaining) == 0,
		"the stored state lost the first verdict: %+v", st)
	must(t, len(w.events(t, gate.EventGateCompleted)) == 0, "the area consolidated while waiting")
	d, err := w.svc.Approve(context.Background(), s.ActionID, w.owner, w.svc.RevisionNow(context.Background(), s.ActionID))
	must(t, err == nil && d.Action.Status == brabo.StatusExecuted, "approve: %+v, %v", d, err)
	vs, _ := w.completedVerdicts(t)
	must(t, len(vs) == 2 && vs[0].Verdict == "qa-automation: PASS" && vs[1].Verdict == "qa-performance-security: no findings",
		"the verdicts are %+v", vs)
	must(t, auto.Calls() == 1, "qa-automation ran again (%d calls)", auto.Calls())
}

func TestASecondDeliveryOfTheSettledEventResumesNothing(t *testing.T) {
	w := newWorld(t)
	auto, perf := newRecorder(t, "auto", autoScript), newRecorder(t, "perf", perfScript)
	l := w.lead(auto, perf)
	res, err := l.RunArea(context.Background(), w.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	s := suspended(t, w, res, perf)
	if _, err := w.svc.Approve(context.Background(), s.ActionID, w.owner, w.svc.RevisionNow(context.Background(), s.ActionID)); err != nil {
		t.Fatal(err)
	}
	a := w.action(t, s.ActionID)
	raw, _ := json.Marshal(brabo.Settled{ActionID: a.ID, Status: a.Status, Result: a.Result})
	msg := brabo.OutboxMessage{ID: 1, ProjectID: w.prj.ID, Topic: brabo.TopicActionSettled, ActorKey: s.ActorKey, ActionID: a.ID, Payload: raw}
	run := w.getRun(t, s.RunID)
	for range 2 {
		if err := l.Resume(context.Background(), run, msg); err != nil {
			t.Fatal(err)
		}
	}
	bothVerdicts(t, w, "qa-automation: PASS, report written")
	must(t, auto.Calls() == 2 && perf.Calls() == 2, "calls after two deliveries: %d, %d", auto.Calls(), perf.Calls())
}
