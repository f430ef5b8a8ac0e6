package app

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo/policy"
)

// protection is what the protected-path rule needs from this process: the
// home folder approved commands run with (their HOME) and brabo's own
// paths — its database files and its binary — which no command may write,
// and reading which asks a human.
func protection(data string, env []string) policy.Protect {
	p := policy.Protect{}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			p.Home = filepath.Clean(v)
		}
	}
	if p.Home == "" {
		p.Home, _ = os.UserHomeDir()
	}
	if data != "" {
		// The database's files, not the whole folder: the workspaces of
		// container projects (and the demo's project) live in it too.
		if abs, err := filepath.Abs(data); err == nil {
			for _, name := range []string{"brabo.db", "brabo.db-wal", "brabo.db-shm", "brabo.db-journal"} {
				p.ServerPaths = append(p.ServerPaths, filepath.Join(abs, name))
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		p.ServerPaths = append(p.ServerPaths, exe)
	}
	return p
}
