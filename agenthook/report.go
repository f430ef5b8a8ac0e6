package agenthook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/brabo-dev/brabo/client"
)

// report is an after-tool event: it tells brabo what happened to the
// actions the before-tool event got approved. It never blocks the agent:
// the tool has run; a failure to report is said on stderr and the action
// stays "decided, not reported" in brabo.
func (h *hook) report(configPath string, stdin io.Reader) int {
	if h.event == "post-tool-batch" {
		return h.batch(configPath, stdin)
	}
	in, err := readInput(stdin)
	if err != nil {
		fmt.Fprintf(h.stderr, "brabo: %v\n", err)
		return 0
	}
	st := takeState(configPath, in)
	if st == nil {
		return 0 // nothing brabo decided (a read in scope, a bookkeeping tool)
	}
	c, err := reportClient(configPath, in.Cwd)
	if err != nil {
		fmt.Fprintf(h.stderr, "brabo: %v\n", err)
		return 0
	}
	code, output, errText := toolResult(h.agent, h.event, in)
	for _, id := range st.IDs {
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
	output = responseText(resp)
	if _, mcp := mcpTool(agent, in.ToolName, in.McpContext); mcp && agent == "gemini" {
		output = untrusted(output)
	}
	if r, ok := resp.(map[string]any); ok {
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

var untrustedRE = regexp.MustCompile(`(?s)<untrusted_context>\n(.*?)\n</untrusted_context>`)

// untrusted takes off the <untrusted_context> wrapper Gemini CLI puts
// around each text an MCP tool returned before its model reads it, and
// undoes the escape of a closing tag inside: brabo records the tool's own
// text, as it does for the other agents.
func untrusted(s string) string {
	return untrustedRE.ReplaceAllStringFunc(s, func(m string) string {
		inner := untrustedRE.FindStringSubmatch(m)[1]
		return strings.ReplaceAll(inner, "&lt;/untrusted_context&gt;", "</untrusted_context>")
	})
}

// responseText is the output of a tool as its agent hands it to the
// after-tool hook, whatever the tool: a command's stdout and stderr, a
// file Claude Code's Read returned (file.content), the change its Edit
// or Write made (structuredPatch, as a unified diff), an MCP tool's
// content blocks (Claude Code: a list of {type, text}; Gemini CLI: its
// llmContent parts; an MCP result's content), and for any other shape the
// response's JSON itself, so that no tool's result is recorded empty.
// brabo caps what it keeps (pipeline.MaxReportedOutput).
func responseText(resp any) string {
	switch r := resp.(type) {
	case nil:
		return ""
	case string:
		return r
	case []any:
		var b strings.Builder
		for _, e := range r {
			b.WriteString(responseText(e))
		}
		return b.String()
	case map[string]any:
		// A content block or a Gemini part: its text.
		if s, ok := r["text"].(string); ok {
			return s
		}
		var out string
		shell := false
		for _, k := range []string{"stdout", "output", "llmContent", "content"} {
			switch v := r[k].(type) {
			case string:
				shell = shell || k == "stdout" || k == "output"
				out += v
			case []any, map[string]any:
				if k != "content" || r["structuredPatch"] == nil {
					out += responseText(v)
				}
			}
		}
		if s, ok := r["stderr"].(string); ok {
			shell = true
			if s != "" {
				out += "\n" + s
			}
		}
		if f, ok := r["file"].(map[string]any); ok && out == "" {
			out = responseText(f["content"])
		}
		if patch, ok := r["structuredPatch"].([]any); ok && len(patch) > 0 {
			out = unifiedDiff(r["filePath"], patch)
		}
		if out != "" || shell {
			return out
		}
	}
	b, _ := json.Marshal(resp)
	return string(b)
}

// unifiedDiff renders Claude Code's structuredPatch hunks.
func unifiedDiff(path any, hunks []any) string {
	p, _ := path.(string)
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", p, p)
	for _, h := range hunks {
		m, _ := h.(map[string]any)
		n := func(k string) int { f, _ := m[k].(float64); return int(f) }
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", n("oldStart"), n("oldLines"), n("newStart"), n("newLines"))
		lines, _ := m["lines"].([]any)
		for _, l := range lines {
			s, _ := l.(string)
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

// reportClient is the client of the project cwd is in, with its hook
// agent's token.
func reportClient(configPath, cwd string) (*client.Client, error) {
	cfg, err := LoadConfig(configPath)
	if err != nil {
		return nil, err
	}
	proj, err := cfg.project(cwd)
	if err != nil {
		return nil, err
	}
	return newClient(cfg.Server, proj.Token), nil
}
