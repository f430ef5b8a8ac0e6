package devagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo/engine/internal/gitwork"
)

// WorktreesDir is the folder, relative to the project's scope root (slash
// form), that holds the dev agents' git worktrees (and the QA gate's
// checkouts of task branches, gate-<task id>): brabo's own folder in the
// project.
//
// Why there: every pipeline action must stay inside the scope root (§5),
// so a worktree outside it (beside the project, in a temporary folder)
// would put every command the agent runs out of scope and ask a human
// each time. Inside .git (git's own default for nothing, but a tempting
// place) would be worse: a write_file with a ".git" element is refused by
// the executor and a terminal line writing under .git is a scope finding
// (policy's gitInternals), so the agent could not work at all. A plain
// folder of the scope root keeps the agent's commands in scope, so the
// seeded allow list auto-approves them exactly as in the project folder.
// brabo adds "/.brabo/" to the repository's info/exclude, so the main
// checkout does not see the worktrees as untracked files and a git_commit
// there (git add -A) never stages them as embedded repositories.
const WorktreesDir = ".brabo/worktrees"

// BranchPrefix starts the name of every task branch.
const BranchPrefix = "brabo/"

// TaskBranch is the branch a task is worked on: brabo/<task id>. It is
// created from BaseBranch (from HEAD when the repository has no
// BaseBranch) when an agent first claims the task, and report_done's
// pull request always names it.
func TaskBranch(taskID string) string { return BranchPrefix + taskID }

// WorktreeRel is where the agent's worktree lies, relative to the scope
// root (slash form): <WorktreesDir>/<agent id>. The path depends on the
// agent alone, so an agent restored after a restart, or resumed by another
// process, finds the very worktree it suspended in.
func WorktreeRel(agentID string) string { return WorktreesDir + "/" + agentID }

// worktree is where one agent works one task.
type worktree struct {
	root   string // the scope root, absolute
	rel    string // the worktree, relative to root, slash form
	branch string
}

func newWorktree(root, agentID, taskID string) worktree {
	return worktree{root: root, rel: WorktreeRel(agentID), branch: TaskBranch(taskID)}
}

// dir is the worktree's absolute path.
func (w worktree) dir() string { return filepath.Join(w.root, filepath.FromSlash(w.rel)) }

// folder is the worktree as the place the agent's tools act in.
func (w worktree) folder() gitwork.Folder {
	// Where is the same for every agent, so their tools share one text
	// (the branch is the model's to ask git for).
	return gitwork.Folder{Root: w.root, Rel: w.rel, Where: "your git worktree of the project"}
}

// rebase turns a path the model gave, relative to the worktree (or
// absolute inside it), into the path relative to the scope root the
// pipeline expects (gitwork.Folder.Rebase).
func (w worktree) rebase(field, p string) (string, error) { return w.folder().Rebase(field, p) }

// The shared git bookkeeping, under the names this package used before
// it moved to gitwork.
var (
	git          = gitwork.Git
	excludeBrabo = gitwork.ExcludeBrabo
	samePath     = gitwork.SamePath
	within       = gitwork.Within
)

// hold makes sure the agent's worktree exists and has the task's branch
// checked out. It never resets or cleans a worktree that
// already holds the task's branch (an agent that waited, or was restored,
// finds its work as it left it). Otherwise:
//
//   - a worktree of the agent's left on another task's branch (a blocked
//     task's, kept for a human to look at) is removed when it is clean,
//     and moved aside to <agent id>-<its branch's task id> when it holds
//     uncommitted work, so nothing is lost;
//   - the task's branch checked out in another worktree of WorktreesDir
//     (the task was reopened and is claimed again) is moved here, with
//     its uncommitted work;
//   - else the branch is checked out (it exists when the task was worked
//     before), or created from BaseBranch (HEAD when there is none).
//
// A worktree whose folder was deleted by hand is pruned and made again on
// the task's branch (its commits are on the branch; its uncommitted work
// went with the folder). The scope root must be the top of a git
// repository with a commit.
func (w worktree) hold(ctx context.Context) error {
	defer gitwork.Lock(w.root)()

	top, err := git(ctx, w.root, w.root, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("the project folder is not a git repository (the dev agent works in a git worktree of it): %w", err)
	}
	if !samePath(top, w.root) {
		return fmt.Errorf("the project folder %s is inside the git repository %s, not its top: the dev agent's worktree would hold the whole repository", w.root, top)
	}
	if _, err := git(ctx, w.root, w.root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return errors.New("the project's git repository has no commit yet: there is nothing to branch the task from")
	}
	if err := excludeBrabo(ctx, w.root); err != nil {
		return err
	}
	// A worktree whose folder was deleted by hand is still registered (and
	// its branch still counts as checked out) until pruned.
	if _, err := git(ctx, w.root, w.root, "worktree", "prune"); err != nil {
		return err
	}
	trees, err := gitwork.List(ctx, w.root)
	if err != nil {
		return err
	}
	dir := w.dir()
	if t, ok := trees.At(dir); ok {
		if t.Branch == w.branch {
			return nil // held: the agent's worktree, as it was left
		}
		if err := w.setAside(ctx, t); err != nil {
			return err
		}
	}
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists but is not a worktree of the project's repository: move it away", dir)
	}
	if t, ok := trees.OnBranch(w.branch); ok && within(filepath.Join(w.root, filepath.FromSlash(WorktreesDir)), t.Path) {
		if _, err := git(ctx, w.root, w.root, "worktree", "move", t.Path, dir); err != nil {
			return fmt.Errorf("taking over the task's worktree %s: %w", t.Path, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("making the worktrees folder: %w", err)
	}
	if _, err := git(ctx, w.root, w.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+w.branch); err == nil {
		if _, err := git(ctx, w.root, w.root, "worktree", "add", "--quiet", dir, w.branch); err != nil {
			return fmt.Errorf("checking out the task's branch: %w", err)
		}
		return nil
	}
	start := "HEAD"
	if _, err := git(ctx, w.root, w.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+BaseBranch); err == nil {
		start = BaseBranch
	}
	if _, err := git(ctx, w.root, w.root, "worktree", "add", "--quiet", "-b", w.branch, dir, start); err != nil {
		return fmt.Errorf("creating the task's branch and worktree: %w", err)
	}
	return nil
}

// setAside clears the agent's worktree path of a worktree on another
// branch: removed when clean, moved aside when it holds uncommitted work.
func (w worktree) setAside(ctx context.Context, t gitwork.Worktree) error {
	status, err := git(ctx, w.root, t.Path, "status", "--porcelain")
	if err != nil {
		return fmt.Errorf("reading the agent's earlier worktree: %w", err)
	}
	if status == "" {
		if _, err := git(ctx, w.root, w.root, "worktree", "remove", t.Path); err != nil {
			return fmt.Errorf("removing the agent's earlier worktree: %w", err)
		}
		return nil
	}
	aside := t.Path + "-" + strings.ReplaceAll(strings.TrimPrefix(t.Branch, BranchPrefix), "/", "-")
	if t.Branch == "" {
		aside = t.Path + "-detached"
	}
	if _, err := git(ctx, w.root, w.root, "worktree", "move", t.Path, aside); err != nil {
		return fmt.Errorf("moving aside the agent's earlier worktree (it holds uncommitted work): %w", err)
	}
	return nil
}

// release removes the agent's worktree once its task is done: the work
// is on the task's branch, which stays, and in the pull request opened
// from it. What was never committed goes with the worktree.
func (w worktree) release(ctx context.Context) error {
	defer gitwork.Lock(w.root)()
	trees, err := gitwork.List(ctx, w.root)
	if err != nil {
		return err
	}
	t, ok := trees.At(w.dir())
	if !ok || t.Branch != w.branch {
		return nil // not this task's any more
	}
	if _, err := git(ctx, w.root, w.root, "worktree", "remove", "--force", t.Path); err != nil {
		return fmt.Errorf("removing the worktree of a done task: %w", err)
	}
	return nil
}
