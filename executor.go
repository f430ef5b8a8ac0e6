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
