package agenthook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Codex runs some calls its PreToolUse hook allowed without ever running
// its PostToolUse: an apply_patch sent through exec_command (Codex applies
// the patch itself), and a command its own policy (execpolicy's .rules)
// rejects after the hook allowed it. Their results are only in Codex's
// transcript (the rollout file each hook call names). So, after allowing
// a call, Codex's hook starts a watcher of its own, detached from Codex:
// it waits for the call's output in the transcript and, if no PostToolUse
// took the call's state by then, reports it from there, each file of a
// patch as its own action: executed with the output the model read, or
// not_run with Codex's reason when Codex did not start it.

// How long the watcher waits for a call's output, how long it then leaves
// PostToolUse to take the call, and how often it looks.
const (
	watchFor   = 2 * time.Minute
	watchGrace = 3 * time.Second
	watchPoll  = 200 * time.Millisecond
)

// watch is `brabo hook codex watch --config FILE --state FILE`, which
// the pre-tool-use hook starts (startWatcher).
func (h *hook) watch(configPath, statePath string) int {
	if h.agent == "gemini" {
		return h.watchGemini(configPath, statePath)
	}
	st := peekState(statePath)
	if st == nil || st.Transcript == "" || st.ToolUseID == "" {
		return 0
	}
	tr := &codexTranscript{transcriptTail: transcriptTail{path: st.Transcript}, call: st.ToolUseID}
	for deadline := time.Now().Add(watchFor); time.Now().Before(deadline); time.Sleep(watchPoll) {
		if _, err := os.Stat(statePath); err != nil {
			return 0 // reported by PostToolUse
		}
		if !tr.scan() {
			continue
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
		for _, id := range st.IDs {
			var err error
			if reason, ok := tr.notRun(); ok {
				err = c.ReportNotRun(context.Background(), id, reason)
			} else {
				code, errText := tr.outcome()
				err = c.Report(context.Background(), id, code, tr.output, errText)
			}
			if err != nil {
				fmt.Fprintf(h.stderr, "brabo: reporting action %s: %v\n", id, err)
			}
		}
		return 0
	}
	return 0 // a call still running: its PostToolUse reports it
}

// codexTranscript reads one call's result in a Codex rollout file, from
// where it last stopped.
type codexTranscript struct {
	transcriptTail
	call string
	// What the file said of the call: the output its model read, and for
	// a patch Codex's status of the file change.
	output      string
	found       bool
	patchStatus string
	patchErr    string
}

// scan reads the lines added since the last scan and reports whether the
// call's output is there.
func (t *codexTranscript) scan() bool {
	t.readLines(t.line, func() bool { return false })
	return t.found
}

// transcriptTail reads a JSON-lines file an agent appends to (Codex's
// rollout, Gemini CLI's chat recording), on from where it last stopped.
type transcriptTail struct {
	path   string
	offset int64
}

// readLines hands line each complete line added since the last call, until
// done reports that what is sought was found; a line still being written
// is left for the next call. A file it cannot read yields no line.
func (t *transcriptTail) readLines(line func([]byte), done func() bool) {
	f, err := os.Open(t.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return
	}
	for !done() {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // a line still being written
		}
		line(b[:i])
		t.offset += int64(i + 1)
		b = b[i+1:]
	}
}

func (t *codexTranscript) line(b []byte) {
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
			Item   struct {
				Type   string `json:"type"`
				ID     string `json:"id"`
				Status string `json:"status"`
				Stderr string `json:"stderr"`
			} `json:"item"`
		} `json:"payload"`
	}
	if !bytes.Contains(b, []byte(t.call)) || json.Unmarshal(b, &l) != nil {
		return
	}
	p := l.Payload
	switch {
	case p.Type == "function_call_output" || p.Type == "custom_tool_call_output":
		if p.CallID == t.call && !t.found {
			var out any
			json.Unmarshal(p.Output, &out)
			t.output, t.found = responseText(out), true
		}
	case p.Type == "item_completed" && p.Item.Type == "FileChange" && p.Item.ID == t.call:
		t.patchStatus, t.patchErr = p.Item.Status, p.Item.Stderr
	}
}

// notRun reports whether Codex did not start the call, with its reason:
// its policy rejected it, or it could not start the process.
func (t *codexTranscript) notRun() (string, bool) {
	if strings.HasPrefix(t.output, "exec_command failed:") && t.patchStatus == "" {
		return "Codex did not run it: " + clip(strings.TrimSpace(t.output), maxAgentReason), true
	}
	return "", false
}

var processExitRE = regexp.MustCompile(`(?i)(?:exited with code|exit code:?) (-?\d+)`)

// outcome is the exit code the output names (nil when it names none) and,
// for a patch Codex could not apply, the error.
func (t *codexTranscript) outcome() (*int, string) {
	if t.patchStatus != "" && t.patchStatus != "completed" {
		return nil, firstOf(strings.TrimSpace(t.patchErr), "Codex could not apply the patch: "+t.patchStatus)
	}
	// The last exit code the output names: Codex's apply_patch through
	// exec_command prints the interception's, then the patch's.
	ms := processExitRE.FindAllStringSubmatch(t.output, -1)
	if len(ms) == 0 {
		return nil, ""
	}
	n, _ := strconv.Atoi(ms[len(ms)-1][1])
	return &n, ""
}
