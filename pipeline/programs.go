package pipeline

import (
	"os"
	"path"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/progfind"
	"github.com/brabo-dev/brabo/policy"
)

// programs resolves the program names of a terminal command where it
// will run, for Decide (policy.Input.Programs): the server's PATH, which
// the executor hands the command, from the action's cwd, with the project
// folder, the temp folder and brabo's own folders (the caches lie there)
// as what the agent can write. A container project's command runs in its
// container, whose files the host cannot see: nil, and Decide reads a
// program named by its path conservatively.
func (s *Service) programs(typ brabo.ActionType, p *brabo.Project, command, cwd, root string) map[string]policy.Program {
	if typ != brabo.Terminal || root == "" || p == nil || p.Mode == brabo.ModeContainer {
		return nil
	}
	switch {
	case cwd == "":
		cwd = root
	case !path.IsAbs(cwd):
		cwd = path.Join(root, cwd)
	}
	// The action's own temp folder is made when it runs, so no PATH entry
	// can lie in it yet; the rest of the temp folder is not the agent's
	// (the sandbox gives it a private one).
	writable := append([]string{root}, s.Protect.ServerPaths...)
	return progfind.Resolve(policy.ProgramNames(command), progfind.Env{PATH: os.Getenv("PATH"), Cwd: cwd, Writable: writable})
}
