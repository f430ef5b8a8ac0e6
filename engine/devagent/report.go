package devagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// ReportDone is the name of the tool the dev agent ends a task with.
const ReportDone = "report_done"

// BaseBranch is the branch report_done opens its pull request against.
const BaseBranch = "main"

// ReportDoneTool is the report_done pipeline tool {title, summary}: it
// becomes a pr_open of the task's branch (TaskBranch), the one the agent's
// worktree has checked out, against BaseBranch, for taskID. Whether a
// terminal command passed first is not its business: the loop's reportGate
// refuses the proposal otherwise (see buildLoop).
func ReportDoneTool(taskID string) toolloop.Tool {
	// The spec is shared by every agent (it names no branch: the task's
	// first message does), so ten thousand waiting agents hold one copy.
	return toolloop.Tool{
		Spec: model.Tool{
			Name:        ReportDone,
			Description: reportDoneDescription,
			Parameters:  reportDoneParams,
		},
		Kind: toolloop.Pipeline,
		Action: func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
			var a struct {
				Title   string `json:"title"`
				Summary string `json:"summary"`
			}
			if err := decodeStrict(args, &a); err != nil {
				return "", brabo.Payload{}, err
			}
			if strings.TrimSpace(a.Title) == "" {
				return "", brabo.Payload{}, errors.New("title is required")
			}
			if strings.TrimSpace(a.Summary) == "" {
				return "", brabo.Payload{}, errors.New("summary is required")
			}
			return brabo.PrOpen, brabo.Payload{Branch: TaskBranch(taskID), Base: BaseBranch,
				Title: strings.TrimSpace(a.Title), TaskID: taskID}, nil
		},
	}
}

func decodeStrict(args json.RawMessage, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the arguments do not fit the schema: %v", err)
	}
	return nil
}

// history is what one conversation has shown so far of its terminal
// commands: whether one exited 0. It is fed by every model request (the
// whole conversation), by the pipeline's answers to terminal proposals
// (calls of the same assistant message run before the next request), and
// by the settlement a suspended conversation resumes with.
type history struct {
	mu     sync.Mutex
	passed bool
}

func (h *history) seen(msgs []model.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.passed {
		h.passed = terminalPassed(msgs)
	}
}

func (h *history) sawAction(a *brabo.ProposedAction) {
	if a != nil && a.Type == brabo.Terminal {
		h.sawSettled(a.Status, a.Result)
	}
}

func (h *history) sawSettled(status brabo.ActionStatus, res *brabo.Result) {
	if status == brabo.StatusExecuted && res != nil && res.ExitCode == 0 && !res.TimedOut {
		h.mu.Lock()
		h.passed = true
		h.mu.Unlock()
	}
}

func (h *history) testsPassed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.passed
}

// terminalPassed reports whether a terminal tool result with exit code 0
// is among msgs (the loop writes an executed action's result as
// "exit code: N" first; a failure or a denial is an error result).
func terminalPassed(msgs []model.Message) bool {
	for _, m := range msgs {
		if m.Role != model.ToolResult || m.ToolName != "terminal" || m.IsError {
			continue
		}
		first, _, _ := strings.Cut(m.Content, "\n")
		if strings.TrimSpace(first) == "exit code: 0" {
			return true
		}
	}
	return false
}

// historyModel feeds every request's conversation to a history.
type historyModel struct {
	inner model.Model
	hist  *history
}

func (h historyModel) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	h.hist.seen(req.Messages)
	return h.inner.Complete(ctx, req)
}

// reportGate is the loop's Proposer: it passes everything to the pipeline,
// noting the terminal commands that passed, and refuses a pr_open (only
// report_done makes one) before any did, so nothing is proposed then. The
// refusal is an invalid_action, which the loop counts as a failing tool
// result toward its circuit breaker.
type reportGate struct {
	inner toolloop.Proposer
	hist  *history
	// taskID is stamped on every action the agent proposes, so the task's
	// session log finds them.
	taskID string
}

// Inner is the pipeline behind the gate, where the loop finds the
// agent's stored instructions and records its model usage.
func (g reportGate) Inner() toolloop.Proposer { return g.inner }

const reportDoneDescription = "Report the task done and ask for a pull request of your task's branch into " + BaseBranch + ". " +
	"Run the tests with the terminal tool first: report_done is refused until a terminal command has exited 0. " +
	"Commit your work and push the branch (git_push) first: the pull request needs it on the remote."

var reportDoneParams = json.RawMessage(`{"type":"object","properties":{` +
	`"title":{"type":"string","description":"the pull request's title"},` +
	`"summary":{"type":"string","description":"what was done and how it was tested"}},` +
	`"required":["title","summary"],"additionalProperties":false}`)

// ErrTestsFirst is what report_done answers before a terminal command
// passed.
const ErrTestsFirst = "no terminal command has exited 0 in this conversation yet: run the tests with the terminal tool " +
	"(and make them pass) first, then call report_done again; no pull request was proposed"

// Propose refuses a pr_open before a terminal command passed, and passes
// everything else to the pipeline, marked with the agent's task.
func (g reportGate) Propose(ctx context.Context, req pipeline.ProposeRequest) (*brabo.ProposedAction, error) {
	if req.Type == brabo.PrOpen && !g.hist.testsPassed() {
		return nil, brabo.Errorf(brabo.CodeInvalidAction, ErrTestsFirst)
	}
	if req.Payload.TaskID == "" {
		req.Payload.TaskID = g.taskID
	}
	a, err := g.inner.Propose(ctx, req)
	if err == nil {
		g.hist.sawAction(a)
	}
	return a, err
}

// prSettled is the payload of task.pr_settled.
type prSettled struct {
	ActionID string `json:"actionId"`
	Opened   bool   `json:"opened"`
	PR       int64  `json:"pr,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

func decodePRSettled(msg brabo.OutboxMessage) (prSettled, error) {
	var s prSettled
	if err := json.Unmarshal(msg.Payload, &s); err != nil {
		return s, fmt.Errorf("the payload of message %d is not a pr_settled event: %v", msg.ID, err)
	}
	if s.ActionID == "" {
		s.ActionID = msg.ActionID
	}
	return s, nil
}

func decodeSettled(msg brabo.OutboxMessage) (brabo.Settled, error) {
	var s brabo.Settled
	if err := json.Unmarshal(msg.Payload, &s); err != nil {
		return s, fmt.Errorf("the payload of message %d is not a settled event: %v", msg.ID, err)
	}
	if s.ActionID == "" {
		s.ActionID = msg.ActionID
	}
	return s, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values are passed
	}
	return b
}

// pendingArgs reads the arguments of the tool call c waits on, when it is
// report_done's.
func pendingArgs(c toolloop.Ctx) (args struct{ Title, Summary, Branch string }, ok bool) {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		for _, tc := range c.Messages[i].ToolCalls {
			if tc.ID == c.PendingToolCallID && tc.Name == ReportDone {
				return args, json.Unmarshal(tc.Arguments, &args) == nil
			}
		}
	}
	return args, false
}

// prStepKind is what a message means for a run awaiting a pull request.
type prStepKind int

const (
	prIgnore prStepKind = iota // not for this wait, or not the signal
	prFinish                   // task.pr_settled: the wait is over
	prResume                   // the pr_open failed: the loop goes on with the error
)

type prStep struct {
	kind prStepKind
	pr   prSettled
	why  string // for prIgnore
}

// prStepOf reads msg for run, which awaits a pr_open. task.pr_settled for
// the awaited action finishes the wait. Its task.action_settled is the same
// decision told twice when it says executed or denied (task.pr_settled is
// written in the same transaction), so it is ignored; when it says failed
// no task.pr_settled comes, and the loop resumes with the failure.
func prStepOf(run *brabo.Run, msg brabo.OutboxMessage) (prStep, error) {
	switch msg.Topic {
	case brabo.TopicPRSettled:
		p, err := decodePRSettled(msg)
		if err != nil {
			return prStep{}, err
		}
		if p.ActionID != run.AwaitingActionID {
			return prStep{kind: prIgnore, why: "another action"}, nil
		}
		return prStep{kind: prFinish, pr: p}, nil
	case brabo.TopicActionSettled:
		s, err := decodeSettled(msg)
		if err != nil {
			return prStep{}, err
		}
		if s.ActionID != run.AwaitingActionID {
			return prStep{kind: prIgnore, why: "another action"}, nil
		}
		if s.Status == brabo.StatusFailed {
			return prStep{kind: prResume}, nil
		}
		return prStep{kind: prIgnore, why: "task.pr_settled is the signal for a pr_open that was " + string(s.Status)}, nil
	}
	return prStep{kind: prIgnore, why: "another topic"}, nil
}

// prFromAction is the task.pr_settled a settled pr_open implies, for a
// decision made before its run was stored waiting; ok is false for a
// failed one (the loop resumes with it instead).
func prFromAction(a *brabo.ProposedAction) (p prSettled, ok bool) {
	p.ActionID = a.ID
	switch a.Status {
	case brabo.StatusExecuted:
		p.Opened = true
		if a.Result != nil {
			fmt.Sscan(a.Result.Detail["pr"], &p.PR)
		}
		return p, true
	case brabo.StatusDenied:
		p.Reason = a.Reason
		return p, true
	}
	return p, false
}

// prOf finds the number of the PR an executed pr_open recorded: the
// newest PR row of its task and head (the action's stored result may not
// carry the number: the pipeline adds it after writing the result). 0 when
// none is found.
func (m *Manager) prOf(ctx context.Context, a *brabo.ProposedAction) int64 {
	var n int64
	err := m.Store.View(ctx, func(tx brabo.Tx) error {
		prs, err := tx.PRs(ctx, a.ProjectID)
		if err != nil {
			return err
		}
		for _, pr := range prs {
			if pr.TaskID == a.Payload.TaskID && pr.Head == a.Payload.Branch && pr.Number > n {
				n = pr.Number
			}
		}
		return nil
	})
	if err != nil {
		m.log().Error("devagent: finding the PR of a pr_open", "action", a.ID, "err", err)
	}
	return n
}

// finishPR ends a run that awaited its pull request. Opened: the run is
// done and the agent free for its next task; the task is in review (the
// pipeline moved it when it opened the PR) until the merge makes it done.
// Not opened: a human decided so; the task is blocked with origin user and
// their reason.
func (m *Manager) finishPR(ctx context.Context, st *state, p prSettled) error {
	ctx = context.WithoutCancel(ctx)
	if !p.Opened {
		reason := strings.TrimSpace(p.Reason)
		if reason == "" {
			reason = "no reason given"
		}
		why := fmt.Sprintf("a human decided not to open the pull request (action %s): %s", p.ActionID, reason)
		return m.block(ctx, st, why, brabo.OriginUser, nil)
	}
	now := m.now()
	prev := *st.run
	err := m.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := m.fence(ctx, tx, st.agent.ID); err != nil {
			return err
		}
		if err := leaveRun(ctx, tx, st.run, brabo.RunDone, now); err != nil {
			return err
		}
		// The task's status is the pipeline's: it moved to in_review in the
		// transaction that opened the PR, and moves to done when the merge
		// executes, once (DESIGN §6.4). The agent only ends its run.
		task, err := tx.Task(ctx, st.task.ID)
		if err != nil {
			return err
		}
		st.task = task
		return tx.SaveRun(ctx, st.run)
	})
	if errors.Is(err, errLeftElsewhere) {
		*st.run = prev
		return nil // another process finished it first
	}
	if err != nil {
		*st.run = prev
		return fmt.Errorf("devagent: finishing task %s with PR #%d: %w", st.task.ID, p.PR, err)
	}
	// The work is on the task's branch and in the pull request: the
	// worktree is no longer needed.
	if err := st.wt.release(ctx); err != nil {
		m.log().Warn("devagent: the done task's worktree stays", "task", st.task.ID, "worktree", st.wt.rel, "err", err)
	}
	return nil
}
