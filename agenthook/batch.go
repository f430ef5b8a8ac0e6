package agenthook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// batchInput is Claude Code's PostToolBatch: once every call of a batch
// has resolved, each call with the text its model read.
type batchInput struct {
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	ToolCalls []struct {
		ToolName     string          `json:"tool_name"`
		ToolInput    json.RawMessage `json:"tool_input"`
		ToolUseID    string          `json:"tool_use_id"`
		ToolResponse json.RawMessage `json:"tool_response"`
	} `json:"tool_calls"`
}

// maxAgentReason bounds the agent's reason the hook sends for a call it
// did not run.
const maxAgentReason = 1 << 10

// batch is Claude Code's post-tool-batch: a call of the batch whose state
// is still there reached neither PostToolUse nor PostToolUseFailure (both
// have run by now), so Claude Code refused it itself after brabo allowed
// it (its own deny rule, another hook's deny): its actions are reported
// not_run, with the text Claude Code gave its model as the reason. It
// never blocks the agent.
func (h *hook) batch(configPath string, stdin io.Reader) int {
	b, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	in := &batchInput{}
	if err == nil && len(b) <= maxInput {
		err = json.Unmarshal(b, in)
	}
	if err != nil || len(b) > maxInput {
		fmt.Fprintf(h.stderr, "brabo: the agent's batch is not the JSON of a hook call\n")
		return 0
	}
	for _, call := range in.ToolCalls {
		st := takeState(configPath, &hookInput{SessionID: in.SessionID, ToolUseID: call.ToolUseID,
			ToolName: call.ToolName, ToolInput: call.ToolInput})
		if st == nil {
			continue
		}
		c, err := reportClient(configPath, in.Cwd)
		if err != nil {
			fmt.Fprintf(h.stderr, "brabo: %v\n", err)
			return 0
		}
		var resp any
		json.Unmarshal(call.ToolResponse, &resp)
		reason := "Claude Code did not run it: " + clip(strings.TrimSpace(firstOf(responseText(resp), "it gave no reason")), maxAgentReason)
		for _, id := range st.IDs {
			if err := c.ReportNotRun(context.Background(), id, reason); err != nil {
				fmt.Fprintf(h.stderr, "brabo: reporting action %s: %v\n", id, err)
			}
		}
	}
	return 0
}
