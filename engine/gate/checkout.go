package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/internal/gitwork"
)

// WorktreeRel is where a gate area checks out a task's work when no dev
// agent holds it, relative to the scope root (slash form):
// <devagent.WorktreesDir>/gate-<task id>, detached at the tip of the
// task's branch. The path depends on the task alone, so a later area on
// the task, and an area resumed after a restart, find the same folder.
func WorktreeRel(taskID string) string { return devagent.WorktreesDir + "/gate-" + taskID }

// checkout is the folder an area's sub-agents act in: a checkout of the
// task's work inside the scope root.
type checkout struct {
	gitwork.Folder
	// own is true for the gate's own worktree (WorktreeRel), which the
	// area removes when it completes; false for the dev agent's worktree.
	own bool
}

// scopeRoot is the project's scope root, where every action of the
// sub-agents is scoped and permissions.json is read.
func (l *Lead) scopeRoot(p *brabo.Project) (string, error) {
	if l.Scoper == nil {
		return "", errors.New("the QA lead has no scope configured, so it cannot find the project's folder")
	}
	sc, err := l.Scoper.ScopeRoot(p)
	if err != nil {
		return "", fmt.Errorf("the project's folder is not available: %w", err)
	}
	return sc.Root, nil
}

// openCheckout finds or makes the checkout of the task's work for an area.
//
// When the task's branch is checked out in a worktree of
// devagent.WorktreesDir (its dev agent holds it: working or waiting),
// that is the checkout: the sub-agents see the dev's work as it is,
// uncommitted changes included. Otherwise it is the gate's own worktree,
// WorktreeRel, detached at the branch's tip: made when missing; when it
// exists already (an earlier area on the task failed and kept it, or one
// waits), refresh moves a clean one to the tip, and refuses a dirty one —
// what an earlier area left there would be tested as if it were the
// task's work. An area resumed after a decision does not refresh: its
// sub-agent goes on where it was.
//
// stored is the checkout the area used before it suspended ("" for a new
// area, or one an earlier build suspended without recording it): it is
// kept while it still holds the task's work.
//
// The errors say why in a sentence fit for the task's blocked reason
// (the project is not a git repository with a commit, the task has no
// branch, the gate's worktree is dirty); all are of origin infra.
func (l *Lead) openCheckout(ctx context.Context, p *brabo.Project, taskID, stored string, refresh bool) (checkout, error) {
	root, tip, err := l.taskTip(ctx, p, taskID)
	if err != nil {
		return checkout{}, err
	}
	branch := devagent.TaskBranch(taskID)

	defer gitwork.Lock(root)()
	if err := gitwork.ExcludeBrabo(ctx, root); err != nil {
		return checkout{}, err
	}
	if _, err := gitwork.Git(ctx, root, root, "worktree", "prune"); err != nil {
		return checkout{}, err
	}
	trees, err := gitwork.List(ctx, root)
	if err != nil {
		return checkout{}, err
	}
	own := WorktreeRel(taskID)
	dir := filepath.Join(root, filepath.FromSlash(own))
	gateTree, haveGate := trees.At(dir)
	// An area that suspended in the gate's worktree goes on there.
	if stored == own && haveGate {
		return gateCheckout(root, own, branch), nil
	}
	// The dev agent's worktree, when it holds the task's branch.
	if t, ok := trees.OnBranch(branch); ok && gitwork.Within(filepath.Join(root, filepath.FromSlash(devagent.WorktreesDir)), t.Path) {
		if rel, ok := relInside(root, t.Path); ok {
			return checkout{Folder: gitwork.Folder{Root: root, Rel: rel,
				Where: "the dev agent's git worktree of the task (on branch " + branch + ")"}}, nil
		}
	}
	if haveGate {
		if !refresh {
			return gateCheckout(root, own, branch), nil
		}
		status, err := gitwork.Git(ctx, root, dir, "status", "--porcelain")
		if err != nil {
			return checkout{}, fmt.Errorf("reading the gate's worktree %s: %w", own, err)
		}
		if status != "" {
			return checkout{}, fmt.Errorf("the gate's worktree %s holds changes an earlier area left (%s); "+
				"look at them, then remove it (git worktree remove --force %s) and run the gate again", own, firstLine(status), own)
		}
		if gateTree.Head != tip {
			if _, err := gitwork.Git(ctx, root, dir, "checkout", "--quiet", "--detach", tip); err != nil {
				return checkout{}, fmt.Errorf("moving the gate's worktree %s to the tip of %s: %w", own, branch, err)
			}
		}
		return gateCheckout(root, own, branch), nil
	}
	if _, err := os.Stat(dir); err == nil {
		return checkout{}, fmt.Errorf("%s exists but is not a worktree of the project's repository: move it away", dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return checkout{}, fmt.Errorf("making the worktrees folder: %w", err)
	}
	if _, err := gitwork.Git(ctx, root, root, "worktree", "add", "--quiet", "--detach", dir, branch); err != nil {
		return checkout{}, fmt.Errorf("checking out task %s's branch for the gate: %w", taskID, err)
	}
	return gateCheckout(root, own, branch), nil
}

// Examinable says, before an area starts, why it could not examine the
// task's work: the project folder is not the top of a git repository with
// a commit, or the task has no branch (no dev agent has worked on it). It
// is nil when an area can check the branch out; the trigger refuses the
// others at once instead of blocking the task in the background.
func (l *Lead) Examinable(ctx context.Context, p *brabo.Project, taskID string) error {
	_, _, err := l.taskTip(ctx, p, taskID)
	return err
}

// taskTip finds the project's repository and the tip of the task's branch.
func (l *Lead) taskTip(ctx context.Context, p *brabo.Project, taskID string) (root, tip string, err error) {
	if root, err = l.scopeRoot(p); err != nil {
		return "", "", err
	}
	branch := devagent.TaskBranch(taskID)
	top, err := gitwork.Git(ctx, root, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", "", fmt.Errorf("the project folder is not a git repository, so there is no checkout of task %s's work to examine: %w", taskID, err)
	}
	if !gitwork.SamePath(top, root) {
		return "", "", fmt.Errorf("the project folder %s is inside the git repository %s, not its top", root, top)
	}
	if _, err := gitwork.Git(ctx, root, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return "", "", errors.New("the project's git repository has no commit yet: there is no task branch to examine")
	}
	if tip, err = gitwork.Git(ctx, root, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}"); err != nil {
		return "", "", fmt.Errorf("task %s has no branch %s: no dev agent has worked on it, so there is no work to examine", taskID, branch)
	}
	return root, tip, nil
}

func gateCheckout(root, rel, branch string) checkout {
	return checkout{own: true, Folder: gitwork.Folder{Root: root, Rel: rel,
		Where: "a checkout of the task's branch " + branch + " (detached at its tip)"}}
}

// close removes the gate's own worktree once its area completed: the
// verdicts are the area's result, and the branch stays. The dev agent's
// worktree is the dev's, and stays.
func (c checkout) close(ctx context.Context) error {
	if !c.own || c.Root == "" {
		return nil
	}
	defer gitwork.Lock(c.Root)()
	trees, err := gitwork.List(ctx, c.Root)
	if err != nil {
		return err
	}
	t, ok := trees.At(c.Dir())
	if !ok {
		return nil
	}
	if _, err := gitwork.Git(ctx, c.Root, c.Root, "worktree", "remove", "--force", t.Path); err != nil {
		return fmt.Errorf("removing the gate's worktree %s: %w", c.Rel, err)
	}
	return nil
}

// relInside is p relative to root, slash form, comparing resolved paths
// (git prints resolved paths), when p lies inside root.
func relInside(root, p string) (string, bool) {
	if !gitwork.Within(root, p) {
		return "", false
	}
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false
	}
	q, err := filepath.EvalSymlinks(p)
	if err != nil {
		q = filepath.Clean(p)
	}
	rel, err := filepath.Rel(r, q)
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i] + ", …"
		}
	}
	return s
}
