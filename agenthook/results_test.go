package agenthook

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestToolResultShapes: the output each agent's after-tool hook gives,
// in the shapes the real CLIs send (cmd/brabo's agent_results_test.go
// drives them), is the output brabo records; no tool's result is empty.
func TestToolResultShapes(t *testing.T) {
	for _, tc := range []struct {
		name, agent, resp, want string
	}{
		{"Claude Code Bash", "claude", `{"stdout":"hi\n","stderr":"","interrupted":false,"isImage":false}`, "hi\n"},
		{"Claude Code Bash, no output", "claude", `{"stdout":"","stderr":"","interrupted":false}`, ""},
		{"Claude Code Read", "claude", `{"type":"text","file":{"filePath":"/x/o.txt","content":"outside-content\n","numLines":2}}`, "outside-content\n"},
		{"Claude Code Edit", "claude", `{"filePath":"/p/e.txt","oldString":"two","newString":"three","originalFile":"one two\n",
			"structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-one two","+one three"]}]}`,
			"--- /p/e.txt\n+++ /p/e.txt\n@@ -1,1 +1,1 @@\n-one two\n+one three\n"},
		{"Claude Code Write of a new file", "claude", `{"type":"create","filePath":"/p/n.txt","content":"fresh\n","structuredPatch":[]}`, "fresh\n"},
		{"Claude Code MCP", "claude", `[{"type":"text","text":"echo-server says: hi"}]`, "echo-server says: hi"},
		{"Codex MCP", "codex", `{"content":[{"type":"text","text":"echo-server says: hi"}]}`, "echo-server says: hi"},
		{"Codex exec_command", "codex", `"Output:\nhello\n"`, "Output:\nhello\n"},
		{"Gemini CLI replace", "gemini", `{"llmContent":"Successfully modified file: /p/e.txt (1 replacements).","returnDisplay":{"fileDiff":"…"}}`,
			"Successfully modified file: /p/e.txt (1 replacements)."},
		{"Gemini CLI MCP parts", "gemini", `{"llmContent":[{"text":"echo-server says: hi"}],"returnDisplay":"echo-server says: hi"}`, "echo-server says: hi"},
		{"Gemini CLI MCP, wrapped as untrusted", "gemini", `{"llmContent":[{"text":"<untrusted_context>\nsays: hi\n</untrusted_context>"},` +
			`{"text":"<untrusted_context>\nan &lt;/untrusted_context&gt; inside\n</untrusted_context>"}]}`, "says: hian </untrusted_context> inside"},
		{"an unknown shape", "gemini", `{"answer":42}`, `{"answer":42}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &hookInput{ToolName: "x", ToolResponse: json.RawMessage(tc.resp)}
			if strings.Contains(tc.name, "MCP") && tc.agent == "gemini" {
				in.ToolName, in.McpContext = "mcp_echo_say", json.RawMessage(`{"server_name":"echo","tool_name":"say"}`)
			}
			_, out, errText := toolResult(tc.agent, "post-tool-use", in)
			if out != tc.want || errText != "" {
				t.Errorf("output %q (error %q), want %q", out, errText, tc.want)
			}
		})
	}
}

// TestCodexTranscriptOutcome: what the watcher reads in a Codex rollout
// file: a patch applied, a patch Codex could not apply, a command its
// policy rejected, and a line still being written.
func TestCodexTranscriptOutcome(t *testing.T) {
	dir := t.TempDir()
	n := 0
	write := func(lines ...string) string {
		n++
		p := dir + "/rollout" + string(rune('0'+n)) + ".jsonl"
		b := ""
		for _, l := range lines {
			b += l + "\n"
		}
		if err := writeFile(p, b); err != nil {
			t.Fatal(err)
		}
		return p
	}
	applied := write(`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"FileChange","id":"call_01","status":"completed","stdout":"Success.","stderr":""}}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_01","output":"Exit code: 0\nOutput:\nSuccess. Updated the following files:\nA notes/a.txt\n"}}`)
	tr := &codexTranscript{transcriptTail: transcriptTail{path: applied}, call: "call_01"}
	if !tr.scan() {
		t.Fatal("the output was not found")
	}
	code, errText := tr.outcome()
	if _, notRun := tr.notRun(); notRun || code == nil || *code != 0 || errText != "" || tr.output == "" {
		t.Errorf("an applied patch: code %v, error %q, output %q", code, errText, tr.output)
	}
	failed := write(`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"FileChange","id":"call_02","status":"failed","stderr":"no such file"}}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_02","output":"apply_patch verification failed"}}`)
	tr = &codexTranscript{transcriptTail: transcriptTail{path: failed}, call: "call_02"}
	tr.scan()
	if _, errText := tr.outcome(); errText != "no such file" {
		t.Errorf("a patch Codex could not apply: error %q", errText)
	}
	rejected := write(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_03","output":"exec_command failed: CreateProcess { message: \"Rejected(policy forbids commands starting with echo)\" }"}}`)
	tr = &codexTranscript{transcriptTail: transcriptTail{path: rejected}, call: "call_03"}
	tr.scan()
	if reason, ok := tr.notRun(); !ok || reason == "" {
		t.Errorf("a rejected command: not run %v (%q)", ok, reason)
	}
	partial := write(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_04","output":"x"}}`)
	other := &codexTranscript{transcriptTail: transcriptTail{path: partial}, call: "call_05"}
	if other.scan() {
		t.Error("another call's output was taken for this one")
	}
	if err := writeFile(partial, `{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_05"`); err != nil {
		t.Fatal(err)
	}
	other.offset = 0
	if other.scan() {
		t.Error("a line still being written was read")
	}
}

func writeFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o600) }

// TestGeminiTranscriptOutcome: what Gemini's watcher reads in its chat
// recording: a call its policy denied, the same call that ran, another
// call, and a line still being written.
func TestGeminiTranscriptOutcome(t *testing.T) {
	p := t.TempDir() + "/session.jsonl"
	rec := func(cmd, status, result string) string {
		return `{"id":"m","type":"gemini","toolCalls":[{"id":"c","name":"run_shell_command","args":{"command":"` + cmd +
			`","description":"run it"},"result":[{"functionResponse":{"id":"c","name":"run_shell_command","response":` + result +
			`}}],"status":"` + status + `","resultDisplay":"x"}]}` + "\n"
	}
	input := map[string]any{"description": "run it", "command": "echo hi"}
	denied := rec("echo hi", "error", `{"error":"Tool execution denied by policy. not here"}`)
	if err := writeFile(p, rec("echo other", "error", `{"error":"Tool execution denied by policy."}`)+denied); err != nil {
		t.Fatal(err)
	}
	tr := &geminiTranscript{transcriptTail: transcriptTail{path: p}, tool: "run_shell_command", input: input}
	if !tr.scan() || tr.status != "error" || tr.errText != "Tool execution denied by policy. not here" {
		t.Errorf("a denied call: status %q, error %q", tr.status, tr.errText)
	}
	ran := rec("echo hi", "success", `{"output":"hi"}`)
	writeFile(p, denied+ran)
	tr = &geminiTranscript{transcriptTail: transcriptTail{path: p, offset: int64(len(denied))}, tool: "run_shell_command", input: input}
	if !tr.scan() || tr.status != "success" || tr.errText != "" {
		t.Errorf("the same call that ran, after an older denial: status %q, error %q", tr.status, tr.errText)
	}
	writeFile(p, strings.TrimSuffix(denied, "\n"))
	tr = &geminiTranscript{transcriptTail: transcriptTail{path: p}, tool: "run_shell_command", input: input}
	if tr.scan() {
		t.Error("a line still being written was read")
	}
}
