// Package protect builds the protected-path situation of one process:
// the home folder approved commands run with and brabo's own paths (its
// database files and its binary), which no command may write and reading
// which asks a human. The server (cmd/brabo/internal/app) and brabo check
// build it alike, so both decide alike.
package protect

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo/policy"
)

// For returns the protection of a process with the environment env whose
// data folder is data ("" names no database: brabo check). It names the
// database's files, not the whole folder, since the workspaces of
// container projects (and the demo's project) live in it too; and the
// binary the process runs as.
func For(data string, env []string) policy.Protect {
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
