package policy

import (
	"errors"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"strings"

	"github.com/brabo-dev/brabo"
)

// The decide-only types of DESIGN §9 ("Typed content"): read_file and
// mcp_tool, proposed by agents that run their tools themselves.

// toolPattern is the compiled content of McpTool(…): an exact tool name,
// server__tool, or every tool of one server, server__*. The zero value
// (McpTool()) matches every tool.
type toolPattern struct {
	name   string
	prefix bool // name is "server__": every tool of the server
}

var errToolPattern = errors.New(`an MCP tool is server__tool or server__* ("github__create_issue", "github__*")`)

// parseToolPattern compiles the content of McpTool(…).
func parseToolPattern(content string) (toolPattern, error) {
	if content == "" {
		return toolPattern{}, nil
	}
	server, tool, ok := strings.Cut(content, "__")
	if !ok || !plainToolName(server) {
		return toolPattern{}, errToolPattern
	}
	if tool == "*" {
		return toolPattern{name: server + "__", prefix: true}, nil
	}
	if !plainToolName(tool) {
		return toolPattern{}, errToolPattern
	}
	return toolPattern{name: content}, nil
}

// plainToolName reports whether s is a server's or a tool's name: letters,
// digits, '_', '-' and '.'.
func plainToolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
		default:
			return false
		}
	}
	return true
}

// match reports whether the pattern names tool.
func (p toolPattern) match(tool string) bool {
	switch {
	case p.name == "":
		return true
	case p.prefix:
		return strings.HasPrefix(tool, p.name) && len(tool) > len(p.name)
	}
	return tool == p.name
}

// CheckMcpToolPattern says why s is not a tool a maintainer can map
// (server__tool or server__*), or nil.
func CheckMcpToolPattern(s string) error {
	if s == "" {
		return errToolPattern
	}
	_, err := parseToolPattern(s)
	return err
}

// McpToolMapped reports whether one of the mapped entries (server__tool or
// server__*; see CheckMcpToolPattern) names tool. An invalid entry maps
// nothing.
func McpToolMapped(mapped []string, tool string) bool {
	if tool == "" {
		return false
	}
	for _, m := range mapped {
		if p, err := parseToolPattern(m); err == nil && m != "" && p.match(tool) {
			return true
		}
	}
	return false
}

// readInScopeReason is the reason of a read the path scope approves.
const readInScopeReason = "scope: a read inside the project folder"

// defaultReason is the base of every decision (DESIGN §4.1).
const defaultReason = "default: no rule approves it"

// decideOnlyTypes applies what is particular to read_file and mcp_tool,
// after the file and before nothing else (they have no caps of their own
// beyond these):
//   - read_file is decided by the path scope when the file and the agent's
//     autonomy are silent: a read inside the project folder is approved, a
//     read outside it or of a read-protected path asks, in every mode;
//   - mcp_tool needs a maintainer to approve unless a maintainer mapped
//     the tool (DESIGN §9, "Effective role").
func decideOnlyTypes(d *brabo.Decision, in Input) {
	switch in.Type {
	case brabo.McpTool:
		if !in.McpMapped {
			d.RequiredRole = brabo.Maintainer
		}
	case brabo.ReadFile:
		root := in.Scope.Root
		abs := in.Path
		if !strings.HasPrefix(abs, "/") {
			abs = path.Join(root, abs)
		}
		abs = path.Clean(abs)
		_, inScope := relativeTo(in.Path, root)
		inScope = (inScope || root != "" && abs == path.Clean(root)) && CheckRoot(root) == nil
		row, protected := in.Protect.protectedPath(abs, in.Path, root, false)
		protected = protected && row.ReadProtected
		if d.Policy == brabo.RequireApproval && d.Reason == defaultReason && inScope && !protected {
			d.Policy, d.Reason = brabo.AutoApprove, readInScopeReason
		}
		if d.Policy != brabo.AutoApprove {
			return
		}
		switch {
		case protected:
			d.Policy, d.Reason = brabo.RequireApproval, "protected: "+protectedHit{path: in.Path, row: row}.reason(false)
		case !inScope:
			d.Policy, d.Reason = brabo.RequireApproval, "scope: a read outside the project folder: "+shell.Clip(in.Path, 200)
		}
	}
}
