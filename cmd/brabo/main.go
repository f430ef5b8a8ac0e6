// Command brabo is the approval pipeline for AI coding agents.
//
// Usage:
//
//	brabo serve [flags]                the HTTP API and approval queue
//	brabo migrate [flags]              bring the database to the latest version
//	brabo admin token [flags]          issue a new admin token, revoking the old one
//	brabo check [flags] -- 'command'   decide offline and explain every segment
//	brabo permissions accept|restore   a maintainer's answer to a permissions.json changed on disk
//	brabo project activate             seed the allow list and the dev agents' git_commit autonomy
//	brabo install claude|codex|gemini  make brabo the approver of an agent CLI
//	brabo hook <agent> <event>         the hook the agent CLIs run
//	brabo version                      print the version
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/brabo-dev/brabo/internal/confine"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `brabo — the approval pipeline for AI coding agents

Usage:
  brabo serve [flags]                serve the API (SQLite in ./.brabo by default)
  brabo migrate [flags]              bring the database to the latest version
  brabo admin token [flags]          issue a new admin token, revoking the old one
  brabo demo [--approve]             a scripted dev agent suspends on a pending action until you approve
  brabo agent --model openai:<m>     run the dev agents on a real model, without the API
  brabo check [flags] -- 'command'   decide offline, explain every segment and rule
  brabo permissions show|accept|restore --project P
                                     a permissions.json changed on disk: see, accept or restore it
  brabo project activate --project P activate execution: the seeded allow list and git_commit for dev agents
  brabo install claude|codex|gemini  make brabo the approver of Claude Code, Codex or Gemini CLI
  brabo hook <agent> <event>         the hook those agents run before and after each tool call
  brabo mcp --config FILE            the MCP approval tool for claude -p --permission-prompt-tool
  brabo version                      print the version

Run "brabo <command> -h" for the flags of a command.
`

func main() {
	// A confined command's launcher (internal/confine): brabo starts
	// itself this way to run a terminal command under Landlock.
	if confine.IsLauncher(os.Args) {
		confine.Main(os.Args)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "serve":
		return runServe(args[1:], stdout, stderr)
	case "agent":
		return runAgent(args[1:], stdout, stderr)
	case "demo":
		return runDemo(args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(args[1:], stdout, stderr)
	case "admin":
		return runAdmin(args[1:], stdout, stderr)
	case "check":
		return runCheck(args[1:], stdin, stdout, stderr)
	case "permissions":
		return runPermissions(args[1:], stdout, stderr)
	case "project":
		return runProject(args[1:], stdout, stderr)
	case "hook":
		return runHook(args[1:], stdin, stdout, stderr)
	case "install":
		return runInstall(args[1:], stdout, stderr)
	case "mcp":
		return runMCP(args[1:], stderr)
	case "version":
		fmt.Fprintln(stdout, "brabo", version)
		return 0
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "brabo: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}
