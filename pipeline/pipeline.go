// Package pipeline is the action service: every action an agent (or a
// human) proposes goes through Propose; humans decide pending ones with
// Approve, Deny and ApproveAlways (DESIGN §6).
//
// Each step is one store transaction; execution is exactly-once because the
// transition that claims an action is a conditional update, never a lock in
// memory.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// Service is the action pipeline.
type Service struct {
	Store    brabo.Store
	Executor brabo.Executor
	// WorkspacesRoot holds the project folders of container and runner
	// projects (<root>/<workspace_dir_name>).
	WorkspacesRoot string
	// Protect names the home folder commands run with and brabo's own
	// paths (data folder, token files, binary), for the protected-path
	// rule (policy.ProtectedTable).
	Protect policy.Protect
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	Log *slog.Logger
	// MaxPending is how many pending actions one agent may have
	// (DefaultMaxPending when 0); past it a proposal that would wait is
	// refused with too_many_pending.
	MaxPending int
	// Containers runs projects' containers (container_start, _stop,
	// _remove); nil fails those actions with a sentence that says how to
	// configure one. ContainerImage is the image a container_start that
	// names none runs; ContainerCeiling the most a container may get
	// (DefaultContainerCeiling for a zero field).
	Containers       brabo.ContainerEngine
	ContainerImage   string
	ContainerCeiling brabo.Resources
	// MaxRunning is how many commands one project runs at once
	// (DefaultMaxRunning when 0); the next ones wait their turn.
	MaxRunning int
	// Repo reads the project's repository for the cards of git actions
	// (preview.go); nil shows them without commits or stat.
	Repo brabo.RepoReader
	// Notifier, when set, is told when an action starts waiting and when
	// it is decided (webhooks); it never blocks.
	Notifier brabo.Notifier

	// Processes, when set, makes this process an instance of the store
	// (processes.go): each action it executes is recorded as running,
	// with the process groups it starts, so that what a dead instance
	// left running is found, stopped and failed (RecoverDead). InstanceID
	// names this instance; InstanceLease (DefaultInstanceLease) is how
	// long its row holds unrenewed; StopGrace (DefaultStopGrace) is the
	// time between SIGTERM and SIGKILL for what a dead instance left.
	Processes     brabo.Processes
	InstanceID    string
	InstanceLease time.Duration
	StopGrace     time.Duration
	started       time.Time

	// Unsandboxed, when set, says terminal commands and the local git
	// actions run outside the sandbox (sandbox.go: UnsandboxedMissing,
	// UnsandboxedChosen): every such decision's reason says it, and
	// unless UnsandboxedChosen (the operator's --no-sandbox) none is
	// auto-approved.
	Unsandboxed       string
	UnsandboxedChosen bool

	fileLocks  sync.Map     // permissions.json path → *sync.Mutex
	diskCache  sync.Map     // permissions.json path → *diskFile, its last read (trust.go)
	trustCache trustedRules // trusted contents compiled, by hash
	cmdSlots   slots        // each project's running commands (guards.go)
	own        ownWrites    // protected contents brabo itself wrote (integrity.go)
	cards      cardCache    // the cards of pending actions, by repository state (cardcache.go)
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// viewLatest is the proposal's facts read: on the store's writer where the
// store offers it (brabo.LatestViewer: SQLite, whose read connections start
// every read cold under load), else an ordinary View. Only that short read
// goes there: every write waits while it runs.
func (s *Service) viewLatest(ctx context.Context, fn func(brabo.Tx) error) error {
	if lv, ok := s.Store.(brabo.LatestViewer); ok {
		return lv.ViewLatest(ctx, fn)
	}
	return s.Store.View(ctx, fn)
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Actor is who calls the pipeline (brabo.Actor).
type Actor = brabo.Actor

// Error helpers: every refusal carries a stable code (DESIGN §6.3).
func invalid(format string, a ...any) error {
	return brabo.Errorf(brabo.CodeInvalidAction, format, a...)
}

func forbidden(format string, a ...any) error {
	return brabo.Errorf(brabo.CodeForbiddenRole, format, a...)
}

// ScopeRoot returns the absolute folder a project's actions are confined
// to, and the scope identity events carry. The root is revalidated
// lexically on every use, so a tampered row never yields a scope of /.
func (s *Service) ScopeRoot(p *brabo.Project) (policy.Scope, error) {
	sc := policy.Scope{Mode: p.Mode, ID: p.WorkspaceDir}
	switch p.Mode {
	case brabo.ModeLocal:
		sc.Root = p.Root
	case brabo.ModeContainer, brabo.ModeRunner:
		if s.WorkspacesRoot == "" {
			return sc, errors.New("no workspaces root is configured for container and runner projects")
		}
		if p.WorkspaceDir == "" || strings.ContainsAny(p.WorkspaceDir, `/\`) || p.WorkspaceDir == "." || p.WorkspaceDir == ".." {
			return sc, fmt.Errorf("the workspace folder name %q is not a plain name", p.WorkspaceDir)
		}
		sc.Root = filepath.Join(s.WorkspacesRoot, p.WorkspaceDir)
	default:
		return sc, fmt.Errorf("unknown execution mode %q", p.Mode)
	}
	if err := policy.CheckRoot(sc.Root); err != nil {
		return sc, err
	}
	return sc, nil
}

// ProposeRequest is an action an actor proposes (brabo.ProposeRequest).
type ProposeRequest = brabo.ProposeRequest

// Propose decides an action, records it with its created event in one
// transaction, and executes it at once when it is auto-approved: the
// returned action then carries the real result.
func (s *Service) Propose(ctx context.Context, req ProposeRequest) (*brabo.ProposedAction, error) {
	if err := req.Payload.Validate(req.Type); err != nil {
		return nil, err
	}
	if err := validateExecution(req); err != nil {
		return nil, err
	}
	if humanOnly(req.Type) && req.Actor.Agent != nil {
		return nil, brabo.Errorf(brabo.CodeHumanOnly, "%s is proposed by a human only (the containers page, or a member's token): agent %s may not propose it",
			req.Type, req.Actor.Agent.Name)
	}
	if req.Type != brabo.InstructionPatch {
		req.Payload.Previous = "" // only brabo fills it in, for an instruction_patch
	}
	var protected []string
	var (
		project   *brabo.Project
		owner     *brabo.Member
		principal string
		agentID   string
		facts     *brabo.ProposalFacts
		pr        *brabo.PullRequest
	)
	// The facts, on the store's writer where it offers that (viewLatest):
	// one short read every proposal makes.
	err := s.viewLatest(ctx, func(tx brabo.Tx) error {
		switch {
		case req.Actor.Agent != nil:
			agentID = req.Actor.Agent.ID
			principal = req.Actor.Agent.PrincipalID
		case req.Actor.Member != nil:
			principal = req.Actor.Member.ID
		default:
			return invalid("an action needs a proposing agent or member")
		}
		var err error
		// A nil facts.Trust is a project older than trust: its file is
		// trusted at this first use (judge).
		if facts, err = tx.ProposalFacts(ctx, req.ProjectID, principal, agentID, req.Type); err != nil {
			return err
		}
		project, owner = facts.Project, facts.Owner
		if req.Actor.Agent != nil && req.Actor.Agent.ProjectID != project.ID {
			return fmt.Errorf("agent %s: %w", req.Actor.Agent.ID, brabo.ErrNotFound)
		}
		if req.Actor.Member != nil && facts.Role == "" {
			return fmt.Errorf("project %s: %w", project.ID, brabo.ErrNotFound)
		}
		return nil
	})
	if err == nil && (req.Type == brabo.GitMerge || req.Type == brabo.InstructionPatch) {
		// What these types read besides lists rows (a PR's merge
		// proposals, the project's agents): a read connection, never the
		// writer, which every write waits for.
		err = s.Store.View(ctx, func(tx brabo.Tx) error {
			var err error
			if req.Type == brabo.InstructionPatch {
				// The card shows the difference from the text it replaces,
				// and execution refuses instructions that changed since.
				return instructionTarget(ctx, tx, project.ID, &req.Payload)
			}
			if pr, err = s.checkMerge(ctx, tx, project.ID, req.Payload.PR, ""); err != nil {
				return err
			}
			req.Payload.TargetBranch = pr.Base
			protected, err = protectedList(ctx, tx, project.ID)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	if err := s.refuseContainer(ctx, req, project); err != nil {
		return nil, err // before anything is queued (containerfloor.go)
	}
	if scope, err := s.ScopeRoot(project); req.Type == brabo.WriteFile && err == nil {
		if err := checkPermissionsWrite(scope.Root, req.Payload); err != nil {
			return nil, err
		}
	}
	dd, err := s.decide(ctx, req.Type, req.Payload, situation{
		facts: facts, agentID: agentID, protected: protected, record: true,
		external: req.Execution != nil && req.Execution.Mode == brabo.ExecutionExternal,
	})
	if err != nil {
		return nil, err
	}
	d, st := dd.Decision, dd.Trust
	a := &brabo.ProposedAction{
		ID: brabo.NewID("act"), ProjectID: project.ID, Type: req.Type, Payload: req.Payload,
		ActorID: req.Actor.ID(), ActorKind: req.Actor.Kind(), PrincipalID: principal,
		Reason: d.Reason, Decision: d, CreatedAt: s.now(), Execution: req.Execution,
	}
	// The card: what the human approves is the change, not its name.
	a.Preview = s.preview(ctx, a, project, pr, false)
	switch d.Policy {
	case brabo.AutoApprove:
		a.Status = brabo.StatusAutoApproved
	case brabo.Deny:
		a.Status = brabo.StatusDenied
		a.SettledAt = a.CreatedAt
	default:
		a.Status = brabo.StatusPending
	}
	err = s.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := s.checkPending(ctx, tx, a, req.Actor.Agent); err != nil {
			return err
		}
		if err := tx.InsertAction(ctx, a); err != nil {
			if errors.Is(err, brabo.ErrConflict) && a.Type == brabo.GitMerge {
				return brabo.Errorf(brabo.CodeMergeAlreadyProposed,
					"pull request #%d already has a live merge proposal", a.Payload.PR)
			}
			return err
		}
		if a.Status == brabo.StatusAutoApproved {
			if err := s.claimRun(ctx, tx, a); err != nil {
				return err
			}
		}
		created := map[string]any{"status": a.Status, "reason": a.Reason, "scopeRoot": d.ScopeRoot, "type": a.Type}
		if a.Payload.TaskID != "" {
			created["taskId"] = a.Payload.TaskID // the task's session log follows the action from here
		}
		if st != nil {
			// Which version of permissions.json decided, and the one on
			// disk it held back, if any.
			created["permissionsHash"] = st.DecidedWith
			if st.Held() {
				created["permissionsHeld"] = st.DiskHash
			}
		}
		if a.Execution != nil {
			created["execution"] = a.Execution // who will run it: the log says brabo did not
		}
		return tx.AppendEvent(ctx, &brabo.Event{
			ProjectID: a.ProjectID, Type: brabo.EventActionCreated, ActorID: a.ActorID, ActionID: a.ID,
			Payload: mustJSON(created), CreatedAt: a.CreatedAt,
		})
	})
	if err != nil {
		return nil, err
	}
	s.log().Info("action proposed", "action", a.ID, "project", a.ProjectID, "type", a.Type, "status", a.Status, "reason", a.Reason)
	if a.Status == brabo.StatusPending {
		s.notify(brabo.NoticeWaiting, a)
	}
	if a.Status != brabo.StatusAutoApproved || a.External() {
		return a, nil // an external action is its agent's to run
	}
	// Auto-approved actions execute with the workspace owner's credential:
	// nobody decided, and whoever funds the account funds the agents.
	return s.execute(ctx, a, project, owner, brabo.StatusAutoApproved, pr)
}

// notify tells the Notifier, if any, what happened to a; it hands over a
// copy and never blocks.
func (s *Service) notify(kind brabo.NoticeKind, a *brabo.ProposedAction) {
	if s.Notifier == nil || a == nil {
		return
	}
	c := *a
	s.Notifier.Notify(brabo.Notice{Kind: kind, Action: &c})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checkMerge refuses a git_merge of a PR that an earlier execution merged
// (pr_already_merged) or that has a live proposal other than except
// (merge_already_proposed); a denied or failed one does not block.
func (s *Service) checkMerge(ctx context.Context, tx brabo.Tx, projectID string, number int64, except string) (*brabo.PullRequest, error) {
	pr, err := tx.PR(ctx, projectID, number)
	if err != nil {
		if errors.Is(err, brabo.ErrNotFound) {
			return nil, invalid("pull request #%d does not exist", number)
		}
		return nil, err
	}
	if pr.State == brabo.PRMerged {
		return nil, brabo.Errorf(brabo.CodePRAlreadyMerged,
			"pull request #%d was already merged by action %s", number, pr.MergedBy)
	}
	if except != "" {
		return pr, nil
	}
	live, err := tx.MergeActions(ctx, projectID, number)
	if err != nil {
		return nil, err
	}
	for _, m := range live {
		switch m.Status {
		case brabo.StatusPending, brabo.StatusApproved, brabo.StatusAutoApproved:
			return nil, brabo.Errorf(brabo.CodeMergeAlreadyProposed,
				"pull request #%d already has a live merge proposal (%s, %s)", number, m.ID, m.Status)
		}
	}
	return pr, nil
}
