package devagent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// WorktreesDir is the folder, relative to the project's scope root (slash
// form), that holds the dev agents' git worktrees: brabo's own folder in
// the project.
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

// rebase turns a path the model gave, relative to the worktree (or
// absolute inside it), into the path relative to the scope root the
// pipeline expects. A path that leaves the worktree is refused: another
// agent's worktree or the main checkout is not this agent's to touch.
func (w worktree) rebase(field, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" || p == "." {
		return w.rel, nil
	}
	var rel string
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(w.dir(), filepath.Clean(p))
		if err != nil {
			return "", fmt.Errorf("%s %q is outside your worktree", field, p)
		}
		rel = filepath.ToSlash(r)
	} else {
		rel = path.Clean(filepath.ToSlash(p))
	}
	if rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return "", fmt.Errorf("%s %q is outside your worktree", field, p)
	}
	if rel == "." {
		return w.rel, nil
	}
	return w.rel + "/" + rel, nil
}

// worktreeLocks serialises the worktree operations on one repository in
// this process: two agents of a project claiming at once must not race on
// git's worktree bookkeeping.
var worktreeLocks sync.Map // scope root → *sync.Mutex

// gitEnvDrop are inherited variables that would point git at another
// repository than the one in dir.
var gitEnvDrop = map[string]bool{"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true,
	"GIT_NAMESPACE": true, "GIT_PREFIX": true}

// git runs git in dir and returns its trimmed standard output; the error
// carries git's standard error. These are brabo's own bookkeeping, not an
// approved action, so they run no hook of the repository (core.hooksPath
// points nowhere): a post-checkout hook the agent wrote never runs on a
// worktree add.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.hooksPath=" + os.DevNull}, args...)...)
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !gitEnvDrop[name] {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

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
	mu, _ := worktreeLocks.LoadOrStore(filepath.Clean(w.root), &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	top, err := git(ctx, w.root, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("the project folder is not a git repository (the dev agent works in a git worktree of it): %w", err)
	}
	if !samePath(top, w.root) {
		return fmt.Errorf("the project folder %s is inside the git repository %s, not its top: the dev agent's worktree would hold the whole repository", w.root, top)
	}
	if _, err := git(ctx, w.root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return errors.New("the project's git repository has no commit yet: there is nothing to branch the task from")
	}
	if err := excludeBrabo(ctx, w.root); err != nil {
		return err
	}
	// A worktree whose folder was deleted by hand is still registered (and
	// its branch still counts as checked out) until pruned.
	if _, err := git(ctx, w.root, "worktree", "prune"); err != nil {
		return err
	}
	trees, err := listWorktrees(ctx, w.root)
	if err != nil {
		return err
	}
	dir := w.dir()
	if t, ok := trees.at(dir); ok {
		if t.branch == w.branch {
			return nil // held: the agent's worktree, as it was left
		}
		if err := w.setAside(ctx, t); err != nil {
			return err
		}
	}
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists but is not a worktree of the project's repository: move it away", dir)
	}
	if t, ok := trees.onBranch(w.branch); ok && within(filepath.Join(w.root, filepath.FromSlash(WorktreesDir)), t.path) {
		if _, err := git(ctx, w.root, "worktree", "move", t.path, dir); err != nil {
			return fmt.Errorf("taking over the task's worktree %s: %w", t.path, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("making the worktrees folder: %w", err)
	}
	if _, err := git(ctx, w.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+w.branch); err == nil {
		if _, err := git(ctx, w.root, "worktree", "add", "--quiet", dir, w.branch); err != nil {
			return fmt.Errorf("checking out the task's branch: %w", err)
		}
		return nil
	}
	start := "HEAD"
	if _, err := git(ctx, w.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+BaseBranch); err == nil {
		start = BaseBranch
	}
	if _, err := git(ctx, w.root, "worktree", "add", "--quiet", "-b", w.branch, dir, start); err != nil {
		return fmt.Errorf("creating the task's branch and worktree: %w", err)
	}
	return nil
}

// setAside clears the agent's worktree path of a worktree on another
// branch: removed when clean, moved aside when it holds uncommitted work.
func (w worktree) setAside(ctx context.Context, t gitWorktree) error {
	status, err := git(ctx, t.path, "status", "--porcelain")
	if err != nil {
		return fmt.Errorf("reading the agent's earlier worktree: %w", err)
	}
	if status == "" {
		if _, err := git(ctx, w.root, "worktree", "remove", t.path); err != nil {
			return fmt.Errorf("removing the agent's earlier worktree: %w", err)
		}
		return nil
	}
	aside := t.path + "-" + strings.ReplaceAll(strings.TrimPrefix(t.branch, BranchPrefix), "/", "-")
	if t.branch == "" {
		aside = t.path + "-detached"
	}
	if _, err := git(ctx, w.root, "worktree", "move", t.path, aside); err != nil {
		return fmt.Errorf("moving aside the agent's earlier worktree (it holds uncommitted work): %w", err)
	}
	return nil
}

// release removes the agent's worktree once its task is done: the work
// is on the task's branch, which stays, and in the pull request opened
// from it. What was never committed goes with the worktree.
func (w worktree) release(ctx context.Context) error {
	mu, _ := worktreeLocks.LoadOrStore(filepath.Clean(w.root), &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	trees, err := listWorktrees(ctx, w.root)
	if err != nil {
		return err
	}
	t, ok := trees.at(w.dir())
	if !ok || t.branch != w.branch {
		return nil // not this task's any more
	}
	if _, err := git(ctx, w.root, "worktree", "remove", "--force", t.path); err != nil {
		return fmt.Errorf("removing the worktree of a done task: %w", err)
	}
	return nil
}

// excludeBrabo adds "/.brabo/" to the repository's info/exclude once.
func excludeBrabo(ctx context.Context, root string) error {
	common, err := git(ctx, root, "rev-parse", "--git-common-dir")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(root, common)
	}
	file := filepath.Join(common, "info", "exclude")
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); l == "/.brabo/" || l == "/.brabo" || l == ".brabo/" || l == ".brabo" {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("making %s: %w", filepath.Dir(file), err)
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("opening %s: %w", file, err)
	}
	sep := ""
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		sep = "\n"
	}
	_, err = f.WriteString(sep + "# brabo's dev agents work in worktrees here\n/.brabo/\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}

// gitWorktree is one entry of `git worktree list --porcelain`.
type gitWorktree struct {
	path   string
	branch string // without refs/heads/; "" when detached
}

type gitWorktrees []gitWorktree

func listWorktrees(ctx context.Context, root string) (gitWorktrees, error) {
	out, err := git(ctx, root, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var list gitWorktrees
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			list = append(list, gitWorktree{path: p})
		} else if b, ok := strings.CutPrefix(line, "branch "); ok && len(list) > 0 {
			list[len(list)-1].branch = strings.TrimPrefix(b, "refs/heads/")
		}
	}
	return list, nil
}

func (l gitWorktrees) at(dir string) (gitWorktree, bool) {
	for _, t := range l {
		if samePath(t.path, dir) {
			return t, true
		}
	}
	return gitWorktree{}, false
}

func (l gitWorktrees) onBranch(b string) (gitWorktree, bool) {
	for _, t := range l {
		if t.branch == b {
			return t, true
		}
	}
	return gitWorktree{}, false
}

// samePath compares two paths once cleaned and, where they exist, with
// their symlinks resolved (git prints resolved paths).
func samePath(a, b string) bool {
	return resolve(a) == resolve(b)
}

func resolve(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// within reports whether p lies strictly inside dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(resolve(dir), resolve(p))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
