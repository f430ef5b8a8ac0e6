package agenttest

import (
	"context"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPEchoEnv is the environment variable that makes a test binary serve
// the echo MCP server instead of running its tests (ServeMCPEchoIfAsked):
// the agents start it as their MCP server, a real stdio MCP server of the
// official SDK, so their MCP tool calls go through their hooks.
const MCPEchoEnv = "BRABO_TEST_MCP_ECHO"

// MCPEchoLogEnv, when set, names a file the echo server appends each
// text it said to, one a line: a test's proof that a call ran (or, for a
// denied one, that it never reached the server).
const MCPEchoLogEnv = "BRABO_TEST_MCP_ECHO_LOG"

// MCPEchoServer is the echo server's name in the agents' configurations:
// its tool is mcp__echo__say (Claude Code, Codex) or mcp_echo_say
// (Gemini CLI).
const MCPEchoServer = "echo"

// MCPEchoPrefix starts every answer of the echo tool, so that a test finds
// the tool's own output (and not its input) in brabo's log.
const MCPEchoPrefix = "echo-server says: "

type sayInput struct {
	Text string `json:"text" jsonschema:"what to say back"`
}

// ServeMCPEchoIfAsked serves the echo MCP server on standard input and
// output and exits, when MCPEchoEnv is "1"; otherwise it returns at once.
// A test package calls it from an init function of a _test.go file, and
// points the agent at os.Executable() with MCPEchoEnv=1.
func ServeMCPEchoIfAsked() {
	if os.Getenv(MCPEchoEnv) != "1" {
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: MCPEchoServer, Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "say", Description: "Says the text back, prefixed."},
		func(ctx context.Context, req *mcp.CallToolRequest, in sayInput) (*mcp.CallToolResult, any, error) {
			if log := os.Getenv(MCPEchoLogEnv); log != "" {
				f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
				if err != nil {
					return nil, nil, err
				}
				_, err = f.WriteString(in.Text + "\n")
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: MCPEchoPrefix + in.Text}}}, nil, nil
		})
	err := s.Run(context.Background(), &mcp.StdioTransport{})
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}
