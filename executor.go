package brabo

import "context"

// ExecRequest is an approved action handed to an Executor.
type ExecRequest struct {
	Action  *ProposedAction
	Project *Project
	// Root is the absolute scope root the action is confined to.
	Root string
	// Credential is the member whose credential the action runs with: the
	// workspace owner for auto-approved actions, the decider for manual ones.
	Credential *Member
	// PR is the pull request a git_merge merges (nil otherwise).
	PR *PullRequest
	// MayWriteProtected, when set, says which protected paths of the
	// scope root the action may change: those a maintainer approved it to
	// change (an approved `git checkout -b` in the terminal). The sandbox
	// leaves them writable and binds every other protected path
	// read-only; nil leaves all read-only.
	MayWriteProtected func(path string) bool
	// Started, when set, is called each time the executor starts a
	// process group for the action (a terminal command, each git step),
	// so the caller can record where the action runs while it runs.
	Started func(ProcessGroup)
	// Container, when set, is the project's running container a terminal
	// action runs in instead of the host (container.go).
	Container *ContainerTarget
	// Bound is what the approval bound (Preview.Bound, name to value):
	// the executor runs exactly it — pushes the commit "commit", commits
	// the tree "tree" onto "head", writes only over the file "file",
	// opens a pull request or merges its "head" into its "base" — and
	// when the repository or the file moved since, runs nothing and
	// returns a result with CodeChangedSinceApproved. nil binds nothing.
	Bound map[string]string
}

// StagedTree is what a git_commit's own staging produces (git add -A into
// a temporary index, as the execution stages): the tree it would commit,
// onto which HEAD ("" in a repository without a commit), and the paths
// that tree changes against HEAD.
type StagedTree struct {
	Head  string
	Tree  string
	Paths []string
}

// Stager is an Executor that can stage a git_commit without committing
// it, the way its execution stages, so that the card binds the very tree
// the commit records. It writes nothing to the repository: the objects
// go to a scratch folder it removes.
type Stager interface {
	StageTree(ctx context.Context, req ExecRequest) (*StagedTree, error)
}

// Executor runs approved actions and returns their real result.
//
// An action that ran and reported an outcome (a command exiting 1, a merge
// with conflicts) returns a Result; Result.Error set or a non-nil error
// means the action failed. Execute never panics for a type it does not
// know: it returns an error naming the type.
type Executor interface {
	Execute(ctx context.Context, req ExecRequest) (*Result, error)
}

// RepoReader reads a project's git repository as data, for the
// pipeline's previews (the commits a push would push, the stat of a
// commit or a pull request): it runs no program, obeys no configuration,
// attribute or hook of the repository, and follows no gitfile, commondir
// or alternates that leaves the project folder.
type RepoReader interface {
	// OpenRepo opens the repository that holds dir, a folder relative to
	// the scope root root ("" for the root), looking from dir up to root
	// and never above it.
	OpenRepo(ctx context.Context, root, dir string) (GitRepo, error)
}

// GitRepo is one repository opened by a RepoReader. Refs are full names
// (refs/heads/main, refs/remotes/origin/main) or HEAD.
type GitRepo interface {
	// Commit returns the full hash of the commit ref names, tags peeled;
	// "" when it names none.
	Commit(ref string) (string, error)
	// Refs lists the full names of the refs under prefix
	// ("refs/remotes/origin/").
	Refs(prefix string) ([]string, error)
	// Log lists, newest first as git log does, at most max of the commits
	// reachable from tip and from none of not (commit hashes), and counts
	// them all.
	Log(tip string, not []string, max int) (commits []Commit, total int, err error)
	// IsAncestor reports whether commit a is b or one of b's ancestors.
	IsAncestor(a, b string) (bool, error)
	// RangeStat is `git diff --numstat base...tip`: what tip changes since
	// its merge base with base; at most max files are listed.
	RangeStat(base, tip string, max int) (*DiffStat, error)
	// WorktreeStat is what `git add -A` would commit: every change of the
	// working tree against HEAD (against nothing in a repository without
	// a commit), then every untracked file that no ignore rule excludes,
	// as New; at most max files are listed.
	WorktreeStat(max int) (*DiffStat, error)
	// Close releases what the repository holds open.
	Close() error
}
