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
	"os"

	"github.com/brabo-dev/brabo/agenthook"
)

func main() {
	os.Exit(agenthook.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
