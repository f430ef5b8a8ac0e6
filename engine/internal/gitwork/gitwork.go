// Package gitwork is what the agents that work in git worktrees of a
// project share: brabo's own git bookkeeping (run without the
// repository's hooks, serialised per repository in this process), the
// listing of a repository's worktrees, and Folder, which makes an agent's
// tools act in one folder of the scope root.
//
// The dev agent (engine/devagent) holds a worktree per agent on its task's
// branch; the QA gate (engine/gate) runs its sub-agents in the dev's
// worktree or in a detached checkout of the task's branch. Both use it.
package gitwork

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/brabo-dev/brabo/internal/gitguard"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/internal/procs"
)

// locks serialises the worktree operations on one repository in this
// process: two agents of a project (or an agent and the QA gate) making
// worktrees at once must not race on git's worktree bookkeeping.
var locks sync.Map // scope root, cleaned → *sync.Mutex

// Lock takes the lock of the repository at root for this process and
// returns what releases it. Every worktree add, move, remove or prune of
// brabo's goes under it.
func Lock(root string) (unlock func()) {
	mu, _ := locks.LoadOrStore(filepath.Clean(root), &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// Git runs git in dir (root, the scope root, or a folder inside it) and returns its trimmed standard output; the error
// wraps the process's and carries git's standard error. These are brabo's
// own bookkeeping, not an approved action, so they obey nothing an agent
// could have written in the repository: its configuration is read as
// data first and a key that may name a program (a filter a worktree add's
// checkout would run, an fsmonitor…), an include, or a commondir,
// gitfile or alternates that cannot be checked is refused
// (*gitguard.ConfigError, gitguard's named errors); git then runs with no
// hook (whatever the project's hooks setting: nobody approved a worktree
// add), no user or system configuration, no inherited GIT_* variable and
// the filtered environment every child of brabo gets (procenv.OwnGit).
func Git(ctx context.Context, root, dir string, args ...string) (string, error) {
	// Bound by root: a commondir, gitfile or alternates the agent pointed
	// outside the scope root is refused, not followed.
	if _, err := gitguard.Check(root, dir); err != nil && !errors.Is(err, gitguard.ErrNoRepository) {
		return "", fmt.Errorf("git %s: brabo does not run git in this repository: %w", strings.Join(args, " "), err)
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = procenv.OwnGit(procenv.Own(), []string{"LC_ALL=C"}, procenv.NoHooks)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Through procs: a subreaper's reaper must not take git's exit status.
	err := procs.Run(cmd)
	out := stdout.String()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// ExcludeBrabo adds "/.brabo/" to the repository's info/exclude once, so
// the main checkout does not list the worktrees brabo keeps there and a
// git add -A never stages them as embedded repositories.
func ExcludeBrabo(ctx context.Context, root string) error {
	common, err := Git(ctx, root, root, "rev-parse", "--git-common-dir")
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

// Worktree is one entry of `git worktree list --porcelain`.
type Worktree struct {
	Path   string
	Branch string // without refs/heads/; "" when detached
	Head   string // the commit checked out
}

// Worktrees is a repository's worktrees, the main checkout first.
type Worktrees []Worktree

// List lists the worktrees of the repository at root, as git knows them
// (a folder deleted by hand stays listed until pruned).
func List(ctx context.Context, root string) (Worktrees, error) {
	out, err := Git(ctx, root, root, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var list Worktrees
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			list = append(list, Worktree{Path: p})
		} else if len(list) == 0 {
			continue
		} else if b, ok := strings.CutPrefix(line, "branch "); ok {
			list[len(list)-1].Branch = strings.TrimPrefix(b, "refs/heads/")
		} else if h, ok := strings.CutPrefix(line, "HEAD "); ok {
			list[len(list)-1].Head = h
		}
	}
	return list, nil
}

// At finds the worktree at dir (compared with SamePath).
func (l Worktrees) At(dir string) (Worktree, bool) {
	for _, t := range l {
		if SamePath(t.Path, dir) {
			return t, true
		}
	}
	return Worktree{}, false
}

// OnBranch finds the worktree that has branch b checked out (git lets one
// worktree at most have a branch).
func (l Worktrees) OnBranch(b string) (Worktree, bool) {
	for _, t := range l {
		if t.Branch == b {
			return t, true
		}
	}
	return Worktree{}, false
}

// SamePath compares two paths once cleaned and, where they exist, with
// their symlinks resolved (git prints resolved paths).
func SamePath(a, b string) bool {
	return resolve(a) == resolve(b)
}

func resolve(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// Within reports whether p lies strictly inside dir.
func Within(dir, p string) bool {
	rel, err := filepath.Rel(resolve(dir), resolve(p))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
