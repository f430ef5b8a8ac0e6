package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/brabo-dev/brabo"
)

// An approval binds to what was shown (docs/api.md, "Approving what was
// shown"): each card has a revision naming what will run (Preview.Bound);
// the card is computed again when shown and when approved; an approve
// naming another revision, or none, is card_changed and approves nothing;
// the execution runs exactly the bound parts, and fails
// changed_since_approved when they moved after the approval.

// bindCommit binds a git_commit's card: when the executor can stage
// (brabo.Stager) and stage is set, the commit it goes onto ("head"), the
// tree its own staging produces and the paths that tree changes. Without
// a stager (or at the proposal) the paths are the reader's
// (WorktreeStat), which the execution does not check.
func (s *Service) bindCommit(ctx context.Context, a *brabo.ProposedAction, p *brabo.Project, root string, g *gitFacts, stage bool) {
	if st, ok := s.Executor.(brabo.Stager); ok && stage {
		t, err := st.StageTree(ctx, brabo.ExecRequest{Action: a, Project: p, Root: root})
		if err != nil {
			// Fails closed: a tree no staging produces binds nothing the
			// execution could match, so the commit never runs unseen.
			g.pv.Notes = append(g.pv.Notes, "the tree to commit could not be staged: "+err.Error())
			g.bind("tree", "unstaged: "+err.Error())
			return
		}
		g.bind("head", orNone(t.Head))
		g.bind("tree", t.Tree)
		g.bind("paths", strings.Join(t.Paths, "\n"))
		return
	}
	// The reader's paths bind the card's revision (an approval of a card
	// whose files changed is card_changed), not the execution: the
	// reader's view of a repository may differ from git's (a linked
	// worktree it cannot open), and only the executor's own staging is
	// what the commit records.
	if g.pv.Stat != nil {
		var ps []string
		for _, f := range g.pv.Stat.Files {
			ps = append(ps, f.Path)
		}
		g.bind("paths", strings.Join(ps, "\n"))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// bindRest adds the parts of the types gitFacts does not bind: a
// write_file's path, content and the file it replaces; a terminal
// command's text, folder and the trusted permissions.json version; for
// every other type without a part, its payload.
func (s *Service) bindRest(ctx context.Context, a *brabo.ProposedAction, p *brabo.Project, pv *brabo.Preview) {
	bind := func(name, value string) { pv.Bound = append(pv.Bound, brabo.RevisionPart{Name: name, Value: value}) }
	switch a.Type {
	case brabo.WriteFile:
		bind("path", a.Payload.Path)
		bind("content", brabo.ContentHash([]byte(a.Payload.Content)))
		bind("file", s.fileState(p, a.Payload.Path))
		return
	case brabo.Terminal:
		bind("command", a.Payload.Command)
		bind("cwd", a.Payload.Cwd)
		trusted := "none"
		s.Store.View(ctx, func(tx brabo.Tx) error {
			if t, err := tx.PermissionsTrust(ctx, a.ProjectID); err == nil && t != nil {
				trusted = t.Hash
			}
			return nil
		})
		bind("permissions", trusted)
		return
	}
	if len(pv.Bound) == 0 {
		b, _ := json.Marshal(a.Payload)
		bind("payload", brabo.ContentHash(b))
	}
}

// fileState is the file part of a write_file: brabo.FileAbsent, the
// ContentHash of the regular file at the path, or "other" for what is not
// a regular file read beneath the root (a symlink on the path, a folder).
// The executor computes the same before it writes.
func (s *Service) fileState(p *brabo.Project, target string) string {
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return "other"
	}
	root := scope.Root
	rel := target
	if path.IsAbs(rel) {
		if !within(path.Clean(rel), root) {
			return "other"
		}
		rel = strings.TrimPrefix(strings.TrimPrefix(path.Clean(rel), strings.TrimSuffix(root, "/")), "/")
	}
	data, exists, err := readScoped(root, path.Clean(rel), 1<<30)
	switch {
	case err != nil:
		return "other"
	case !exists:
		return brabo.FileAbsent
	}
	return brabo.ContentHash(data)
}

// bindsInExecutor are the types whose executor checks the bound parts
// itself, right where it runs (ExecRequest.Bound); the others are checked
// again by the pipeline just before they run (recheck).
func bindsInExecutor(t brabo.ActionType) bool {
	return t == brabo.GitPush || t == brabo.GitCommit || t == brabo.WriteFile
}

// CardNow returns a copy of a with its card as it is to be shown: a
// pending action's computed now (from the cache while the repository is
// as it was), a decided one's as stored. Revision is set from the card.
func (s *Service) CardNow(ctx context.Context, a *brabo.ProposedAction) *brabo.ProposedAction {
	c := *a
	if a.Status == brabo.StatusPending && !a.External() {
		if pv, err := s.liveCard(ctx, a, true); err == nil {
			c.Preview = pv
		}
	}
	if c.Preview != nil {
		c.Revision = c.Preview.Revision
	}
	return &c
}

// liveCard computes a pending action's card now; cached says whether a
// card computed for the same repository state may be reused (showing
// does, approving never does).
func (s *Service) liveCard(ctx context.Context, a *brabo.ProposedAction, cached bool) (*brabo.Preview, error) {
	var p *brabo.Project
	var pr *brabo.PullRequest
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if p, err = tx.Project(ctx, a.ProjectID); err != nil {
			return err
		}
		if a.Type == brabo.GitMerge {
			if pr, err = tx.PR(ctx, a.ProjectID, a.Payload.PR); errors.Is(err, brabo.ErrNotFound) {
				pr, err = nil, nil
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	key := ""
	if cached {
		key = s.cardKey(a, p, pr)
		if pv := s.cards.get(a.ID, key); pv != nil {
			return pv, nil
		}
	}
	pv := s.preview(ctx, a, p, pr, true)
	if key != "" {
		s.cards.put(a.ID, key, pv)
	}
	return pv, nil
}

// checkRevision refuses an approval of a pending action whose revision is
// not its card's now (card_changed), records the refusal, and stores the
// new card: the action stays pending and its agent keeps waiting. It
// returns the card the approval binds.
func (s *Service) checkRevision(ctx context.Context, a *brabo.ProposedAction, m *brabo.Member, revision string) (*brabo.Preview, error) {
	pv := a.Preview
	if !a.External() || pv == nil {
		// The agent runs an external action itself: its card is the one
		// stored; brabo's own are computed afresh, never from the cache.
		var err error
		if pv, err = s.liveCard(ctx, a, false); err != nil {
			return nil, err
		}
	}
	if revision == pv.Revision {
		return pv, nil
	}
	moved := brabo.RevisionMoved(revision, pv.Bound)
	msg := fmt.Sprintf("the card of action %s changed since it was shown (%s moved): nothing was approved; the action waits with its new card, revision %s: look at it again and approve that",
		a.ID, strings.Join(moved, ", "), pv.Revision)
	if revision == "" {
		msg = fmt.Sprintf("an approval names the revision of the card it approves (the revision field of GET /v1/actions/%s): nothing was approved; the card now is revision %s", a.ID, pv.Revision)
	}
	now := s.now()
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.TransitionAction(ctx, a.ID, []brabo.ActionStatus{brabo.StatusPending},
			brabo.ActionUpdate{Status: brabo.StatusPending, Preview: pv})
		if err != nil || !ok {
			return err // decided meanwhile: the claim that follows says how
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: a.ProjectID, Type: brabo.EventCardChanged,
			ActorID: m.ID, ActionID: a.ID, CreatedAt: now,
			Payload: mustJSON(map[string]any{"sent": revision, "revision": pv.Revision, "moved": moved})})
	})
	if err != nil {
		return nil, err
	}
	s.cards.put(a.ID, "", nil)
	return nil, brabo.Errorf(brabo.CodeCardChanged, "%s", msg)
}

// recheck computes an approved action's card again just before it runs,
// for the types whose executor does not check the bound parts itself: a
// result with changed_since_approved when its revision moved since the
// approval, nil when it may run.
func (s *Service) recheck(ctx context.Context, a *brabo.ProposedAction) *brabo.Result {
	if a.Preview == nil || a.Preview.Revision == "" || bindsInExecutor(a.Type) || a.External() {
		return nil
	}
	pv, err := s.liveCard(ctx, a, false)
	if err != nil || pv.Revision == a.Preview.Revision {
		return nil
	}
	// The trusted permissions.json is bound at the approval; an Always
	// allow moves it itself, in the approving transaction, and what the
	// command does is the same.
	moved := slices.DeleteFunc(brabo.RevisionMoved(a.Preview.Revision, pv.Bound), func(n string) bool { return n == "permissions" })
	if len(moved) == 0 {
		return nil
	}
	return &brabo.Result{Code: brabo.CodeChangedSinceApproved,
		Error: fmt.Sprintf("%s changed since it was approved (%s moved): nothing ran", a.Type, strings.Join(moved, ", "))}
}

// recheckApproved is recheck for an action a human approved; an
// auto-approved one runs what the pipeline computed at the proposal.
func (s *Service) recheckApproved(ctx context.Context, a *brabo.ProposedAction, from brabo.ActionStatus) *brabo.Result {
	if from != brabo.StatusApproved {
		return nil
	}
	return s.recheck(ctx, a)
}

// boundOf is what the execution of a runs exactly (ExecRequest.Bound):
// the parts of its card as approved, or as the proposal computed it for
// an auto-approval.
func boundOf(a *brabo.ProposedAction) map[string]string {
	if a.Preview == nil {
		return nil
	}
	return brabo.BoundParts(a.Preview.Bound)
}

// RevisionNow is the revision of the action's card as it is now ("" when
// it cannot be read): what an approver in brabo's own process (the demo's
// --approve) names, having the card in hand.
func (s *Service) RevisionNow(ctx context.Context, actionID string) string {
	a, err := s.Action(ctx, actionID)
	if err != nil {
		return ""
	}
	return s.CardNow(ctx, a).Revision
}
