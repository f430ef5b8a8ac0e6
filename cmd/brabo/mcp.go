package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/brabo-dev/brabo/mcpserver"
)

// runMCP is `brabo mcp --config FILE`: the stdio MCP server whose approve
// tool is the permission prompt of `claude -p --permission-prompt-tool
// mcp__brabo__approve` (mcpserver).
func runMCP(args []string, stderr io.Writer) int {
	fl := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fl.SetOutput(stderr)
	config := fl.String("config", "", "the hook configuration brabo install claude wrote (~/.config/brabo/hooks/claude-….json)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *config == "" || fl.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: brabo mcp --config FILE")
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcpserver.Run(ctx, *config, version); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "brabo mcp: %v\n", err)
		return 1
	}
	return 0
}
