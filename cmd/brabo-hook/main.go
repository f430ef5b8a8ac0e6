// Command brabo-hook is brabo's hook for the agents that run their tools
// themselves (Claude Code, Codex, Gemini CLI): the same code as `brabo
// hook`, in a binary that links none of the server's dependencies, so
// that a hook that runs before every tool call starts in a few
// milliseconds (docs/PERFORMANCE.md). brabo install writes its path into
// the agents' hook settings when it lies beside the brabo binary.
//
// Usage:
//
//	brabo-hook claude|codex|gemini <event> --config FILE
package main

import (
	"fmt"
	"os"

	"github.com/brabo-dev/brabo/agenthook"
)

const usage = `brabo-hook — the hook Claude Code, Codex and Gemini CLI run before and after each tool call

Usage:
  brabo-hook claude|codex|gemini <event> --config FILE

brabo install writes the command into the agents' settings. Its exit codes are the
agents' hook protocol: 0 lets the tool run, 2 denies it (any failure is a deny).
`

func main() {
	// Help alone: the agents never run it, so no hook answer changes.
	if len(os.Args) == 2 && (os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help") {
		fmt.Print(usage)
		os.Exit(0)
	}
	os.Exit(agenthook.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
