package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// External execution (DESIGN §9): an agent that runs its tools itself
// (Claude Code, Codex, Gemini CLI through brabo hook) proposes with
// execution "external". brabo decides, records and queues the action as
// any other, but never runs it: an auto-approval or a human's approval
// leaves it approved, the agent runs it, and reports what happened with
// Report, recorded as its own action.executed or action.failed.

// Bounds of what an agent writes into an external action's record.
const (
	maxExecutionID = 256
	// MaxReportedOutput is how much of a reported output is kept; the
	// rest is cut and the result marked truncated.
	MaxReportedOutput = 64 << 10
	// maxNotRunReason bounds the agent's reason for not running an
	// action.
	maxNotRunReason = 2 << 10
	// maxWaitUntil bounds how far ahead a hook's announced deadline is.
	maxWaitUntil = 24 * time.Hour
)

// validateExecution refuses a proposal whose execution is malformed, a
// hook agent's proposal that brabo would run, and a decide-only type
// (read_file, mcp_tool) that brabo would have to run.
func validateExecution(req ProposeRequest) error {
	e := req.Execution
	hook := req.Actor.Agent != nil && req.Actor.Agent.IsHook()
	if e == nil {
		switch {
		case hook:
			return forbidden("a hook token proposes only actions its agent runs itself: set \"execution\": {\"mode\": \"external\"}")
		case req.Type.DecideOnly():
			return invalid("brabo does not run %s actions: only an agent that runs it itself proposes one (\"execution\": {\"mode\": \"external\"})", req.Type)
		}
		return nil
	}
	if e.Mode != brabo.ExecutionExternal {
		return invalid("execution mode %q: the only mode is %q", e.Mode, brabo.ExecutionExternal)
	}
	if req.Actor.Agent == nil {
		return invalid("only an agent runs an action itself; a member's proposal is run by brabo")
	}
	for name, v := range map[string]string{"runner": e.Runner, "sessionId": e.SessionID, "turnId": e.TurnID, "toolUseId": e.ToolUseID} {
		if len(v) > maxExecutionID || !utf8.ValidString(v) {
			return invalid("execution %s: at most %d bytes of UTF-8", name, maxExecutionID)
		}
	}
	if len(e.Description) > brabo.MaxDescription || !utf8.ValidString(e.Description) {
		return invalid("execution description: at most %d bytes of UTF-8 (the agent's words about the call)", brabo.MaxDescription)
	}
	if !e.WaitUntil.IsZero() && e.WaitUntil.After(time.Now().Add(maxWaitUntil)) {
		return invalid("execution waitUntil: at most %s ahead (the agents' hook timeouts are minutes)", maxWaitUntil)
	}
	return nil
}

// Report records what the agent that proposed an external action did with
// it: executed (it ran; a non-zero exit code is still executed, as for
// brabo's own commands), failed (res.Error says why it could not run) or,
// with res.Code CodeNotRun, not_run: the agent refused it itself after
// brabo approved it (its own deny rule, its command policy, another
// hook), and res.Error is the agent's reason (action.not_run).
// Only the proposing agent reports, once, and only for an action that was
// approved: a pending one must not have run (not_decided), a denied one is
// action_already_denied, a second report already_reported.
func (s *Service) Report(ctx context.Context, actionID string, agent *brabo.Agent, res brabo.Result) (*brabo.ProposedAction, error) {
	if agent == nil {
		return nil, forbidden("only the agent that proposed an action reports its result")
	}
	if len(res.Output) > MaxReportedOutput {
		cut := MaxReportedOutput
		for cut > 0 && !utf8.RuneStart(res.Output[cut]) {
			cut--
		}
		res.Output, res.Truncated = res.Output[:cut], true
	}
	res.Output = strings.ToValidUTF8(res.Output, "\uFFFD")
	res.Error = strings.ToValidUTF8(res.Error, "\uFFFD")
	detail := map[string]string{"executedBy": "agent:" + agent.ID}
	if res.Code == brabo.CodeNotRun {
		detail = map[string]string{"refusedBy": "agent:" + agent.ID}
	} else if res.Detail["exitCode"] == "unknown" {
		detail["exitCode"] = "unknown" // the agent ran it and did not say how it ended
	}
	res.Detail = detail
	status, event := brabo.StatusExecuted, brabo.EventActionExecuted
	switch {
	case res.Code == brabo.CodeNotRun:
		// The agent refused it itself after brabo approved it: nothing
		// ran, so the result has no exit code and no output.
		status, event = brabo.StatusNotRun, brabo.EventActionNotRun
		res.ExitCode, res.Output, res.Truncated, res.TimedOut = 0, "", false, false
		if res.Error == "" {
			res.Error = "the agent did not run it"
		}
		if len(res.Error) > maxNotRunReason {
			cut := maxNotRunReason
			for cut > 0 && !utf8.RuneStart(res.Error[cut]) {
				cut--
			}
			res.Error = res.Error[:cut]
		}
	case res.Code != "":
		return nil, invalid("a reported result's code is %q or none", brabo.CodeNotRun)
	case res.Error != "":
		status, event = brabo.StatusFailed, brabo.EventActionFailed
	}
	var a *brabo.ProposedAction
	now := s.now()
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		if a, err = tx.Action(ctx, actionID); err != nil {
			return err
		}
		if a.ActorKind != "agent" || a.ActorID != agent.ID {
			return fmt.Errorf("action %s: %w", actionID, brabo.ErrNotFound)
		}
		if !a.External() {
			return invalid("action %s is run by brabo, which records its result itself", a.ID)
		}
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusApproved, brabo.StatusAutoApproved},
			brabo.ActionUpdate{Status: status, Result: &res, SettledAt: now})
		if err != nil {
			return err
		}
		if !ok {
			switch {
			case a.Status == brabo.StatusPending:
				return brabo.Errorf(brabo.CodeNotDecided, "action %s is pending: no one approved it, so it must not have run", a.ID)
			case a.Status == brabo.StatusDenied:
				return brabo.Errorf(brabo.CodeActionAlreadyDenied, "action %s was denied: %s", a.ID, a.Reason)
			}
			return brabo.Errorf(brabo.CodeAlreadyReported, "action %s is %s: its result was reported already", a.ID, a.Status)
		}
		payload := map[string]any{"exitCode": res.ExitCode, "error": res.Error, "by": "agent"}
		if status == brabo.StatusNotRun {
			payload = map[string]any{"reason": res.Error, "by": "agent"}
		}
		if a.Execution.Runner != "" {
			payload["runner"] = a.Execution.Runner
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: event, ActorID: agent.ID,
			ActionID: a.ID, Payload: mustJSON(payload), CreatedAt: now})
	})
	if err != nil {
		return nil, err
	}
	a.Status, a.Result, a.SettledAt = status, &res, now
	s.log().Info("external action reported", "action", a.ID, "status", status, "exitCode", res.ExitCode)
	return a, nil
}
