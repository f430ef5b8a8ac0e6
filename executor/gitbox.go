package executor

import (
	"path/filepath"

	"github.com/brabo-dev/brabo/internal/gitguard"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// The git steps of a typed action that touch only a repository on this
// machine — git_commit, git_branch_create, the local steps of
// git_repo_create, the merge in git_merge's clone — run in the sandbox of
// the terminal commands (internal/sandbox, docs/sandbox.md) when the
// executor has one: brabo's data folder, its tokens, its sockets, other
// projects and brabo's /proc are absent, and the network has no way out.
// Only the git folders the step writes (the repository's git folder and
// its common folder) are writable; their control files — config,
// config.worktree, commondir, hooks/, info/, objects/info/ — stay
// read-only over them. git_push and pr_open run in a sandbox of their own
// (gitpush.go); a step to a git:// remote, and git_merge's clone and push
// back, stay on the host under gitguard (hostStep): see docs/sandbox.md,
// "Git actions".

// gitControl are the entries of a git folder a git action never writes:
// bound read-only over the writable git folder when they exist. One that
// does not exist cannot be bound; a step that made it (a hook) is caught
// by the integrity check that follows every action.
var gitControl = []string{"config", "config.worktree", "commondir", "gitdir", "hooks", "info", filepath.Join("objects", "info")}

// gitBox returns the sandbox spec of the local git steps in the
// repository l under the scope root root, nil when the executor has no
// sandbox (--no-sandbox, a machine without bubblewrap, tests): the steps
// then run on the host, under gitguard alone, with hooks off.
func (e *Executor) gitBox(root string, l *gitguard.Layout) *sandbox.Spec {
	if e.opts.Sandbox == nil {
		return nil
	}
	spec := &sandbox.Spec{Root: root}
	if l == nil {
		// No repository yet (git_repo_create's git init): the .git it
		// makes is the action's, written inside the writable root.
		return spec
	}
	rootResolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		rootResolved = root
	}
	write := map[string]bool{}
	var binds []sandbox.Bind
	for _, d := range []string{l.GitDir, l.CommonDir} {
		r, err := filepath.EvalSymlinks(d)
		if err != nil || write[r] {
			continue
		}
		write[r] = true
		for _, c := range gitControl {
			// Resolved, and only inside the scope root: a control file
			// that is a symlink out of it must not bring its target in.
			p, err := filepath.EvalSymlinks(filepath.Join(r, c))
			if err == nil && within(rootResolved, p) {
				binds = append(binds, sandbox.Bind{Src: p, ReadOnly: true})
			}
		}
	}
	spec.MayWrite = func(p string) bool { return write[p] }
	spec.Binds = binds
	return spec
}
