package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/brabo-dev/brabo/mcpserver"
)

// runMCP is `brabo mcp --config FILE`: the stdio MCP server whose approve
// tool is the permission prompt of `claude -p --permission-prompt-tool
// mcp__brabo__approve` (mcpserver).
func runMCP(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("mcp")
	config := fl.String("config", "", "the hook configuration brabo install claude wrote (~/.config/brabo/hooks/claude-….json)")
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	if *config == "" {
		return usageError(stderr, "mcp", "--config FILE is required: the file brabo install claude wrote")
	}
	// The file is read on every call; one that is not there at start is a
	// typo, not a file still to come.
	if _, err := os.Stat(*config); err != nil {
		return fail(stderr, "mcp", "--config: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcpserver.Run(ctx, *config, version(), stderr); err != nil && ctx.Err() == nil {
		return fail(stderr, "mcp", "%v", err)
	}
	return 0
}
