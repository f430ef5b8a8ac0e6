// Package devlead is the dev lead (DESIGN §7.5): a conversational agent
// with no task and no worktree. Each Post is one turn of the tool loop
// with two pipeline tools, propose_execution_plan and
// assess_implementability (maintainer-minimum types).
//
// A pending action SUSPENDS the turn, as for the dev agent: the lead
// persists the conversation in a brabo.Run (actor key "agent:<lead id>",
// state awaiting_approval, the action id, the Ctx as JSON), appends
// agent.status {status: awaiting_approval, actionId} and Post returns
// Turn{Awaiting: id}. The action's task.action_settled, routed by the wake
// worker to Deliver (wake.Local) or Resume (wake.Resumer), resumes the turn
// with the real result or the denial reason, and the model's answer is
// appended to the conversation. Leaving the wait is a conditional claim
// (tx.LeaveWait): a settled event delivered twice, or to two processes,
// resumes the turn once.
//
// # Declared gap: restarts (ADR 0086, seed 003)
//
// Only the Lead that suspended a turn resumes it. A new Lead (after a
// restart, or in another process sharing the store) does NOT restore
// waiting turns: the decision stays recorded and visible in Approvals, but
// the lead does not narrate it. A settled event for a turn nobody holds
// here is simply delivered: Resume returns nil without resuming and without
// calling the model. The stored run stays awaiting_approval (and
// Conversation shows it as it was) until the next Post of a Lead of that
// agent, which closes it (state blocked) and goes on from the turns that
// had ended, without the orphaned one.
//
// Conversation state: the loop's Ctx only holds the current turn (toolloop
// has no way to continue a finished conversation), so the turns before it
// are given to the model through a wrapper that puts them in front of each
// request. The stored Ctx holds the whole conversation, with turnStart
// saying where the current turn begins.
package devlead

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// Events the lead appends to its project's log.
const (
	EventAgentStatus       = "agent.status"
	StatusAwaitingApproval = "awaiting_approval"
	// StatusBlocked: the turn stopped because nobody decided within the
	// wait cap (origin policy).
	StatusBlocked = "blocked"
)

// ErrAwaiting refuses a Post while the lead's turn waits for a decision.
var ErrAwaiting = errors.New("devlead: the lead's turn waits for a decision")

// Turn is how a turn ended (for now).
type Turn struct {
	// Answer is the model's answer when the turn finished.
	Answer string
	// Awaiting is the action the turn is suspended on ("" otherwise).
	Awaiting string
	// Halted says why the turn stopped early ("" otherwise), with Origin.
	Halted string
	Origin brabo.Origin
}

// Lead is one dev lead's conversation in this process.
type Lead struct {
	Store     brabo.Store
	Proposer  toolloop.Proposer
	Model     model.Model
	ProjectID string
	Agent     *brabo.Agent
	System    string
	// MaxIterations bounds the model calls of one turn (toolloop's default
	// when zero).
	MaxIterations int
	// Starter starts the project's dev agents for the lead's parallelize
	// when they fit within the project's cap (nil: every parallelize is
	// proposed).
	Starter *Starter
	// OnTurn, when set, is told how a resumed turn ended.
	OnTurn func(Turn)
	// WaitCap is the default inactivity cap of a suspended turn, for a
	// project that sets none (Project.WaitCapSec); brabo.DefaultWaitCap
	// when zero. The wait's deadline is stored with the run, and the
	// store's sweep expires it (Expire).
	WaitCap time.Duration
	Now     func() time.Time
	Log     *slog.Logger

	mu sync.Mutex // one turn at a time
	// hold is the turn this Lead suspended: run id and action id. Only
	// it is resumed here.
	holdRun, holdAction string
	wg                  sync.WaitGroup
}

func (l *Lead) key() string { return brabo.AgentKey(l.Agent.ID) }

func (l *Lead) now() time.Time {
	if l.Now != nil {
		return l.Now().UTC()
	}
	return time.Now().UTC()
}

func (l *Lead) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.Default()
}

// stored is what the run's Ctx holds: the loop's Ctx over the whole
// conversation, and where the current turn begins in it.
type stored struct {
	toolloop.Ctx
	TurnStart int `json:"turnStart"`
}

// prefixModel puts the conversation's earlier turns in front of each
// request.
type prefixModel struct {
	inner  model.Model
	prefix []model.Message
}

func (p prefixModel) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	msgs := make([]model.Message, 0, len(p.prefix)+len(req.Messages))
	req.Messages = append(append(msgs, p.prefix...), req.Messages...)
	return p.inner.Complete(ctx, req)
}

func (l *Lead) loop(prefix []model.Message) *toolloop.Loop {
	return &toolloop.Loop{Model: prefixModel{inner: l.Model, prefix: prefix}, Proposer: l.Proposer,
		ProjectID: l.ProjectID, Actor: pipeline.Actor{Agent: l.Agent}, System: l.System,
		Tools: append(Tools(), ParallelizeTool(l.Starter, l.Agent)), MaxIterations: l.MaxIterations}
}

func (l *Lead) check() error {
	if l.Store == nil || l.Model == nil || l.Proposer == nil || l.Agent == nil || l.ProjectID == "" {
		return errors.New("devlead: the lead needs a store, a model, a proposer, an agent and a project")
	}
	return nil
}

// latestRun is the agent's latest run, nil for none.
func (l *Lead) latestRun(ctx context.Context) (*brabo.Run, error) {
	var latest *brabo.Run
	err := l.Store.View(ctx, func(tx brabo.Tx) error {
		for _, st := range []brabo.RunState{brabo.RunWorking, brabo.RunAwaitingApproval, brabo.RunAwaitingPR, brabo.RunDone, brabo.RunBlocked} {
			runs, err := tx.RunsInState(ctx, st)
			if err != nil {
				return err
			}
			for _, r := range runs {
				if r.ActorKey == l.key() && (latest == nil || r.UpdatedAt.After(latest.UpdatedAt)) {
					latest = r
				}
			}
		}
		return nil
	})
	return latest, err
}

func decodeStored(r *brabo.Run) (stored, error) {
	var s stored
	if len(r.Ctx) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(r.Ctx, &s); err != nil {
		return s, fmt.Errorf("devlead: the stored conversation of run %s is unreadable: %v", r.ID, err)
	}
	if s.Version != toolloop.CtxVersion {
		return s, fmt.Errorf("devlead: the stored conversation of run %s has version %d; this build reads %d",
			r.ID, s.Version, toolloop.CtxVersion)
	}
	if s.TurnStart < 0 || s.TurnStart > len(s.Messages) {
		return s, fmt.Errorf("devlead: the stored conversation of run %s has turnStart %d of %d messages", r.ID, s.TurnStart, len(s.Messages))
	}
	return s, nil
}

// Conversation is the lead's conversation as stored (nil when there is
// none yet). After a restart it shows an orphaned turn as it was left.
func (l *Lead) Conversation(ctx context.Context) ([]model.Message, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	r, err := l.latestRun(ctx)
	if err != nil || r == nil {
		return nil, err
	}
	s, err := decodeStored(r)
	if err != nil {
		return nil, err
	}
	return s.Messages, nil
}

// Post appends the user's message to the conversation and runs a turn.
// It returns ErrAwaiting while a turn this Lead holds waits for a decision.
func (l *Lead) Post(ctx context.Context, text string) (Turn, error) {
	if err := l.check(); err != nil {
		return Turn{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holdAction != "" {
		// The store is the truth: a turn expired by its wait cap (or
		// closed elsewhere) is held here no more.
		still, err := l.stillWaits(ctx)
		if err != nil {
			return Turn{}, fmt.Errorf("devlead: reading the held turn: %w", err)
		}
		if still {
			return Turn{}, fmt.Errorf("%w (action %s)", ErrAwaiting, l.holdAction)
		}
		l.holdRun, l.holdAction = "", ""
	}
	prev, err := l.latestRun(ctx)
	if err != nil {
		return Turn{}, fmt.Errorf("devlead: reading the conversation: %w", err)
	}
	var history []model.Message
	if prev != nil {
		s, err := decodeStored(prev)
		if err != nil {
			return Turn{}, err
		}
		history = s.Messages
		switch {
		case prev.State == brabo.RunAwaitingApproval || prev.State == brabo.RunAwaitingPR || prev.State == brabo.RunWorking:
			// A turn no Lead here holds (declared gap): close it and go on
			// from the turns that had ended.
			if err := l.closeOrphan(ctx, prev); err != nil {
				return Turn{}, err
			}
			history = s.Messages[:s.TurnStart]
		case s.PendingToolCallID != "":
			// A turn stopped while it waited (its wait cap ran out): its
			// tool call has no result, so it is left out as an orphan is.
			history = s.Messages[:s.TurnStart]
		}
	}
	run := &brabo.Run{ID: brabo.NewID("run"), ProjectID: l.ProjectID, ActorKey: l.key(), State: brabo.RunWorking, UpdatedAt: l.now()}
	if prev != nil && prev.State == brabo.RunDone {
		run.ID = prev.ID // the same conversation goes on
	}
	out := toolloop.Run(ctx, l.loop(history), text)
	return l.apply(ctx, run, history, out)
}

// closeOrphan moves a waiting run nobody holds to blocked, if it still
// waits; its action stays as the pipeline recorded it.
func (l *Lead) closeOrphan(ctx context.Context, r *brabo.Run) error {
	now := l.now()
	return l.Store.Update(ctx, func(tx brabo.Tx) error {
		if r.AwaitingActionID != "" {
			if _, err := tx.LeaveWait(ctx, r.ID, r.AwaitingActionID, brabo.RunBlocked, now); err != nil {
				return err
			}
			return nil
		}
		cur, err := tx.Run(ctx, r.ID)
		if err != nil {
			return err
		}
		if cur.State == brabo.RunWorking {
			cur.State, cur.UpdatedAt = brabo.RunBlocked, now
			return tx.SaveRun(ctx, cur)
		}
		return nil
	})
}

// apply stores a turn's outcome. A suspension saves the run
// awaiting_approval with the conversation and appends agent.status in one
// transaction, then this Lead holds the turn.
func (l *Lead) apply(ctx context.Context, run *brabo.Run, history []model.Message, out toolloop.Outcome) (Turn, error) {
	ctx = context.WithoutCancel(ctx) // an outcome reached is recorded
	var (
		c    toolloop.Ctx
		turn Turn
	)
	run.State, run.AwaitingActionID = brabo.RunDone, ""
	switch o := out.(type) {
	case toolloop.Done:
		c, turn.Answer = o.Ctx, o.Final
	case toolloop.AwaitingApproval:
		c, turn.Awaiting = o.Ctx, o.ActionID
		run.State, run.AwaitingActionID = brabo.RunAwaitingApproval, o.ActionID
	case toolloop.Halted:
		c, turn.Halted, turn.Origin = o.Ctx, o.Why, o.Origin
		run.State = brabo.RunBlocked
	default:
		return Turn{}, fmt.Errorf("devlead: the tool loop ended with an unknown outcome %T", out)
	}
	full := c
	full.Messages = append(append(make([]model.Message, 0, len(history)+len(c.Messages)), history...), c.Messages...)
	raw, err := json.Marshal(stored{Ctx: full, TurnStart: len(history)})
	if err != nil {
		return Turn{}, fmt.Errorf("devlead: encoding the conversation: %w", err)
	}
	run.Ctx, run.UpdatedAt = raw, l.now()
	err = l.Store.Update(ctx, func(tx brabo.Tx) error {
		if turn.Awaiting != "" {
			// The wait's deadline: the project's cap as it is now.
			p, err := tx.Project(ctx, l.ProjectID)
			if err != nil {
				return err
			}
			run.Deadline = run.UpdatedAt.Add(p.WaitCap(l.waitCap()))
		}
		if err := tx.SaveRun(ctx, run); err != nil {
			return err
		}
		if turn.Awaiting == "" {
			return nil
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: l.ProjectID, Type: EventAgentStatus, ActorID: l.Agent.ID,
			ActionID: turn.Awaiting, CreatedAt: run.UpdatedAt,
			Payload: mustJSON(map[string]any{"status": StatusAwaitingApproval, "actionId": turn.Awaiting})})
	})
	if err != nil {
		return Turn{}, fmt.Errorf("devlead: saving the turn of run %s: %w", run.ID, err)
	}
	l.holdRun, l.holdAction = "", ""
	if turn.Awaiting != "" {
		l.holdRun, l.holdAction = run.ID, turn.Awaiting
	}
	return turn, nil
}

func (l *Lead) waitCap() time.Duration {
	if l.WaitCap > 0 {
		return l.WaitCap
	}
	return brabo.DefaultWaitCap
}

// stillWaits reports whether the turn this Lead holds still waits in the
// store; l.mu is held.
func (l *Lead) stillWaits(ctx context.Context) (bool, error) {
	var r *brabo.Run
	err := l.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		r, err = tx.Run(ctx, l.holdRun)
		return err
	})
	if errors.Is(err, brabo.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return (r.State == brabo.RunAwaitingApproval || r.State == brabo.RunAwaitingPR) && r.AwaitingActionID == l.holdAction, nil
}

// Expire stops a turn whose wait ran past its cap (wake.Expirer): the run
// is blocked, if it still waits on that action (a decision that resumed it
// first wins), and agent.status {status: blocked, origin: policy, reason}
// names the action nobody decided. Its conversation stays as it was; the
// next Post goes on from the turns before it. Any Lead may expire any
// turn: it is a write to the store, not to this Lead's turn.
func (l *Lead) Expire(ctx context.Context, run *brabo.Run, why string) error {
	if err := l.check(); err != nil {
		return err
	}
	now := l.now()
	left := false
	err := l.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		if left, err = tx.LeaveWait(ctx, run.ID, run.AwaitingActionID, brabo.RunBlocked, now); err != nil || !left {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: run.ProjectID, Type: EventAgentStatus, ActorID: l.Agent.ID,
			ActionID: run.AwaitingActionID, CreatedAt: now,
			Payload: mustJSON(map[string]any{"status": StatusBlocked, "origin": brabo.OriginPolicy, "reason": why,
				"actionId": run.AwaitingActionID})})
	})
	if err != nil {
		return fmt.Errorf("devlead: expiring the turn of run %s: %w", run.ID, err)
	}
	if left {
		l.log().Info("devlead: wait cap reached; the turn is stopped", "run", run.ID, "action", run.AwaitingActionID)
		// A Post holding l.mu finds the turn gone by itself (stillWaits).
		if l.mu.TryLock() {
			if l.holdRun == run.ID {
				l.holdRun, l.holdAction = "", ""
			}
			l.mu.Unlock()
		}
	}
	return nil
}

// holds reports whether this Lead holds a turn waiting on the action.
func (l *Lead) holds(actionID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return actionID != "" && l.holdAction == actionID
}

// Deliver (wake.Local) takes a settled message for the turn this Lead
// holds and resumes it in the background; it reports false for anything
// else, which the wake worker then gives to Resume.
func (l *Lead) Deliver(actorKey string, msg brabo.OutboxMessage) bool {
	if l.Agent == nil || actorKey != l.key() || msg.Topic != brabo.TopicActionSettled || !l.holds(msg.ActionID) {
		return false
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		if _, err := l.resume(context.Background(), msg); err != nil {
			l.log().Error("devlead: resuming a turn", "action", msg.ActionID, "err", err)
		}
	}()
	return true
}

// Resume (wake.Resumer) resumes the turn this Lead holds on the run, and
// waits for it. A run no Lead here holds is the declared gap: it returns
// nil without resuming (the message is delivered; the decision stays
// recorded, unnarrated).
func (l *Lead) Resume(ctx context.Context, run *brabo.Run, msg brabo.OutboxMessage) error {
	if l.Agent == nil || run.ActorKey != l.key() || !l.holds(msg.ActionID) {
		l.log().Info("devlead: a settled action for a turn no lead holds here; not narrated (declared gap)",
			"run", run.ID, "action", msg.ActionID)
		return nil
	}
	_, err := l.resume(ctx, msg)
	return err
}

// Wait returns when the turns resumed through Deliver have ended.
func (l *Lead) Wait() { l.wg.Wait() }

// resume leaves the wait (exactly once, across processes), resumes the
// loop with the settled event and stores the outcome.
func (l *Lead) resume(ctx context.Context, msg brabo.OutboxMessage) (Turn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if msg.Topic != brabo.TopicActionSettled || l.holdAction == "" || l.holdAction != msg.ActionID {
		return Turn{}, nil // resumed already: a duplicate delivery
	}
	var settled brabo.Settled
	if err := json.Unmarshal(msg.Payload, &settled); err != nil {
		return Turn{}, fmt.Errorf("devlead: the payload of message %d is not a settled event: %v", msg.ID, err)
	}
	if settled.ActionID == "" {
		settled.ActionID = msg.ActionID
	}
	var run *brabo.Run
	won := false
	err := l.Store.Update(ctx, func(tx brabo.Tx) error {
		var err error
		if run, err = tx.Run(ctx, l.holdRun); err != nil {
			return err
		}
		won, err = tx.LeaveWait(ctx, l.holdRun, l.holdAction, brabo.RunWorking, l.now())
		return err
	})
	if err != nil {
		return Turn{}, fmt.Errorf("devlead: leaving the wait of run %s: %w", l.holdRun, err)
	}
	if !won {
		// Taken up (or closed) elsewhere first: this Lead's copy is stale.
		l.holdRun, l.holdAction = "", ""
		return Turn{}, nil
	}
	l.holdRun, l.holdAction = "", ""
	s, err := decodeStored(run)
	if err != nil {
		return Turn{}, err
	}
	history := s.Messages[:s.TurnStart]
	c := s.Ctx
	c.Messages = s.Messages[s.TurnStart:]
	run.State, run.AwaitingActionID = brabo.RunWorking, ""
	turn, err := l.apply(ctx, run, history, toolloop.Resume(ctx, l.loop(history), c, settled))
	if err == nil && l.OnTurn != nil {
		l.OnTurn(turn)
	}
	return turn, err
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
