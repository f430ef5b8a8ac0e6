// Command brabo-sandbox is the part of brabo that runs on every sandboxed
// command's path, alone, for speed: the sandbox's root helper
// (internal/sandbox), the Landlock launcher (internal/confine) and the
// egress forwarder and its tunnel for ssh (internal/egress). brabo starts it instead of itself
// when it lies beside brabo's binary and was built from the same version
// (cmd/brabo/internal/app's sandboxBinary); brabo's own binary, whose package
// initialisation (the HTTP templates, the model SDKs, the database
// drivers) costs tens of milliseconds on a busy machine, stays the
// fallback. It links no more than those three packages
// (imports_test.go), so its start is the Go runtime's and little else
// (docs/PERFORMANCE.md, "The sandbox's cost per command").
//
// It has no command of its own: started any other way it prints its usage
// and exits 2.
package main

import (
	"fmt"
	"os"

	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

func main() {
	switch {
	case confine.IsLauncher(os.Args):
		confine.Main(os.Args)
	case sandbox.IsHelper(os.Args):
		sandbox.Main(os.Args)
	case egress.IsForwarder(os.Args):
		egress.Main(os.Args)
	}
	fmt.Fprintf(os.Stderr, "brabo-sandbox is started by brabo only, as %s, %s, %s or %s\n",
		confine.Subcommand, sandbox.HelperSubcommand, egress.Subcommand, egress.ConnectSubcommand)
	os.Exit(2)
}
