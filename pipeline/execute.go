package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo"
)

// execute runs a claimed action (status from: approved or auto_approved)
// with the credential of member cred, then settles it. The caller has
// already won the claim, so this runs once per action. A git_merge without
// its PR loaded fails: the caller loads it where it checked the merge.
func (s *Service) execute(ctx context.Context, a *brabo.ProposedAction, p *brabo.Project, cred *brabo.Member, from brabo.ActionStatus, pr *brabo.PullRequest) (*brabo.ProposedAction, error) {
	if apply := s.storeApply(ctx, a, cred); apply != nil {
		// A change of brabo's own state: applied in the settling
		// transaction (apply.go).
		return s.settleWith(ctx, a, from, &brabo.Result{}, pr, from != brabo.StatusAutoApproved, func(tx brabo.Tx, res *brabo.Result) error {
			if err := apply(tx, res); err != nil {
				return err
			}
			if cred != nil {
				if res.Detail == nil {
					res.Detail = map[string]string{}
				}
				res.Detail["executedAs"] = cred.ID
			}
			if res.Error != "" && res.ExitCode == 0 {
				res.ExitCode = 1 // a failed action never reports success
			}
			return nil
		})
	}
	var res *brabo.Result
	var err error
	if scope, serr := s.ScopeRoot(p); serr != nil {
		err = fmt.Errorf("scope: %w", serr)
	} else if missing := folderMissing(a.Type, scope.Root); missing != nil {
		res = missing
	} else if moved := s.recheckApproved(ctx, a, from); moved != nil {
		res = moved // nothing runs (revision.go)
	} else {
		allowed := s.approvedChange(ctx, a, scope.Root, cred, from)
		if a.Type == brabo.WriteFile && allowed(filepath.Join(scope.Root, a.Payload.Path)) {
			// Known before it runs: a concurrent action's check must not
			// take this approved write for its own change.
			s.own.note(filepath.Join(scope.Root, a.Payload.Path), []byte(a.Payload.Content))
		}
		sn := takeSnapshot(scope.Root)
		res, err = s.runExecutor(ctx, brabo.ExecRequest{Action: a, Project: p, Root: scope.Root, Credential: cred, PR: pr,
			MayWriteProtected: allowed, Started: s.running(ctx, a), Bound: boundOf(a)})
		if res == nil {
			res = &brabo.Result{}
		}
		s.checkIntegrity(sn, res, allowed)
	}
	if res == nil {
		res = &brabo.Result{}
	}
	if err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	return s.settle(ctx, a, from, res, pr, from != brabo.StatusAutoApproved)
}

// folderMissing is the failed result of an action that works in the
// project folder when that folder is gone (deleted, moved, an unmounted
// disk): nothing runs, and the result says so with a stable code and no
// exit code. nil when the folder is there, or the type needs none.
func folderMissing(t brabo.ActionType, root string) *brabo.Result {
	if !t.Traits().NeedsFolder {
		return nil
	}
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &brabo.Result{Code: brabo.CodeProjectFolderMissing,
			Error: fmt.Sprintf("the project folder %s does not exist (deleted or moved?); nothing ran. Put the folder back, or create the project again where it is now", root)}
	case err == nil && !fi.IsDir():
		return &brabo.Result{Code: brabo.CodeProjectFolderMissing,
			Error: fmt.Sprintf("the project folder %s is not a directory any more; nothing ran", root)}
	}
	return nil
}

// runExecutor calls the executor, turning a panic into a failed result: an
// executor bug must never leave an action claimed and unsettled.
func (s *Service) runExecutor(ctx context.Context, req brabo.ExecRequest) (res *brabo.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("the executor failed: %v", r)
		}
	}()
	if s.Executor == nil {
		return nil, errors.New("no executor is configured")
	}
	if err := checkResolvedRoot(req.Root); err != nil {
		return nil, err
	}
	release, err := s.acquire(ctx, req.Action)
	if err != nil {
		return nil, err
	}
	defer release()
	switch req.Action.Type.Traits().Route {
	case brabo.RouteContainer:
		return s.runContainer(ctx, req) // the engine, with the lifecycle row (containers.go)
	case brabo.RouteHandoff:
		return s.runHandoff(ctx, req) // the seed, then the start (containerhandoff.go)
	}
	if req.Action.Type == brabo.Terminal && req.Action.Decision.Container != "" {
		return s.runInContainer(ctx, req) // there or nowhere (containerfloor.go)
	}
	return s.Executor.Execute(ctx, req)
}

// settle records the outcome: the status, action.executed or action.failed,
// the PR bookkeeping, and task.action_settled for the proposing actor, in
// one transaction.
//
// tell says whether the proposer is told through the outbox: always, but
// for an auto-approval whose proposer gets the result in the same call.
func (s *Service) settle(ctx context.Context, a *brabo.ProposedAction, from brabo.ActionStatus, res *brabo.Result, pr *brabo.PullRequest, tell bool) (*brabo.ProposedAction, error) {
	return s.settleWith(ctx, a, from, res, pr, tell, nil)
}

// settleWith is settle with apply run first in the same transaction: the
// execution of a type whose effect is a change of brabo's own state
// (apply.go). apply either writes its change, or sets res.Error (a named
// failure) and writes nothing; an error it returns undoes the transaction
// and leaves the action claimed (Recover fails it).
func (s *Service) settleWith(ctx context.Context, a *brabo.ProposedAction, from brabo.ActionStatus, res *brabo.Result, pr *brabo.PullRequest, tell bool,
	apply func(tx brabo.Tx, res *brabo.Result) error) (*brabo.ProposedAction, error) {
	var status brabo.ActionStatus
	now := s.now()
	// Settling must survive the caller going away: the command already ran.
	ctx = context.WithoutCancel(ctx)
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		if apply != nil {
			*res = brabo.Result{}
			if err := apply(tx, res); err != nil {
				return err
			}
		}
		var event string
		status, event = brabo.StatusExecuted, brabo.EventActionExecuted
		if res.Error != "" {
			status, event = brabo.StatusFailed, brabo.EventActionFailed
		}
		// The bookkeeping first: it adds to the result (the new PR's
		// number), which the transition then stores.
		if status == brabo.StatusExecuted {
			if err := s.afterSuccess(ctx, tx, a, res, pr); err != nil {
				return err
			}
			if from == brabo.StatusApproved {
				// A maintainer-approved write of permissions.json is trusted.
				if err := s.trustWrite(ctx, tx, a); err != nil {
					return err
				}
			}
		}
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{from},
			brabo.ActionUpdate{Status: status, Result: res, SettledAt: now})
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("action %s left %s while it ran", a.ID, from)
		}
		if err := tx.FinishRunning(ctx, a.ID); err != nil {
			return err
		}
		if err := tx.AppendEvent(ctx, &brabo.Event{
			ProjectID: a.ProjectID, Type: event, ActorID: brabo.SystemActor, ActionID: a.ID,
			Payload: mustJSON(settledPayload(res)), CreatedAt: now,
		}); err != nil {
			return err
		}
		if files := res.Detail["restored"]; files != "" {
			if err := tx.AppendEvent(ctx, &brabo.Event{
				ProjectID: a.ProjectID, Type: brabo.EventProtectedRestored, ActorID: brabo.SystemActor, ActionID: a.ID,
				Payload: mustJSON(map[string]any{"files": strings.Split(files, ", "), "notRestored": res.Detail["notRestored"]}), CreatedAt: now,
			}); err != nil {
				return err
			}
		}
		if err := appendNetworkRefused(ctx, tx, a, res, now); err != nil {
			return err
		}
		if !tell {
			return nil
		}
		return s.enqueueSettled(ctx, tx, a, status, res, "")
	})
	if err != nil {
		return nil, err
	}
	a.Status, a.Result, a.SettledAt = status, res, now
	s.log().Info("action settled", "action", a.ID, "status", status, "exitCode", res.ExitCode, "error", res.Error)
	return a, nil
}

// settledPayload is what action.executed and action.failed record: the
// exit code (none for an action that never ran, with its code instead),
// the error and the detail.
func settledPayload(res *brabo.Result) map[string]any {
	out := map[string]any{"error": res.Error, "detail": res.Detail}
	if res.Ran() {
		out["exitCode"] = res.ExitCode
	} else {
		out["code"] = res.Code
	}
	return out
}

// afterSuccess does the bookkeeping an executed action implies: a PR row
// for pr_open, the merged mark (once) for git_merge.
func (s *Service) afterSuccess(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, res *brabo.Result, pr *brabo.PullRequest) error {
	switch a.Type {
	case brabo.OpenAdrPr, brabo.OpenInfraPr:
		// The executor made the head branch with the document and pushed
		// it; the PR is recorded here, like pr_open's.
		row := &brabo.PullRequest{ProjectID: a.ProjectID, Title: res.Detail["title"], Head: res.Detail["head"],
			Base: res.Detail["base"], TaskID: a.Payload.TaskID, CreatedAt: s.now()}
		if row.Head == "" || row.Base == "" {
			return fmt.Errorf("%s %s: the executor reported no head or base", a.Type, a.ID)
		}
		if err := tx.CreatePR(ctx, row); err != nil {
			return err
		}
		res.Detail["pr"] = fmt.Sprint(row.Number)
	case brabo.PrOpen:
		row := &brabo.PullRequest{ProjectID: a.ProjectID, Title: a.Payload.Title, Head: a.Payload.Branch,
			Base: a.Payload.Base, TaskID: a.Payload.TaskID, CreatedAt: s.now()}
		if err := tx.CreatePR(ctx, row); err != nil {
			return err
		}
		if res.Detail == nil {
			res.Detail = map[string]string{}
		}
		res.Detail["pr"] = fmt.Sprint(row.Number)
		if err := s.taskInReview(ctx, tx, a, row.Number); err != nil {
			return err
		}
		return tx.Enqueue(ctx, &brabo.OutboxMessage{ProjectID: a.ProjectID, Topic: brabo.TopicPRSettled,
			ActorKey: actorKey(a), ActionID: a.ID, Payload: mustJSON(map[string]any{"actionId": a.ID, "opened": true, "pr": row.Number})})
	case brabo.GitMerge:
		merged, err := tx.MarkPRMerged(ctx, a.ProjectID, a.Payload.PR, a.ID)
		if err != nil {
			return err
		}
		// The task moves to done once: a repeated merge of the same PR
		// records nothing more, and neither does the merge of a second PR
		// of a task already done.
		if merged && pr != nil && pr.TaskID != "" {
			task, err := tx.Task(ctx, pr.TaskID)
			switch {
			case err == nil && task.ProjectID == a.ProjectID && task.Status == brabo.TaskDone:
				return nil
			case err == nil && task.ProjectID == a.ProjectID:
				task.Status, task.BlockedReason, task.BlockedOrigin, task.UpdatedAt = brabo.TaskDone, "", "", s.now()
				if err := tx.UpdateTask(ctx, task); err != nil {
					return err
				}
			case err != nil && !errors.Is(err, brabo.ErrNotFound):
				return err
			}
			return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventTaskStatusChanged,
				ActorID: brabo.SystemActor, ActionID: a.ID,
				Payload: mustJSON(map[string]any{"taskId": pr.TaskID, "status": "done", "pr": pr.Number})})
		}
	}
	return nil
}

// taskInReview moves the task a pr_open is for to in_review, with its
// backlog.task_status_changed naming the PR, in the transaction that
// records the PR: the task is done only when the merge executes, once
// (DESIGN §6.4). A task already done (its work landed by another PR) or
// in review stays as it is, and records nothing.
func (s *Service) taskInReview(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, pr int64) error {
	if a.Payload.TaskID == "" {
		return nil
	}
	task, err := tx.Task(ctx, a.Payload.TaskID)
	if errors.Is(err, brabo.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if task.ProjectID != a.ProjectID || task.Status == brabo.TaskDone || task.Status == brabo.TaskInReview {
		return nil
	}
	task.Status, task.BlockedReason, task.BlockedOrigin, task.UpdatedAt = brabo.TaskInReview, "", "", s.now()
	if err := tx.UpdateTask(ctx, task); err != nil {
		return err
	}
	return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventTaskStatusChanged,
		ActorID: brabo.SystemActor, ActionID: a.ID, CreatedAt: task.UpdatedAt,
		Payload: mustJSON(map[string]any{"taskId": task.ID, "status": brabo.TaskInReview, "pr": pr})})
}

func actorKey(a *brabo.ProposedAction) string { return a.ActorKind + ":" + a.ActorID }

func (s *Service) enqueueSettled(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction, status brabo.ActionStatus, res *brabo.Result, reason string) error {
	return tx.Enqueue(ctx, &brabo.OutboxMessage{
		ProjectID: a.ProjectID, Topic: brabo.TopicActionSettled, ActorKey: actorKey(a), ActionID: a.ID,
		Payload: mustJSON(brabo.Settled{ActionID: a.ID, Status: status, Result: res, Reason: reason}),
	})
}

// Recover settles actions a previous process claimed and never finished
// (it stopped while they ran): first RecoverDead (the actions a dead
// instance's record names, whose left-over processes it stops), then every
// other claimed action that no live instance runs: they become failed, with
// a reason that says the command may have run partly, and their agents are
// told. Call it at start-up of a single-instance store only (SQLite): with
// several instances on one database, another instance may have claimed an
// action it has not recorded as running yet; call RecoverDead there.
func (s *Service) Recover(ctx context.Context) (int, error) {
	n, err := s.RecoverDead(ctx)
	if err != nil {
		return n, err
	}
	var stuck []*brabo.ProposedAction
	live := map[string]bool{}
	err = s.Store.View(ctx, func(tx brabo.Tx) error {
		for _, st := range []brabo.ActionStatus{brabo.StatusApproved, brabo.StatusAutoApproved} {
			list, err := tx.Actions(ctx, brabo.ActionFilter{Status: st, Limit: 1000})
			if err != nil {
				return err
			}
			stuck = append(stuck, list...)
		}
		runs, err := tx.RunningActions(ctx)
		for _, r := range runs {
			live[r.ActionID] = true // RecoverDead left it: a live instance runs it
		}
		return err
	})
	if err != nil {
		return n, err
	}
	for _, a := range stuck {
		if live[a.ID] || a.External() {
			continue // an external action was never brabo's to run: it waits for its agent's report
		}
		res := &brabo.Result{ExitCode: -1, Error: "interrupted: brabo stopped while this action ran; it may have run partly"}
		// The proposer of an interrupted auto-approval never got its answer:
		// tell it too.
		if _, err := s.settle(ctx, a, a.Status, res, nil, true); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
