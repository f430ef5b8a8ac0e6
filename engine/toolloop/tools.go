package toolloop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/model"
)

// Kind says how a tool runs.
type Kind string

// Tool kinds.
const (
	// Direct tools run in process and have no effect outside the agent's
	// head (read_file, list_dir): their output is the tool result.
	Direct Kind = "direct"
	// Pipeline tools become a proposed action through Proposer.Propose:
	// the pipeline decides, and a pending decision suspends the loop.
	Pipeline Kind = "pipeline"
)

// Tool is one tool the model may call.
type Tool struct {
	// Spec is what the model is told: name, description, JSON Schema.
	Spec model.Tool
	Kind Kind
	// Direct runs a Direct tool; its error becomes an error tool result.
	Direct func(ctx context.Context, args json.RawMessage) (string, error)
	// Action turns a Pipeline tool's arguments into the action to propose;
	// its error becomes an error tool result (bad arguments).
	Action func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error)
	// Local, when set on a Pipeline tool, runs before anything is
	// proposed: when it reports handled, its output is the tool result
	// and nothing is proposed, because the call needs no decision (the dev
	// lead's parallelize within the project's cap); otherwise the
	// call is proposed as usual. Its error becomes an error tool result.
	Local func(ctx context.Context, args json.RawMessage) (out string, handled bool, err error)
}

// decodeArgs decodes a tool call's arguments into v strictly: a JSON
// object with no field the schema does not name.
func decodeArgs(args json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("the arguments must be a JSON object, got %s", clip(string(args), 200))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the arguments do not fit the schema: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("the arguments hold more than one JSON value")
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// TerminalTool is the terminal pipeline tool: {command, cwd?, timeoutSec?}.
func TerminalTool() Tool {
	return Tool{
		Spec: model.Tool{
			Name: "terminal",
			Description: "Run a shell command in the project folder and get its exit code and output. " +
				"Commands the project's permissions allow run at once; others wait for a human's approval.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"command":{"type":"string","description":"the command line to run"},` +
				`"cwd":{"type":"string","description":"working folder, relative to the project folder"},` +
				`"timeoutSec":{"type":"integer","minimum":1,"description":"timeout in seconds"}},` +
				`"required":["command"],"additionalProperties":false}`),
		},
		Kind: Pipeline,
		Action: func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
			var a struct {
				Command    string `json:"command"`
				Cwd        string `json:"cwd"`
				TimeoutSec int    `json:"timeoutSec"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return "", brabo.Payload{}, err
			}
			if strings.TrimSpace(a.Command) == "" {
				return "", brabo.Payload{}, fmt.Errorf("command is required")
			}
			if a.TimeoutSec < 0 {
				return "", brabo.Payload{}, fmt.Errorf("timeoutSec must not be negative")
			}
			return brabo.Terminal, brabo.Payload{Command: a.Command, Cwd: a.Cwd, TimeoutSec: a.TimeoutSec}, nil
		},
	}
}

// WriteFileTool is the write_file pipeline tool: {path, content}.
func WriteFileTool() Tool {
	return Tool{
		Spec: model.Tool{
			Name:        "write_file",
			Description: "Write a file in the project folder, replacing it if it exists.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"file path, relative to the project folder"},` +
				`"content":{"type":"string","description":"the whole new content"}},` +
				`"required":["path","content"],"additionalProperties":false}`),
		},
		Kind: Pipeline,
		Action: func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
			var a struct {
				Path    string  `json:"path"`
				Content *string `json:"content"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return "", brabo.Payload{}, err
			}
			if a.Path == "" {
				return "", brabo.Payload{}, fmt.Errorf("path is required")
			}
			if a.Content == nil {
				return "", brabo.Payload{}, fmt.Errorf("content is required (it may be empty)")
			}
			return brabo.WriteFile, brabo.Payload{Path: a.Path, Content: *a.Content}, nil
		},
	}
}

// GitCommitTool is the git_commit pipeline tool: {message}.
func GitCommitTool() Tool {
	return Tool{
		Spec: model.Tool{
			Name:        "git_commit",
			Description: "Commit every change in the project's git repository with a message.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"message":{"type":"string","description":"the commit message"}},` +
				`"required":["message"],"additionalProperties":false}`),
		},
		Kind: Pipeline,
		Action: func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
			var a struct {
				Message string `json:"message"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return "", brabo.Payload{}, err
			}
			if strings.TrimSpace(a.Message) == "" {
				return "", brabo.Payload{}, fmt.Errorf("message is required")
			}
			return brabo.GitCommit, brabo.Payload{Message: a.Message}, nil
		},
	}
}

// StandardTools are the pipeline tools a dev agent uses: terminal,
// write_file and git_commit.
func StandardTools() []Tool {
	return []Tool{TerminalTool(), WriteFileTool(), GitCommitTool()}
}
