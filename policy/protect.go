package policy

import (
	"path"
	"strings"
)

// Protected paths (DESIGN §9): files whose change would raise what the
// agent may do, run code the agent wrote the next time a human or brabo
// runs git or an agent, or reach brabo's own data. A write to one is never
// auto-approved, in any mode, and needs a maintainer; a read of a
// read-protected one asks.

// ProtectedBase says what a protected row is relative to.
type ProtectedBase string

// The bases of the protected table.
const (
	// BaseProject rows match at the project folder's root and at the root
	// of every worktree brabo keeps under it (.brabo/worktrees/<name>).
	BaseProject ProtectedBase = "project"
	// BaseAnywhere rows match an element or a name anywhere in the path.
	BaseAnywhere ProtectedBase = "anywhere"
	// BaseHome rows match under the home folder of the user commands run as.
	BaseHome ProtectedBase = "home"
	// BaseServer rows are the absolute paths the server supplies: its data
	// folder, token files and binary (Input.Protect.ServerPaths).
	BaseServer ProtectedBase = "server"
)

// ProtectedRow is one row of the protected table.
type ProtectedRow struct {
	// Pattern is a path relative to the base, with "/" separators; a
	// trailing "/" names a folder and everything in it, and a "*" matches
	// within one element.
	Pattern string
	Base    ProtectedBase
	// Why is the sentence a card and a reason show.
	Why string
	// ReadProtected rows ask for a read too.
	ReadProtected bool
	// Instructions rows are agents' instruction files: they change through
	// an instruction_patch; a terminal or write_file change asks a
	// maintainer.
	Instructions bool
}

// ProtectedTable is every row, in the order they are checked. The server's
// own paths come with each Input (Protect.ServerPaths).
var ProtectedTable = []ProtectedRow{
	{Pattern: "permissions.json", Base: BaseProject, Why: "the project's permissions"},
	{Pattern: ".git", Base: BaseAnywhere, Why: "git's repository, config and hooks (they run code)"},
	{Pattern: "HEAD", Base: BaseAnywhere, Why: "a repository's HEAD (an embedded repository git would run)"},
	{Pattern: ".gitmodules", Base: BaseAnywhere, Why: "git's submodules"},
	{Pattern: ".githooks/", Base: BaseAnywhere, Why: "a git hooks folder (hooks run code)"},
	{Pattern: ".husky/", Base: BaseAnywhere, Why: "husky's hooks (they run code)"},
	{Pattern: ".pre-commit-config.yaml", Base: BaseAnywhere, Why: "pre-commit's hooks (they run code)"},
	{Pattern: "lefthook.yml", Base: BaseAnywhere, Why: "lefthook's hooks (they run code)"},
	{Pattern: "lefthook.yaml", Base: BaseAnywhere, Why: "lefthook's hooks (they run code)"},
	{Pattern: ".lefthook.yml", Base: BaseAnywhere, Why: "lefthook's hooks (they run code)"},
	{Pattern: "lefthook-local.yml", Base: BaseAnywhere, Why: "lefthook's hooks (they run code)"},
	{Pattern: ".claude/settings*.json", Base: BaseAnywhere, Why: "Claude Code's settings (hooks and permissions)"},
	{Pattern: ".claude/agents/", Base: BaseAnywhere, Why: "Claude Code's sub-agents"},
	{Pattern: ".claude/skills/", Base: BaseAnywhere, Why: "Claude Code's skills"},
	{Pattern: ".claude/commands/", Base: BaseAnywhere, Why: "Claude Code's commands"},
	{Pattern: ".claude/hooks/", Base: BaseAnywhere, Why: "Claude Code's hooks"},
	{Pattern: ".codex/", Base: BaseAnywhere, Why: "Codex's configuration"},
	{Pattern: ".gemini/", Base: BaseAnywhere, Why: "Gemini CLI's configuration"},
	{Pattern: ".cursor/hooks.json", Base: BaseAnywhere, Why: "Cursor's hooks"},
	{Pattern: ".mcp.json", Base: BaseAnywhere, Why: "the agents' MCP servers"},
	{Pattern: "CLAUDE.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: "AGENTS.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: "GEMINI.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".cursorrules", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".cursor/rules/", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".claude/", Base: BaseHome, Why: "Claude Code's user settings"},
	{Pattern: ".codex/", Base: BaseHome, Why: "Codex's user configuration"},
	{Pattern: ".gemini/", Base: BaseHome, Why: "Gemini CLI's user configuration"},
	{Pattern: ".config/brabo/", Base: BaseHome, Why: "brabo's hook tokens (brabo install)", ReadProtected: true},
	{Pattern: ".gitconfig", Base: BaseHome, Why: "the user's git configuration (it runs code)"},
	{Pattern: ".config/git/", Base: BaseHome, Why: "the user's git configuration (it runs code)"},
	{Pattern: ".bashrc", Base: BaseHome, Why: "the user's shell start-up"},
	{Pattern: ".bash_profile", Base: BaseHome, Why: "the user's shell start-up"},
	{Pattern: ".bash_login", Base: BaseHome, Why: "the user's shell start-up"},
	{Pattern: ".profile", Base: BaseHome, Why: "the user's shell start-up"},
	{Pattern: ".zshrc", Base: BaseHome, Why: "the user's shell start-up"},
	{Pattern: ".zshenv", Base: BaseHome, Why: "the user's shell start-up"},
	{Pattern: ".zprofile", Base: BaseHome, Why: "the user's shell start-up"},
}

// Protect is what Decide needs besides the table to find protected paths.
type Protect struct {
	// Home is the home folder of the user commands run as ("" when
	// unknown: ~ and $HOME still name it).
	Home string
	// ServerPaths are brabo's own absolute paths: the data folder, token
	// files, the binary. Writing them is never approved by a rule, and
	// reading them asks.
	ServerPaths []string
}

// worktreesDir is where brabo keeps the dev agents' worktrees in a project.
const worktreesDir = ".brabo/worktrees"

// protectedHit is a protected path a line or an action reaches.
type protectedHit struct {
	path string // as written
	row  ProtectedRow
}

// reason is the sentence for a hit.
func (h protectedHit) reason(write bool) string {
	verb := "reads"
	if write {
		verb = "writes"
	}
	return verb + " " + h.path + ": " + h.row.Why
}

// protectedPath finds the protected row an absolute, clean path falls
// under, given the project root and the Protect of the input. as is the
// path as written (for a token like ~/.gitconfig).
func (p Protect) protectedPath(abs, as, root string) (ProtectedRow, bool) {
	for _, s := range p.ServerPaths {
		s = path.Clean(s)
		if s != "." && s != "/" && within(abs, s) {
			return ProtectedRow{Pattern: s, Base: BaseServer, Why: "brabo's own data", ReadProtected: true}, true
		}
	}
	home := p.Home
	for _, row := range ProtectedTable {
		switch row.Base {
		case BaseProject:
			for _, base := range projectBases(abs, root) {
				if matchBelow(abs, base, row.Pattern) {
					return row, true
				}
			}
			// Outside this project, a file of that name is most likely
			// another project's own (../other/permissions.json).
			if root != "" && !within(abs, root) && matchAnywhere(abs, row.Pattern) && path.Base(abs) == path.Base(row.Pattern) {
				return row, true
			}
		case BaseAnywhere:
			if matchAnywhere(abs, row.Pattern) {
				return row, true
			}
		case BaseHome:
			if home != "" && matchBelow(abs, path.Clean(home), row.Pattern) {
				return row, true
			}
			if rest, ok := homeRelative(as); ok && matchBelow("/"+rest, "/", row.Pattern) {
				return row, true
			}
		}
	}
	return ProtectedRow{}, false
}

// projectBases are the folders a project-relative row is matched at: the
// root, and the worktree under .brabo/worktrees that abs lies in.
func projectBases(abs, root string) []string {
	if root == "" {
		return nil
	}
	out := []string{root}
	wt := path.Join(root, worktreesDir)
	if within(abs, wt) && abs != wt {
		rest := strings.TrimPrefix(abs, wt+"/")
		name, _, _ := strings.Cut(rest, "/")
		out = append(out, path.Join(wt, name))
	}
	return out
}

// matchBelow reports whether abs is base/pattern (or inside it, for a
// folder pattern ending in "/"), comparing elements, '*' within one.
func matchBelow(abs, base, pattern string) bool {
	if !within(abs, base) {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(abs, base), "/")
	return matchRel(strings.Split(rel, "/"), pattern)
}

// matchAnywhere reports whether the pattern matches starting at any
// element of abs.
func matchAnywhere(abs, pattern string) bool {
	els := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for i := range els {
		if matchRel(els[i:], pattern) {
			return true
		}
	}
	return false
}

// matchRel matches the leading elements of a relative path against a
// pattern of the table, in any case (the file systems brabo meets may
// fold case: .GIT is .git there). A pattern that is one plain name
// (".git", "HEAD") also matches that element followed by anything: what
// lies inside a .git folder is git's.
func matchRel(els []string, pattern string) bool {
	folder := strings.HasSuffix(pattern, "/")
	pels := strings.Split(strings.TrimSuffix(pattern, "/"), "/")
	if len(els) < len(pels) {
		return false
	}
	for i, pe := range pels {
		if !globElement(strings.ToLower(pe), strings.ToLower(els[i])) {
			return false
		}
	}
	if folder || len(els) == len(pels) {
		return true
	}
	return pels[0] == ".git" && len(pels) == 1
}

// globElement matches one element with '*' as any run of characters.
func globElement(pattern, el string) bool {
	before, after, star := strings.Cut(pattern, "*")
	if !star {
		return pattern == el
	}
	return len(el) >= len(before)+len(after) && strings.HasPrefix(el, before) && strings.HasSuffix(el, after)
}

// homeRelative returns the part after ~/ or $HOME/ of a token.
func homeRelative(t string) (string, bool) {
	for _, p := range []string{"~/", "$HOME/", "${HOME}/"} {
		if rest, ok := strings.CutPrefix(t, p); ok {
			return path.Clean(rest), true
		}
	}
	return "", false
}

// resolveProc maps the /proc and /dev/fd spellings of a path to what they
// name: /proc/self/cwd/x is x where the segment runs, /proc/<pid>/root/x
// is /x. A descriptor (/dev/fd/N, /proc/<pid>/fd/N) names a file the line
// does not show; ok is false for it.
func resolveProc(p string, cwd string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "/dev/fd/"), strings.HasPrefix(p, "/proc/") && strings.Contains(p, "/fd/"):
		n := p[strings.LastIndexByte(p, '/')+1:]
		return p, n == "0" || n == "1" || n == "2"
	case strings.HasPrefix(p, "/proc/"):
		els := strings.SplitN(strings.TrimPrefix(p, "/proc/"), "/", 3)
		if len(els) >= 2 {
			rest := ""
			if len(els) == 3 {
				rest = els[2]
			}
			switch els[1] {
			case "cwd":
				if cwd == "" {
					return p, false
				}
				return path.Join(cwd, rest), true
			case "root":
				return path.Join("/", rest), true
			}
		}
	}
	return p, true
}

// segmentHits finds the protected paths a segment writes (or reads, for
// read-protected rows): each path word resolved from every directory
// the segment may run in.
func (p Protect) segmentHits(s *segment, root string) (writes, reads []protectedHit) {
	for _, pw := range s.paths {
		for _, abs := range p.candidates(pw.text, s.cwds) {
			row, ok := p.protectedPath(abs.path, pw.text, root)
			if !abs.known {
				row, ok = ProtectedRow{Pattern: pw.text, Base: BaseServer, Why: "a descriptor the line does not show"}, pw.kind == argWrite
			}
			if !ok {
				continue
			}
			hit := protectedHit{path: pw.text, row: row}
			switch {
			case pw.kind == argWrite:
				writes = append(writes, hit)
			case row.ReadProtected:
				reads = append(reads, hit)
			}
			break
		}
	}
	return writes, reads
}

type candidatePath struct {
	path  string
	known bool
}

// candidates returns the absolute paths a path word may name.
func (p Protect) candidates(t string, cwds cwdSet) []candidatePath {
	if rest, ok := homeRelative(t); ok {
		if p.Home == "" {
			return []candidatePath{{path: "/" + rest, known: true}}
		}
		return []candidatePath{{path: path.Join(p.Home, rest), known: true}}
	}
	if t == "~" || t == "$HOME" || t == "${HOME}" {
		return []candidatePath{{path: path.Clean(p.Home + "/"), known: true}}
	}
	if rest, ok := cutPWD(t); ok {
		t = rest
	}
	var out []candidatePath
	add := func(abs string, cwd string) {
		r, known := resolveProc(path.Clean(abs), cwd)
		out = append(out, candidatePath{path: r, known: known})
	}
	if strings.HasPrefix(t, "/") {
		cwd := ""
		if len(cwds.dirs) > 0 {
			cwd = cwds.dirs[0]
		}
		add(t, cwd)
		for _, d := range cwds.dirs[min(1, len(cwds.dirs)):] {
			add(t, d)
		}
		return out
	}
	for _, d := range cwds.dirs {
		add(path.Join(d, t), d)
	}
	if cwds.unknown {
		// Where the line went is unknown: match the name anywhere.
		add(path.Join("/unknown", t), "")
	}
	return out
}
