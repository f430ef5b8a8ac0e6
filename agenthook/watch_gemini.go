package agenthook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"
)

// Gemini CLI runs BeforeTool, then its own policy check, and AfterTool
// only for a tool it ran: a call a rule of the user's policy files denies
// after brabo's hook allowed it gets "Tool execution denied by policy." and
// no hook event at all. Gemini writes it in its chat recording (the
// transcript_path of every hook call, JSON lines): the call under
// toolCalls, status "error". So, after allowing a call, Gemini's hook
// starts a watcher too (startWatcher): it waits for the call's record and,
// when Gemini's policy refused it and no AfterTool took the call's state,
// reports it not_run with Gemini's message. Any other outcome is left to
// AfterTool.

// geminiPolicyDenial starts the result Gemini CLI gives a call its policy
// denied (getPolicyDenialError; a rule's denyMessage follows it).
const geminiPolicyDenial = "Tool execution denied by policy."

func (h *hook) watchGemini(configPath, statePath string) int {
	st := peekState(statePath)
	if st == nil || st.Transcript == "" || st.ToolName == "" {
		return 0
	}
	// Gemini records a call once it completed: what is there now is older.
	tr := &geminiTranscript{transcriptTail: transcriptTail{path: st.Transcript}, tool: st.ToolName}
	json.Unmarshal(st.ToolInput, &tr.input)
	if fi, err := os.Stat(st.Transcript); err == nil {
		tr.offset = fi.Size()
	}
	for deadline := time.Now().Add(watchFor); time.Now().Before(deadline); time.Sleep(watchPoll) {
		if _, err := os.Stat(statePath); err != nil {
			return 0 // reported by AfterTool
		}
		if !tr.scan() {
			continue
		}
		if !strings.HasPrefix(tr.errText, geminiPolicyDenial) {
			return 0 // it ran, or was cancelled: AfterTool's, or unreported
		}
		time.Sleep(watchGrace)
		if st = takeStateFile(statePath); st == nil {
			return 0
		}
		c, err := reportClient(configPath, st.Cwd)
		if err != nil {
			fmt.Fprintf(h.stderr, "brabo: %v\n", err)
			return 0
		}
		reason := "Gemini CLI did not run it: " + clip(tr.errText, maxAgentReason)
		for _, id := range st.IDs {
			if err := c.ReportNotRun(context.Background(), id, reason); err != nil {
				fmt.Fprintf(h.stderr, "brabo: reporting action %s: %v\n", id, err)
			}
		}
		return 0
	}
	return 0
}

// geminiTranscript finds one call's record in Gemini CLI's chat
// recording, reading on from where it last stopped.
type geminiTranscript struct {
	transcriptTail
	tool    string
	input   any
	status  string // the call's final status: success, error, cancelled
	errText string
}

// scan reads the lines added since the last scan and reports whether the
// call's record is there.
func (t *geminiTranscript) scan() bool {
	t.readLines(t.line, func() bool { return t.status != "" })
	return t.status != ""
}

func (t *geminiTranscript) line(b []byte) {
	if !bytes.Contains(b, []byte(`"toolCalls"`)) {
		return
	}
	var m struct {
		ToolCalls []struct {
			Name          string          `json:"name"`
			Args          any             `json:"args"`
			Status        string          `json:"status"`
			ResultDisplay json.RawMessage `json:"resultDisplay"`
			Result        []struct {
				FunctionResponse struct {
					Response struct {
						Error string `json:"error"`
					} `json:"response"`
				} `json:"functionResponse"`
			} `json:"result"`
		} `json:"toolCalls"`
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	for _, c := range m.ToolCalls {
		if c.Name != t.tool || !reflect.DeepEqual(c.Args, t.input) ||
			(c.Status != "success" && c.Status != "error" && c.Status != "cancelled") {
			continue
		}
		t.status = c.Status
		for _, r := range c.Result {
			if e := r.FunctionResponse.Response.Error; e != "" {
				t.errText = strings.TrimSpace(e)
			}
		}
		if t.errText == "" && c.Status == "error" {
			var s string
			json.Unmarshal(c.ResultDisplay, &s)
			t.errText = strings.TrimSpace(s)
		}
		return
	}
}
