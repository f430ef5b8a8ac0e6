// Command brabo is the approval pipeline for AI coding agents.
//
// Usage:
//
//	brabo <command> [flags]
//
// "brabo help" lists the commands (cli.go holds the table), "brabo
// <command> -h" prints one command's usage and flags, and "brabo
// --version" the module version and VCS revision. Errors are one line,
// "brabo <command>: message", with exit 1; bad usage exits 2. brabo check
// exits with its decision (0, 1, 2; 3 for bad usage), brabo hook with the
// agents' hook protocol (2 denies).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/internal/egress"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

func main() {
	// A confined command's launcher (internal/confine): brabo starts
	// itself this way to run a terminal command under Landlock.
	if confine.IsLauncher(os.Args) {
		confine.Main(os.Args)
	}
	// The sandbox's root helper (internal/sandbox): brabo under root
	// starts itself this way to map a project folder to the sandbox's
	// unprivileged user and start bubblewrap as that user.
	if sandbox.IsHelper(os.Args) {
		sandbox.Main(os.Args)
	}
	// The egress forwarder (internal/egress): brabo runs itself this way
	// inside the sandbox, so a command's network goes through its proxy.
	if egress.IsForwarder(os.Args) {
		egress.Main(os.Args)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	switch a := args[0]; {
	case a == "--version" || a == "-version":
		return runVersion(args[1:], stdin, stdout, stderr)
	case isHelp(a):
		return runHelp(args[1:], stdin, stdout, stderr)
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "brabo: unknown command %q (brabo help lists the commands)\n", args[0])
		return exitUsage
	}
	if c.verbs && len(args) == 2 && isHelp(args[1]) {
		// Help alone: the agents never run `brabo hook -h`, so this
		// changes none of the hook's answers.
		printHelp(stdout, c, nil)
		return 0
	}
	return c.run(args[1:], stdin, stdout, stderr)
}
