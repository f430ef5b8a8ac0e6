// Package mcpserver is `brabo mcp`: a stdio MCP server (the official Go
// MCP SDK, github.com/modelcontextprotocol/go-sdk) whose one tool, approve,
// is the permission prompt of a headless Claude Code run:
//
//	claude -p --permission-prompt-tool mcp__brabo__approve --mcp-config '…brabo mcp…'
//
// Claude Code calls it with {tool_name, input, tool_use_id} when a tool
// would need the user's permission; the tool decides the call as brabo's
// PreToolUse hook does (agenthook.DecideCall), sending progress
// notifications while a human has not decided, and answers
// {"behavior":"allow","updatedInput":…} or {"behavior":"deny","message":…}.
// It is the SDK's edge: nothing else of brabo imports the SDK.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/brabo-dev/brabo/agenthook"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolName is the approval tool's name; Claude Code calls it
// mcp__<server name>__approve.
const ToolName = "approve"

// approveInput is what Claude Code's permission prompt sends.
type approveInput struct {
	ToolName  string         `json:"tool_name" jsonschema:"the tool Claude Code wants to run"`
	Input     map[string]any `json:"input" jsonschema:"the tool's input"`
	ToolUseID string         `json:"tool_use_id,omitempty" jsonschema:"the tool call's id"`
}

// Server returns the MCP server deciding with the hook configuration at
// configPath (written by brabo install claude); version is brabo's. What
// it refuses with no record in brabo (outside every project of the
// configuration) it records in agenthook.RefusalsFile and says on log.
func Server(configPath, version string, log io.Writer) *mcp.Server {
	if log == nil {
		log = io.Discard
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "brabo", Version: version}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: ToolName,
		Description: "brabo decides whether Claude Code may run a tool: its permissions.json, caps and, when they ask, a human in brabo's approval queue. Returns Claude Code's permission answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, in approveInput) (*mcp.CallToolResult, any, error) {
			cwd, _ := os.Getwd()
			n := 0.0
			progress := func(msg string) {
				token := req.Params.GetProgressToken()
				if token == nil {
					return
				}
				n++
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
			}
			if in.Input == nil {
				in.Input = map[string]any{}
			}
			input, _ := json.Marshal(in.Input)
			var answer map[string]any
			if refused := refuseUnguarded(configPath, cwd, in.ToolName, input, log); refused != "" {
				// brabo has no project to decide in, and this tool is Claude
				// Code's only prompt: allowing would be brabo's "no opinion"
				// turned into a yes.
				answer = map[string]any{"behavior": "deny", "message": refused}
				b, _ := json.Marshal(answer)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
			}
			d := agenthook.DecideCall(ctx, "claude", configPath,
				agenthook.ToolCall{ToolName: in.ToolName, Input: input, ToolUseID: in.ToolUseID, Cwd: cwd}, progress)
			switch d.Verdict {
			case "allow", "pass":
				answer = map[string]any{"behavior": "allow", "updatedInput": in.Input}
			default:
				reason := d.Reason
				if d.Verdict == "ask" {
					reason = "brabo: " + d.Reason + "; a headless run cannot ask, so it is denied"
				}
				answer = map[string]any{"behavior": "deny", "message": reason}
			}
			b, _ := json.Marshal(answer)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	return s
}

// Run serves the approval tool on standard input and output until the
// client goes away.
func Run(ctx context.Context, configPath, version string, log io.Writer) error {
	return Server(configPath, version, log).Run(ctx, &mcp.StdioTransport{})
}

// refuseUnguarded returns the denial of a call no project of the
// configuration can decide, "" for a call one can: a folder that is in
// none of them (a --user installation's configuration, used outside
// brabo's projects), or a configuration that cannot be read. Each such
// refusal is recorded, since no action in brabo says it happened.
func refuseUnguarded(configPath, cwd, tool string, input json.RawMessage, log io.Writer) string {
	_, err := agenthook.Guarded(configPath, cwd)
	if err == nil {
		return ""
	}
	why := "this folder is in no brabo project"
	if !errors.Is(err, agenthook.ErrNotAProject) {
		why = "its configuration cannot be read"
	}
	msg := "brabo mcp refused it: " + why
	path, rerr := agenthook.RecordRefusal(agenthook.Refusal{Via: "brabo mcp", Agent: "claude", Cwd: cwd, Tool: tool,
		Input: input, Reason: err.Error()})
	if rerr != nil {
		fmt.Fprintf(log, "brabo mcp: refused %s in %s (%v), and could not record it: %v\n", tool, cwd, err, rerr)
	} else {
		fmt.Fprintf(log, "brabo mcp: refused %s in %s (%v); recorded in %s\n", tool, cwd, err, path)
	}
	return msg
}
