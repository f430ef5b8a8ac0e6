package agenthook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// The state between a before-tool and its after-tool call: the actions
// approved for one tool call, kept in a private temporary folder of the
// user, keyed by the hook's configuration, the session and the tool call.
// Whoever takes it reports: the after-tool hook, Claude Code's
// post-tool-batch for a call that never reached it, or Codex's watcher
// (watch.go) for a call whose result only its transcript holds.

// callState is what a before-tool leaves for whoever reports the call.
type callState struct {
	IDs []string `json:"ids"`
	// The call, for a reporter that is not its after-tool hook.
	SessionID  string `json:"sessionId,omitempty"`
	ToolUseID  string `json:"toolUseId,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	// Gemini CLI gives no call id: its watcher finds the call in its
	// transcript by tool and input.
	ToolName  string          `json:"toolName,omitempty"`
	ToolInput json.RawMessage `json:"toolInput,omitempty"`
}

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

// saveState records the approved actions of the call and returns the
// state file's path ("" when there is none).
func saveState(configPath string, in *hookInput, ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	if err := os.MkdirAll(stateDir(), 0o700); err != nil {
		return ""
	}
	st := callState{IDs: ids, SessionID: in.SessionID, ToolUseID: in.ToolUseID, Cwd: in.Cwd, Transcript: in.TranscriptPath}
	if in.ToolUseID == "" && in.TranscriptPath != "" {
		st.ToolName, st.ToolInput = in.ToolName, in.ToolInput
	}
	b, _ := json.Marshal(st)
	p := stateKey(configPath, in)
	if os.WriteFile(p, b, 0o600) != nil {
		return ""
	}
	return p
}

func takeState(configPath string, in *hookInput) *callState {
	return takeStateFile(stateKey(configPath, in))
}

// takeStateFile claims a call's state, once: of two reporters, the one
// whose rename wins reports, the other finds nothing.
func takeStateFile(p string) *callState {
	claimed := p + ".taken"
	if os.Rename(p, claimed) != nil {
		return nil
	}
	b, err := os.ReadFile(claimed)
	os.Remove(claimed)
	if err != nil {
		return nil
	}
	st := &callState{}
	if json.Unmarshal(b, st) != nil {
		// A state written by a brabo before this one: the ids alone.
		st = &callState{}
		if json.Unmarshal(b, &st.IDs) != nil {
			return nil
		}
	}
	if len(st.IDs) == 0 {
		return nil
	}
	return st
}

// peekState reads a call's state without taking it.
func peekState(p string) *callState {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	st := &callState{}
	if json.Unmarshal(b, st) != nil {
		return nil
	}
	return st
}
