package agenthook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// report is an after-tool event: it tells brabo what happened to the
// actions the before-tool event got approved. It never blocks the agent:
// the tool has run; a failure to report is said on stderr and the action
// stays "decided, not reported" in brabo.
func (h *hook) report(configPath string, stdin io.Reader) int {
	in, err := readInput(stdin)
	if err != nil {
		fmt.Fprintf(h.stderr, "brabo: %v\n", err)
		return 0
	}
	ids := takeState(configPath, in)
	if len(ids) == 0 {
		return 0 // nothing brabo decided (a read in scope, a bookkeeping tool)
	}
	cfg, err := LoadConfig(configPath)
	if err != nil {
		fmt.Fprintf(h.stderr, "brabo: %v\n", err)
		return 0
	}
	proj, err := cfg.project(in.Cwd)
	if err != nil {
		fmt.Fprintf(h.stderr, "brabo: %v\n", err)
		return 0
	}
	code, output, errText := toolResult(h.agent, h.event, in)
	c := newClient(cfg.Server, proj.Token)
	for _, id := range ids {
		if err := c.Report(context.Background(), id, code, output, errText); err != nil {
			fmt.Fprintf(h.stderr, "brabo: reporting action %s: %v\n", id, err)
		}
	}
	return 0
}

var exitCodeRE = regexp.MustCompile(`(?i)exit code:? (-?\d+)`)

// toolResult reads what the agent says happened: the output, the exit code
// when the agent gives one (nil otherwise), and the error when the tool
// could not run.
func toolResult(agent, event string, in *hookInput) (code *int, output, errText string) {
	zero := 0
	var resp any
	json.Unmarshal(in.ToolResponse, &resp)
	switch r := resp.(type) {
	case string:
		output = r
	case map[string]any:
		for _, k := range []string{"stdout", "output", "llmContent", "content"} {
			if s, ok := r[k].(string); ok && s != "" {
				output += s
			}
		}
		if s, ok := r["stderr"].(string); ok && s != "" {
			output += "\n" + s
		}
		if n, ok := r["exit_code"].(float64); ok {
			c := int(n)
			code = &c
		} else if n, ok := r["exitCode"].(float64); ok {
			c := int(n)
			code = &c
		}
		if e, ok := r["error"].(string); ok && e != "" {
			errText = e
		} else if e, ok := r["error"].(map[string]any); ok {
			errText, _ = e["message"].(string)
		}
		if b, _ := r["interrupted"].(bool); b {
			errText = "interrupted"
		}
	}
	switch {
	case event == "post-tool-use-failure":
		// Claude Code: a tool that failed; a command's non-zero exit is a
		// command that ran ("Exit code 1"), anything else could not run.
		msg := in.Error
		if m := exitCodeRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &n, strings.TrimSpace(msg), ""
		}
		return nil, output, firstOf(msg, errText, "the tool failed")
	case agent == "claude" && code == nil && errText == "":
		code = &zero // Claude Code reports a failing command as PostToolUseFailure
	}
	return code, output, errText
}

// The state between a before-tool and its after-tool call: the actions
// approved for one tool call, kept in a private temporary folder of the
// user, keyed by the hook's configuration, the session and the tool call.

func stateDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("brabo-hook-%d", os.Getuid()))
}

func stateKey(configPath string, in *hookInput) string {
	id := in.ToolUseID
	if id == "" {
		// Gemini CLI gives no tool-call id: the call itself is the key.
		id = in.ToolName + "\x00" + string(in.ToolInput)
	}
	sum := sha256.Sum256([]byte(configPath + "\x00" + in.SessionID + "\x00" + id))
	return filepath.Join(stateDir(), hex.EncodeToString(sum[:16]))
}

func saveState(configPath string, in *hookInput, ids []string) {
	if len(ids) == 0 {
		return
	}
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		return
	}
	b, _ := json.Marshal(ids)
	os.WriteFile(stateKey(configPath, in), b, 0o600)
}

func takeState(configPath string, in *hookInput) []string {
	p := stateKey(configPath, in)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	os.Remove(p)
	var ids []string
	json.Unmarshal(b, &ids)
	return ids
}
