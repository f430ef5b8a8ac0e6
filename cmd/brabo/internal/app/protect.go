package app

import (
	"github.com/brabo-dev/brabo/internal/protect"
	"github.com/brabo-dev/brabo/policy"
)

// protection is what the protected-path rule needs from this process
// (internal/protect): the server's home folder and its own paths.
func protection(data string, env []string) policy.Protect { return protect.For(data, env) }

// Protection is protection for a process that is not the server, as a
// proposal of the server's protects them (data "" names no database).
func Protection(data string, env []string) policy.Protect { return protect.For(data, env) }
