package agenthook

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// kind is what a tool does, as brabo reads it.
type kind int

const (
	kindUnknown   kind = iota // not in the table: denied
	kindPass                  // the agent's own bookkeeping: no decision, the agent goes on
	kindShell                 // a command line brabo analyses as bash's
	kindWrite                 // a whole file written
	kindEdit                  // a file's string replaced
	kindMultiEdit             // several replacements in one file (Claude's MultiEdit)
	kindRead                  // a file or folder read: the path scope decides
	kindPatch                 // Codex's apply_patch: a write per file it touches
	kindMcp                   // an MCP server's tool
)

// The tool tables, per agent. A tool not listed is denied ("anything not in
// the table is denied"); the bookkeeping tools listed as kindPass neither
// run commands nor write files of the project, and are left to the agent.
var toolTables = map[string]map[string]kind{
	"claude": {
		"Bash": kindShell, "PowerShell": kindShell,
		"Write": kindWrite, "Edit": kindEdit, "MultiEdit": kindMultiEdit, "NotebookEdit": kindWrite,
		"Read": kindRead, "Glob": kindRead, "Grep": kindRead, "LS": kindRead,
		"TodoWrite": kindPass, "Task": kindPass, "Agent": kindPass, "AskUserQuestion": kindPass,
		"ExitPlanMode": kindPass, "EnterPlanMode": kindPass, "BashOutput": kindPass, "KillShell": kindPass,
		"KillBash": kindPass, "TaskOutput": kindPass, "TaskStop": kindPass, "WebSearch": kindPass,
		"ListMcpResourcesTool": kindPass, "ToolSearch": kindPass,
	},
	"codex": {
		"Bash": kindShell, "exec_command": kindShell, "shell": kindShell, "local_shell": kindShell,
		"apply_patch": kindPatch,
		"update_plan": kindPass, "write_stdin": kindPass, "view_image": kindRead, "web_search": kindPass,
	},
	"gemini": {
		"run_shell_command": kindShell,
		"write_file":        kindWrite, "replace": kindEdit,
		"read_file": kindRead, "read_many_files": kindRead, "list_directory": kindRead, "glob": kindRead,
		"search_file_content": kindRead, "grep_search": kindRead,
		"write_todos": kindPass, "google_web_search": kindPass, "ask_user": kindPass,
		"enter_plan_mode": kindPass, "exit_plan_mode": kindPass, "activate_skill": kindPass,
	},
}

// PassThroughTools lists an agent's tools that the hook leaves to the
// agent, sorted: the README's table and the tests read it.
func PassThroughTools(agent string) []string {
	var out []string
	for name, k := range toolTables[agent] {
		if k == kindPass {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// request is one action the hook proposes for a tool call.
type request struct {
	typ     brabo.ActionType
	payload brabo.Payload
	// nonBash is a command another shell will run: brabo's analysis is
	// bash's, so the hook never lets it through without a human.
	nonBash bool
}

// mcpTool returns the server__tool name of an MCP tool as the agent spells
// it (Claude and Codex: mcp__server__tool; Gemini: mcp_server_tool, with
// the server in mcp_context), and false for a tool that is no MCP tool.
func mcpTool(agent, name string, mcpContext json.RawMessage) (string, bool) {
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok && strings.Contains(rest, "__") {
		return rest, true
	}
	if agent == "gemini" {
		var ctx struct {
			Server string `json:"server_name"`
			Tool   string `json:"tool_name"`
		}
		json.Unmarshal(mcpContext, &ctx)
		if ctx.Server != "" {
			tool := ctx.Tool
			if tool == "" {
				tool = strings.TrimPrefix(name, "mcp_"+ctx.Server+"_")
			}
			return ctx.Server + "__" + tool, true
		}
		if rest, ok := strings.CutPrefix(name, "mcp_"); ok {
			if server, tool, ok := strings.Cut(rest, "_"); ok {
				return server + "__" + tool, true
			}
		}
	}
	return "", false
}

// field returns the first non-empty string among the keys of in.
func field(in map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := in[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// requests maps one tool call to the actions brabo decides; local is true
// for a read, which the path scope decides first (read.go).
func requests(agent string, in *hookInput, root string) (reqs []request, k kind, err error) {
	args := map[string]any{}
	if len(in.ToolInput) > 0 && string(in.ToolInput) != "null" {
		if err := json.Unmarshal(in.ToolInput, &args); err != nil {
			// apply_patch may come as a bare string.
			var s string
			if json.Unmarshal(in.ToolInput, &s) != nil {
				return nil, kindUnknown, fmt.Errorf("the tool's input is not a JSON object: %w", err)
			}
			args["input"] = s
		}
	}
	if tool, ok := mcpTool(agent, in.ToolName, in.McpContext); ok {
		extra, _ := json.Marshal(args)
		return []request{{typ: brabo.McpTool, payload: brabo.Payload{Tool: tool, Extra: extra}}}, kindMcp, nil
	}
	k = toolTables[agent][in.ToolName]
	cwd := in.Cwd
	switch k {
	case kindUnknown, kindPass:
		return nil, k, nil
	case kindShell:
		cmd := field(args, "command", "cmd")
		if cmd == "" {
			if argv, ok := args["command"].([]any); ok {
				cmd = argvLine(argv)
			}
		}
		if cmd == "" {
			return nil, k, fmt.Errorf("%s without a command", in.ToolName)
		}
		if isApplyPatch(cmd) {
			// Codex runs `apply_patch <<'EOF' … EOF` itself, without a
			// shell: it is a patch, one write per file.
			return patchRequests(cmd, cwd, root)
		}
		dir := cwd
		if d := field(args, "workdir", "dir_path", "directory"); d != "" {
			dir = resolve(cwd, d)
		}
		return []request{{typ: brabo.Terminal, payload: brabo.Payload{Command: cmd, Cwd: relTo(root, dir)},
			nonBash: in.ToolName == "PowerShell" || !bashRuns(agent)}}, k, nil
	case kindRead:
		p := field(args, "file_path", "absolute_path", "notebook_path", "path", "dir_path", "directory")
		if p == "" {
			p = cwd
		}
		return []request{{typ: brabo.ReadFile, payload: brabo.Payload{Path: realPath(root, resolve(cwd, p))}}}, k, nil
	case kindPatch:
		text := field(args, "input", "patch", "command")
		if text == "" {
			if argv, ok := args["command"].([]any); ok && len(argv) > 1 {
				text, _ = argv[len(argv)-1].(string)
			}
		}
		return patchRequests(text, cwd, root)
	}
	// A write: the whole new content where it can be known, so that a
	// permissions.json write is checked as a whole file.
	target := field(args, "file_path", "notebook_path", "absolute_path", "path")
	if target == "" {
		return nil, k, fmt.Errorf("%s without a file path", in.ToolName)
	}
	abs := resolve(cwd, target)
	var content string
	switch k {
	case kindWrite:
		content = field(args, "content", "new_source")
	case kindEdit:
		content = edited(abs, []edit{editOf(args)})
	case kindMultiEdit:
		var edits []edit
		if list, ok := args["edits"].([]any); ok {
			for _, e := range list {
				if m, ok := e.(map[string]any); ok {
					edits = append(edits, editOf(m))
				}
			}
		}
		content = edited(abs, edits)
	}
	return []request{{typ: brabo.WriteFile, payload: brabo.Payload{Path: realPath(root, abs), Content: content}}}, k, nil
}

// isApplyPatch reports whether a shell command is Codex's apply_patch
// invocation, which Codex intercepts and applies itself.
func isApplyPatch(cmd string) bool {
	c := strings.TrimSpace(cmd)
	return (strings.HasPrefix(c, "apply_patch") || strings.HasPrefix(c, "applypatch")) && strings.Contains(c, "*** Begin Patch")
}

// patchRequests is one write_file per file a patch touches.
func patchRequests(text, cwd, root string) ([]request, kind, error) {
	files, err := patchFiles(text)
	if err != nil {
		return nil, kindPatch, err
	}
	var reqs []request
	for _, f := range files {
		reqs = append(reqs, request{typ: brabo.WriteFile, payload: brabo.Payload{Path: realPath(root, resolve(cwd, f.path)), Content: f.content}})
	}
	return reqs, kindPatch, nil
}

// bashRuns reports whether the agent's shell tool runs bash here: brabo's
// analysis is bash's. Claude Code runs CLAUDE_CODE_SHELL (brabo install
// pins it to bash), else the user's $SHELL; Codex runs the user's shell;
// Gemini CLI runs bash on Linux.
func bashRuns(agent string) bool {
	shell := os.Getenv("SHELL")
	switch agent {
	case "gemini":
		return true
	case "claude":
		if s := os.Getenv("CLAUDE_CODE_SHELL"); s != "" {
			shell = s
		}
	}
	return shell == "" || filepath.Base(shell) == "bash"
}

// argvLine joins an argv (Codex's shell tool) into a command line, quoting
// each word for bash.
func argvLine(argv []any) string {
	words := make([]string, 0, len(argv))
	for _, a := range argv {
		s, _ := a.(string)
		words = append(words, "'"+strings.ReplaceAll(s, "'", `'\''`)+"'")
	}
	// bash -lc '<script>' is the script itself.
	if len(argv) == 3 {
		if sh, _ := argv[0].(string); filepath.Base(sh) == "bash" || filepath.Base(sh) == "sh" {
			if flag, _ := argv[1].(string); flag == "-lc" || flag == "-c" {
				s, _ := argv[2].(string)
				return s
			}
		}
	}
	return strings.Join(words, " ")
}

// resolve makes p absolute against the session's folder.
func resolve(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// realPath resolves the symlinks of an absolute path (of its folder when
// the file does not exist yet): an edit of a link writes where the link
// points, and that is what brabo must decide. The result is relative to
// root when it lies inside, absolute otherwise.
func realPath(root, abs string) string {
	real := abs
	// Follow the file's own links first, a dangling one too: a write
	// through it creates its target, wherever that is.
	for i := 0; i < 40; i++ {
		fi, err := os.Lstat(real)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(real)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(real), target)
		}
		real = filepath.Clean(target)
	}
	if r, err := filepath.EvalSymlinks(real); err == nil {
		real = r
	} else if d, err := filepath.EvalSymlinks(filepath.Dir(real)); err == nil {
		real = filepath.Join(d, filepath.Base(real))
	}
	for _, r := range []string{root, evalOr(root)} {
		if real == r {
			return "."
		}
		if rel, ok := strings.CutPrefix(real, r+string(filepath.Separator)); ok {
			return rel
		}
	}
	return real
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// relTo is dir relative to root when inside, else dir itself.
func relTo(root, dir string) string {
	if dir == "" {
		return ""
	}
	if rel, err := filepath.Rel(root, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return dir
}

// edit is one string replacement.
type edit struct {
	old, new string
	all      bool
}

func editOf(m map[string]any) edit {
	all, _ := m["replace_all"].(bool)
	if b, ok := m["allow_multiple"].(bool); ok {
		all = b
	}
	return edit{old: field(m, "old_string"), new: field(m, "new_string"), all: all}
}

// edited is the file's content after the edits, or a description of them
// when the file cannot be read or a string is not found (brabo then
// decides on the path, and a permissions.json edit it cannot check is
// refused).
func edited(path string, edits []edit) string {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return describeEdits(edits)
	}
	s := string(b)
	for _, e := range edits {
		if e.old == "" {
			if s != "" {
				return describeEdits(edits)
			}
			s = e.new
			continue
		}
		if !strings.Contains(s, e.old) {
			return describeEdits(edits)
		}
		if e.all {
			s = strings.ReplaceAll(s, e.old, e.new)
		} else {
			s = strings.Replace(s, e.old, e.new, 1)
		}
	}
	return s
}

func describeEdits(edits []edit) string {
	var b strings.Builder
	for _, e := range edits {
		fmt.Fprintf(&b, "--- replace\n%s\n+++ with\n%s\n", e.old, e.new)
	}
	return b.String()
}

// descriptionKeys are where each agent's tool input carries the model's
// own words about the call: Claude Code's Bash and Gemini CLI's
// run_shell_command have a description; Codex's shell tool a
// justification (sent when it asks to run outside its sandbox).
var descriptionKeys = map[string][]string{
	"claude": {"description"},
	"gemini": {"description"},
	"codex":  {"justification", "description"},
}

// agentWords is the agent's description of a tool call, "" when its input
// has none, cut to brabo.MaxDescription bytes at a character's start so
// that a long one never costs the call (the server refuses a longer one).
func agentWords(agent string, input json.RawMessage) string {
	var args map[string]any
	if json.Unmarshal(input, &args) != nil {
		return ""
	}
	s := strings.TrimSpace(strings.ToValidUTF8(field(args, descriptionKeys[agent]...), "\uFFFD"))
	if len(s) <= brabo.MaxDescription {
		return s
	}
	n := brabo.MaxDescription - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
