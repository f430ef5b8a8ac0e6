package agenthook

import (
	"encoding/json"
	"fmt"
)

// answer writes the outcome in the agent's format and returns the exit
// code. A deny is exit 2 with the reason on stderr wherever the agent
// honours it (all three do for their before-tool event): the agent's model
// reads the reason as the tool's error. Claude Code's PreToolUse is denied
// in its JSON instead, since it gives the model an exit 2's stderr behind
// the hook's whole command line. The model reads the one sentence of the
// reason: the wait banner is written (for the agent's transcript) only
// when the call goes on.
func (h *hook) answer(o outcome) int {
	if o.verdict != deny {
		h.stderr.Write(h.pending.Bytes())
	}
	if o.verdict == deny && h.agent+" "+h.event == "claude pre-tool-use" {
		h.json(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse",
			"permissionDecision": "deny", "permissionDecisionReason": o.reason}})
		fmt.Fprintln(h.stderr, o.reason)
		return 0
	}
	if o.verdict == deny {
		if h.event == "permission-request" {
			// A permission request is answered in JSON: exit 2 is not its
			// protocol in Codex.
			h.json(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PermissionRequest",
				"decision": map[string]any{"behavior": "deny", "message": o.reason}}})
			fmt.Fprintln(h.stderr, o.reason)
			return 2
		}
		fmt.Fprintln(h.stderr, o.reason)
		return 2
	}
	if o.verdict == pass {
		return 0 // no output: the agent decides as if no hook were there
	}
	switch h.agent + " " + h.event {
	case "claude pre-tool-use":
		decision := "allow"
		if o.verdict == ask {
			decision = "ask"
		}
		h.json(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse",
			"permissionDecision": decision, "permissionDecisionReason": o.reason}})
	case "claude permission-request", "codex permission-request":
		if o.verdict == ask {
			return 0 // the agent's own dialog decides
		}
		// brabo's "Always allow" is never mirrored into the agent's
		// settings: a dead hook must not leave rules that auto-run.
		h.json(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PermissionRequest",
			"decision": map[string]any{"behavior": "allow"}}})
	case "codex pre-tool-use":
		if o.verdict == ask {
			// Codex has no "ask" for a hook (it counts as a failure and the
			// tool runs): a command brabo cannot read is denied.
			fmt.Fprintln(h.stderr, "brabo: "+o.reason+"; Codex has no way to ask, so it is denied")
			return 2
		}
		// Approving is exit 0 with no output.
	case "gemini before-tool":
		if o.verdict == ask {
			h.json(map[string]any{"decision": "ask", "reason": o.reason})
			return 0
		}
		h.json(map[string]any{"decision": "allow", "reason": o.reason})
	}
	return 0
}

func (h *hook) json(v any) {
	b, _ := json.Marshal(v)
	h.stdout.Write(append(b, '\n'))
}
