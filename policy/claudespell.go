package policy

// Claude Code's spellings of a permission rule, read as brabo's labels where
// the meaning is the same (DESIGN §9, "Typed content"; docs/permissions.md,
// "Other agents' spellings"):
//
//	Bash(cmd)                 Terminal(cmd)
//	Read(path), Read          ReadFile(path), ReadFile()
//	Edit(path), Write(path)   WriteFile(path); Edit and Write alone WriteFile()
//	mcp__server__tool         McpTool(server__tool); mcp__server McpTool(server__*)
//	WebFetch(domain:host)     Network(host)
//
// A Claude Code path follows its rules: //abs is absolute, ~/p is under the
// home folder, /p and ./p and p are in the project folder (a permissions.json
// sits at the project's root, where a project's .claude/settings.json is
// read from). An absolute or home path names a path outside the project
// folder: a deny holds it back, an ask asks (brabo asks for those anyway), an
// allow is dropped, since brabo's allow never reaches outside the scope.
//
// Claude Code reads a path the way .gitignore does, and its own pages read a
// name with no '/' (".env", "*.key") as relative to the folder while the
// gitignore rule matches it at any depth, and a match on a folder as a match
// of everything under it. brabo takes, in each list, the reading that lets
// less through: in deny and ask such a name matches at any depth and a
// matched folder covers its contents; in allow it names only the path
// written, at the project's root.
//
// An entry in Claude Code's spelling that brabo has no meaning for (Bash
// alone, WebSearch, Glob, a path with '?' or '[…]', a '*' inside a Bash
// command) is a foreignError: dropped with a warning in allow, an error of
// the file in deny and ask, so no deny or question is ever dropped.

import (
	"errors"
	"path"
	"strings"

	"github.com/brabo-dev/brabo"
)

// foreignError is an entry in another agent's spelling that brabo cannot
// read.
type foreignError struct{ why string }

func (e *foreignError) Error() string { return e.why }

func foreign(why string) error { return &foreignError{why: why} }

// claudeTools are the tool names of Claude Code's permission rules: an
// entry with one of these labels is in Claude Code's spelling.
var claudeTools = map[string]bool{
	"Bash": true, "Read": true, "Edit": true, "Write": true, "MultiEdit": true,
	"NotebookEdit": true, "NotebookRead": true, "WebFetch": true, "WebSearch": true,
	"Glob": true, "Grep": true, "LS": true, "Task": true, "Agent": true,
	"TodoWrite": true, "Skill": true, "SlashCommand": true, "BashOutput": true,
	"KillShell": true, "KillBash": true, "ExitPlanMode": true,
}

// Where a path pattern's path starts.
const (
	pathBaseProject = ""  // the project folder (brabo's own spelling)
	pathBaseRoot    = "/" // the file system's root: Claude Code's //abs
	pathBaseHome    = "~" // the home folder: Claude Code's ~/p
)

// claudeLabel returns the label and content of an entry in Claude Code's
// spelling, with whether it is one: "Read(src/**)" is Read and src/**,
// "Read" is Read and no content, "mcp__github__x" is mcp__ and github__x.
func claudeLabel(src string) (label, content string, paren, ok bool) {
	if strings.HasPrefix(src, "mcp__") {
		return "mcp__", src[len("mcp__"):], false, true
	}
	if claudeTools[src] {
		return src, "", false, true
	}
	open := strings.IndexByte(src, '(')
	if open > 0 && strings.HasSuffix(src, ")") && claudeTools[src[:open]] {
		return src[:open], src[open+1 : len(src)-1], true, true
	}
	return "", "", false, false
}

// parseClaudePattern compiles an entry in Claude Code's spelling for list k;
// ok is false when src is not in that spelling. Its synonym is the entry in
// brabo's spelling when brabo's own grammar can say it (ReadFile(src/**)),
// or a description of what it is read as otherwise.
func parseClaudePattern(src string, k listKind) (p pattern, ok bool, err error) {
	label, content, paren, ok := claudeLabel(src)
	if !ok {
		return p, false, nil
	}
	p.source = src
	switch label {
	case "Bash":
		if !paren || strings.TrimSpace(content) == "" {
			return p, true, foreign("Bash alone allows every command; brabo has no pattern for every command: name one, Bash(pnpm test:*)")
		}
		content = claudeBashContent(content)
		if strings.Contains(strings.ReplaceAll(content, ":*", ""), " *") || strings.HasPrefix(content, "*") {
			return p, true, foreign("a '*' standing for words inside a Bash command is not read by brabo; a '*' ends a pattern (Bash(npm run:*))")
		}
		p.typ, p.synonym = brabo.Terminal, "Terminal("+content+")"
		toks, err := patternTokens(content)
		if err != nil {
			return p, true, foreign(err.Error())
		}
		p.tokens, p.readOnly = toks, isSeededReadOnly(toks)
		return p, true, nil
	case "Read", "Edit", "Write":
		p.typ, p.synonym = brabo.WriteFile, "WriteFile"
		if label == "Read" {
			p.typ, p.synonym = brabo.ReadFile, "ReadFile"
		}
		if !paren || content == "" {
			p.synonym += "()"
			return p, true, nil
		}
		pp, native, err := parseClaudePath(content, k)
		if err != nil {
			return p, true, err
		}
		p.path = pp
		switch {
		case native != "":
			p.synonym += "(" + native + ")"
		case pp.els == nil:
			p.synonym += "()"
		default:
			p.synonym += " " + pp.describe()
		}
		return p, true, nil
	case "mcp__":
		if paren {
			return p, true, foreign("an MCP tool is written mcp__server__tool, without parentheses")
		}
		tool := content
		if !strings.Contains(tool, "__") {
			tool += "__*" // mcp__server: every tool of the server
		}
		tp, err := parseToolPattern(tool)
		if err != nil {
			return p, true, foreign(err.Error())
		}
		p.typ, p.tool, p.synonym = brabo.McpTool, tp, "McpTool("+tool+")"
		return p, true, nil
	case "WebFetch":
		host, isDomain := strings.CutPrefix(content, "domain:")
		if !paren || !isDomain {
			return p, true, foreign("brabo reads WebFetch(domain:host) as Network(host); WebFetch alone, or with a URL, names no host")
		}
		np, err := parseNetPattern(host)
		if err != nil {
			return p, true, foreign(err.Error())
		}
		p.typ, p.net, p.synonym = networkType, np, NetworkLabel+"("+host+")"
		return p, true, nil
	}
	return p, true, foreign("Claude Code's " + label + " has no brabo counterpart")
}

// claudeBashContent is a Bash rule's command as brabo's Terminal reads it:
// Claude Code's trailing " *" (the words after are optional: "npm *"
// matches npm too) is brabo's prefix match, "npm".
func claudeBashContent(content string) string {
	if c, ok := strings.CutSuffix(content, " *"); ok && strings.TrimSpace(c) != "" {
		return strings.TrimRight(c, " ")
	}
	return content
}

// parseClaudePath compiles a Claude Code path for list k, and returns the
// same pattern in brabo's spelling when brabo's grammar can say it ("" when
// it cannot; "" with no elements is every path of the project).
func parseClaudePath(content string, k listKind) (pp pathPattern, native string, err error) {
	if strings.ContainsAny(content, "?[]{}\\") || strings.HasPrefix(content, "!") {
		return pp, "", foreign("brabo reads '*' and '**' in a path; '?', '[…]', '{…}', '\\' and '!' are not read")
	}
	base, rel := pathBaseProject, ""
	switch {
	case strings.HasPrefix(content, "//"):
		base, rel = pathBaseRoot, strings.TrimLeft(content, "/")
	case content == "~" || strings.HasPrefix(content, "~/"):
		base, rel = pathBaseHome, strings.TrimPrefix(strings.TrimPrefix(content, "~"), "/")
	case strings.HasPrefix(content, "~"):
		return pp, "", foreign("~user paths are not read: write ~/path or //absolute/path")
	case strings.HasPrefix(content, "/"):
		rel = content[1:] // the settings file's root: the project folder
	default:
		rel = strings.TrimPrefix(content, "./")
	}
	dir := strings.HasSuffix(rel, "/")
	rel = strings.TrimSuffix(rel, "/")
	// A '/' before the end anchors the name where it is written; so does a
	// leading '/', and an absolute or home path.
	anchored := base != pathBaseProject || strings.HasPrefix(content, "/") || strings.Contains(rel, "/")
	switch {
	case rel == "" && base == pathBaseProject:
		return pp, "", foreign("the path names the project folder itself: write Read or Edit alone for every path")
	case rel == "" || rel == "**":
		pp.els = []string{"**"}
	case path.Clean(rel) != rel || strings.HasPrefix(rel, "/"):
		return pp, "", foreign("the path is not clean (\".\", \"..\" or \"//\" inside it)")
	case strings.HasPrefix(rel, "**/"):
		rest, e := parsePathPattern(rel[3:])
		if e != nil {
			return pp, "", foreign(e.Error())
		}
		pp.els, anchored = append([]string{"**"}, rest.els...), true
	default:
		if pp, err = parsePathPattern(rel); err != nil {
			return pp, "", foreign(err.Error())
		}
	}
	pp.base = base
	if dir && pp.els[len(pp.els)-1] != "**" {
		pp.els = append(pp.els, "**") // a folder: what it holds
	}
	if k != listAllow {
		pp.anyDepth = !anchored && base == pathBaseProject
		pp.under = pp.els[len(pp.els)-1] != "**"
	}
	if base != pathBaseProject || pp.anyDepth || pp.under {
		return pp, "", nil
	}
	if len(pp.els) == 1 && pp.els[0] == "**" {
		return pathPattern{}, "", nil // every path of the project: ReadFile()
	}
	if pp.els[0] == "**" {
		return pp, "", nil
	}
	return pp, strings.Join(pp.els, "/"), nil
}

// describe says, for a warning, what a Claude Code path is read as when
// brabo's own grammar cannot say it.
func (p pathPattern) describe() string {
	var b strings.Builder
	b.WriteString("of ")
	switch p.base {
	case pathBaseRoot:
		b.WriteString("/")
	case pathBaseHome:
		b.WriteString("~/")
	}
	b.WriteString(strings.Join(p.els, "/"))
	if p.anyDepth {
		b.WriteString(" at any depth")
	}
	if p.under {
		b.WriteString(", and everything under it")
	}
	switch p.base {
	case pathBaseRoot, pathBaseHome:
		b.WriteString(" (outside the project folder)")
	}
	return b.String()
}

// key is the pattern's meaning, for the trust comparison.
func (p pathPattern) key() string {
	var b strings.Builder
	b.WriteString(p.base)
	b.WriteString(strings.Join(p.els, "/"))
	if p.anyDepth {
		b.WriteString("|any-depth")
	}
	if p.under {
		b.WriteString("|under")
	}
	return b.String()
}

// outside reports whether the pattern names paths outside the project
// folder.
func (p pathPattern) outside() bool { return p.base != pathBaseProject }

// matchPath reports whether the pattern names the action's path: rel and
// inScope are the path relative to the project folder, abs the clean
// absolute path, home the home folder ("" unknown).
func (p pathPattern) matchPath(rel string, inScope bool, abs, home string) bool {
	switch p.base {
	case pathBaseRoot:
		return abs != "" && p.matchEls(strings.Split(strings.TrimPrefix(abs, "/"), "/"))
	case pathBaseHome:
		if home == "" || path.Clean(home) == "/" {
			return false
		}
		r, ok := relativeTo(abs, path.Clean(home))
		return ok && p.matchEls(strings.Split(r, "/"))
	}
	if p.els == nil {
		return true
	}
	return inScope && p.matchEls(strings.Split(rel, "/"))
}

// matchEls matches the path's elements with a pattern's flags: any depth
// is a leading "**" that may be empty, under is a match of an ancestor.
func (p pathPattern) matchEls(els []string) bool {
	pat := p.els
	if p.anyDepth {
		pat = append([]string{"**"}, pat...)
	}
	if matchElements(pat, els) {
		return true
	}
	if p.under {
		for i := len(els) - 1; i >= 1; i-- {
			if matchElements(pat, els[:i]) {
				return true
			}
		}
	}
	return false
}

var errOutsideAllow = errors.New("names a path outside the project folder: brabo's allow never reaches outside it, so the entry is dropped")

// outsideAskNote is the warning on an ask entry naming an outside path.
const outsideAskNote = "names a path outside the project folder; brabo asks for those anyway, and the entry asks too"

// parseEntry compiles one entry of list k: in Claude Code's spelling if it
// is written in it, else in brabo's.
func parseEntry(src string, k listKind) (p pattern, warning string, err error) {
	if p, ok, err := parseClaudePattern(src, k); ok {
		return p, "", err
	}
	return parsePattern(src)
}

// absPath is p (absolute, or relative to root) as a clean absolute path, or
// "" when p is relative and there is no root.
func absPath(p, root string) string {
	if !strings.HasPrefix(p, "/") {
		if root == "" {
			return ""
		}
		p = path.Join(root, p)
	}
	return path.Clean(p)
}
