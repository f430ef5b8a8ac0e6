package policy

import (
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"slices"
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
	{Pattern: ".mcp.json", Base: BaseAnywhere, Why: "the agents' MCP servers"},
	{Pattern: ".vscode/mcp.json", Base: BaseAnywhere, Why: "VS Code's MCP servers (Copilot's agent runs them)"},
	{Pattern: ".vscode/settings.json", Base: BaseAnywhere, Why: "VS Code's settings (the chat agent's auto-approval, terminal profiles)"},
	{Pattern: ".vscode/tasks.json", Base: BaseAnywhere, Why: "VS Code's tasks (a folderOpen task runs code)"},
	{Pattern: ".aider.conf.yml", Base: BaseAnywhere, Why: "aider's configuration (its lint and test commands)"},
	{Pattern: "CLAUDE.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: "CLAUDE.local.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".claude/rules/", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: "AGENTS.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: "AGENTS.override.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: "GEMINI.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".cursorrules", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".cursor/rules/", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".cursor/", Base: BaseAnywhere, Why: "Cursor's configuration (hooks, MCP servers, CLI permissions)"},
	{Pattern: ".windsurfrules", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".clinerules", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".github/copilot-instructions.md", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	{Pattern: ".github/instructions/", Base: BaseAnywhere, Why: "an agent's instructions", Instructions: true},
	// The package managers and build tools the seeded runners read: each
	// names a program, a shell or a plugin the runner starts (their rows
	// in docs/shell-analysis.md say where).
	{Pattern: ".npmrc", Base: BaseAnywhere, Why: "npm's configuration (script-shell, node-options run programs)"},
	{Pattern: ".yarnrc", Base: BaseAnywhere, Why: "yarn's configuration (yarn-path runs a program)"},
	{Pattern: ".yarnrc.yml", Base: BaseAnywhere, Why: "yarn's configuration (yarnPath, plugins, shell run programs)"},
	{Pattern: ".pnpmfile.cjs", Base: BaseAnywhere, Why: "pnpm's hooks (they run code on install)"},
	{Pattern: ".pnpmfile.mjs", Base: BaseAnywhere, Why: "pnpm's hooks (they run code on install)"},
	{Pattern: "pip.conf", Base: BaseAnywhere, Why: "pip's configuration (a virtualenv's, index and build options)"},
	{Pattern: ".cargo/config.toml", Base: BaseAnywhere, Why: "cargo's configuration (runners and wrappers run programs)"},
	{Pattern: ".cargo/config", Base: BaseAnywhere, Why: "cargo's configuration (runners and wrappers run programs)"},
	{Pattern: ".mvn/", Base: BaseAnywhere, Why: "Maven's project configuration (extensions and options load code)"},
	{Pattern: ".envrc", Base: BaseAnywhere, Why: "direnv's script (a human's shell runs it on cd)"},
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
	{Pattern: ".zlogin", Base: BaseHome, Why: "the user's shell start-up"},
	{Pattern: ".bash_logout", Base: BaseHome, Why: "the user's shell start-up"},
	{Pattern: ".cursor/", Base: BaseHome, Why: "Cursor's user configuration"},
	{Pattern: ".copilot/", Base: BaseHome, Why: "Copilot CLI's user configuration"},
	{Pattern: ".npmrc", Base: BaseHome, Why: "npm's user configuration (script-shell, node-options run programs)"},
	{Pattern: ".yarnrc", Base: BaseHome, Why: "yarn's user configuration"},
	{Pattern: ".yarnrc.yml", Base: BaseHome, Why: "yarn's user configuration"},
	{Pattern: ".config/pnpm/", Base: BaseHome, Why: "pnpm's user configuration"},
	{Pattern: ".config/pip/", Base: BaseHome, Why: "pip's user configuration"},
	{Pattern: ".pip/", Base: BaseHome, Why: "pip's user configuration"},
	{Pattern: ".cargo/config.toml", Base: BaseHome, Why: "cargo's user configuration (runners and wrappers run programs)"},
	{Pattern: ".gradle/init.d/", Base: BaseHome, Why: "Gradle's init scripts (they run in every build)"},
	{Pattern: ".gradle/gradle.properties", Base: BaseHome, Why: "Gradle's user properties"},
	{Pattern: ".m2/settings.xml", Base: BaseHome, Why: "Maven's user settings"},
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
	// abs are the protected paths inside the project folder the write may
	// name, relative to it (one per folder the segment may run in).
	abs []string
}

// protectedWrites returns the protected paths inside root that a path
// written t may name from the folders cwds, relative to root.
func protectedWrites(p Protect, t string, cwds shell.CwdSet, root string) []string {
	if root == "" {
		return nil
	}
	var out []string
	for _, c := range p.candidates(t, cwds) {
		if !c.known {
			continue
		}
		if _, ok := p.protectedPath(c.path, t, root, true); !ok {
			continue
		}
		rel, ok := strings.CutPrefix(c.path, strings.TrimSuffix(root, "/")+"/")
		if !ok || rel == "" {
			continue
		}
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// reason is the sentence for a hit.
func (h protectedHit) reason(write bool) string {
	verb := "reads"
	if write {
		verb = "writes"
	}
	return verb + " " + h.path + ": " + h.row.Why
}

// compiledRow is a row of the table split into lower-case elements, once.
type compiledRow struct {
	row    ProtectedRow
	els    []string
	folder bool
}

// protectedIndex holds the compiled table: the rows matched anywhere, by
// their first element (most paths hold none of them, and pay one map
// lookup per element), the rows relative to the project and to the home
// folder; readRows says whether any row is read-protected.
var protectedIndex = func() (ix struct {
	anywhere       map[string][]compiledRow
	project, home  []compiledRow
	anywhereGlobal []compiledRow
	nested         []compiledRow // the anywhere rows of several elements
	nestedBy       map[string][]compiledRow
	nestedLen      int // the most elements of a nested row
	readRows       bool
}) {
	ix.anywhere = map[string][]compiledRow{}
	ix.nestedBy = map[string][]compiledRow{}
	for _, row := range ProtectedTable {
		ix.readRows = ix.readRows || row.ReadProtected
		c := compiledRow{row: row, folder: strings.HasSuffix(row.Pattern, "/"),
			els: strings.Split(strings.ToLower(strings.TrimSuffix(row.Pattern, "/")), "/")}
		switch row.Base {
		case BaseAnywhere:
			ix.anywhere[c.els[0]] = append(ix.anywhere[c.els[0]], c)
			ix.anywhereGlobal = append(ix.anywhereGlobal, c)
			if len(c.els) > 1 {
				ix.nested = append(ix.nested, c)
				ix.nestedBy[c.els[0]] = append(ix.nestedBy[c.els[0]], c)
				ix.nestedLen = max(ix.nestedLen, len(c.els))
			}
		case BaseProject:
			ix.project = append(ix.project, c)
		case BaseHome:
			ix.home = append(ix.home, c)
		}
	}
	return ix
}()

// protectedPath finds the protected row an absolute, clean path falls
// under, given the project root and the Protect of the input. as is the
// path as written (for a token like ~/.gitconfig). When write is false
// only the read-protected rows count: brabo's own paths, and the table's
// rows marked ReadProtected.
func (p Protect) protectedPath(abs, as, root string, write bool) (ProtectedRow, bool) {
	return p.protectedPathAt(abs, as, root, write, write)
}

// protectedPathAt is protectedPath; ancestors false leaves out the rule
// for a folder that holds protected paths, for a write that reaches only
// some files below it (find -name '*.o' -delete).
func (p Protect) protectedPathAt(abs, as, root string, write, ancestors bool) (ProtectedRow, bool) {
	for _, s := range p.ServerPaths {
		s = path.Clean(s)
		if s != "." && s != "/" && shell.Within(abs, s) {
			return ProtectedRow{Pattern: s, Base: BaseServer, Why: "brabo's own data", ReadProtected: true}, true
		}
	}
	if !write && !protectedIndex.readRows {
		return ProtectedRow{}, false
	}
	lower := strings.ToLower(abs)
	els := strings.Split(strings.TrimPrefix(lower, "/"), "/")
	if write && ancestors {
		if row, ok := p.ancestor(abs, els, root); ok {
			return row, true
		}
	}
	globs := strings.ContainsAny(abs, "*?[")
	// A project row is matched at the root and at the worktree under
	// .brabo/worktrees that abs lies in: the path relative to either is a
	// tail of els, found once for all rows.
	var relAt [2]int
	bases := 0
	if root != "" && shell.Within(abs, root) {
		k := 0
		if root != "/" {
			k = strings.Count(root, "/")
		}
		relAt[bases], bases = k, bases+1
		if rest := strings.TrimPrefix(abs[len(root):], "/"); len(els) >= k+3 &&
			strings.HasPrefix(rest, worktreesDir+"/") {
			relAt[bases], bases = k+3, bases+1
		}
	}
	outsideRoot := root != "" && !shell.Within(abs, root)
	for _, c := range protectedIndex.project {
		for _, k := range relAt[:bases] {
			if matchRel(els[k:], c) && (write || c.row.ReadProtected) {
				return c.row, true
			}
		}
		// Outside this project, a file of that name is most likely
		// another project's own (../other/permissions.json).
		if outsideRoot && write && elementMatches(c.els[len(c.els)-1], els[len(els)-1]) {
			return c.row, true
		}
	}
	for i := range els {
		rows := protectedIndex.anywhere[els[i]]
		if globs && strings.ContainsAny(els[i], "*?[") {
			rows = protectedIndex.anywhereGlobal // a glob may name any of them
		}
		for _, c := range rows {
			if matchRel(els[i:], c) && (write || c.row.ReadProtected) {
				return c.row, true
			}
		}
	}
	var homes [2]string
	n := 0
	if home := path.Clean(p.Home); p.Home != "" && shell.Within(abs, home) {
		homes[n], n = strings.TrimPrefix(strings.TrimPrefix(abs, home), "/"), n+1
	}
	if rest, ok := homeRelative(as); ok {
		homes[n], n = rest, n+1
	}
	for _, rel := range homes[:n] {
		rel := strings.Split(strings.ToLower(rel), "/")
		for _, c := range protectedIndex.home {
			if matchRel(rel, c) && (write || c.row.ReadProtected) {
				return c.row, true
			}
		}
	}
	return ProtectedRow{}, false
}

// ancestorRow is the row of a write whose target holds protected paths
// (rm -rf .claude, rm -rf ../proj, find . -delete): deleting, moving or
// replacing a folder takes what is in it along.
var ancestorRow = ProtectedRow{Pattern: "(a folder holding protected paths)", Base: BaseProject,
	Why: "a folder that holds protected paths (deleting or replacing it takes them along)"}

// ancestor reports whether a written path is the project folder, a folder
// above it, a worktree brabo keeps, the home folder or one above a
// protected home row, a folder above brabo's own paths, or a folder that
// a row of several elements lies in (.claude for .claude/settings.json).
// A folder that may merely hold a file of a protected name (src, which
// may hold an AGENTS.md) is not one: the line does not show it.
func (p Protect) ancestor(abs string, els []string, root string) (ProtectedRow, bool) {
	hit := func(why string) (ProtectedRow, bool) {
		r := ancestorRow
		r.Why = why + " (deleting or replacing it takes them along)"
		return r, true
	}
	if root != "" && shell.Within(root, abs) {
		return hit("the project folder itself, with its permissions.json, .git and instructions")
	}
	for _, s := range p.ServerPaths {
		if s = path.Clean(s); s != "." && s != "/" && shell.Within(s, abs) && s != abs {
			return hit("a folder holding brabo's own data")
		}
	}
	if p.Home != "" {
		home := path.Clean(p.Home)
		if shell.Within(home, abs) {
			return hit("the home folder, with the user's configuration")
		}
		if shell.Within(abs, home) {
			rel := strings.Split(strings.ToLower(strings.TrimPrefix(abs[len(home):], "/")), "/")
			for _, c := range protectedIndex.home {
				if len(rel) < len(c.els) && prefixMatches(rel, c.els) {
					return hit("a folder holding " + c.row.Why)
				}
			}
		}
	}
	if root != "" && shell.Within(abs, root) {
		rest := strings.TrimPrefix(abs[len(root):], "/")
		if rest == ".brabo" || rest == worktreesDir || strings.HasPrefix(rest, worktreesDir+"/") && !strings.Contains(rest[len(worktreesDir)+1:], "/") {
			return hit("a worktree brabo keeps, with its permissions.json and .git")
		}
	}
	// els ends with the first k elements of a row of several, k < its
	// length: the element k from the end is the row's first (one map
	// lookup per k), or a glob that may be any of them.
	globs := strings.ContainsAny(abs, "*?[")
	for k := 1; k < protectedIndex.nestedLen && k <= len(els); k++ {
		rows := protectedIndex.nestedBy[els[len(els)-k]]
		if globs {
			rows = protectedIndex.nested
		}
		for _, c := range rows {
			if k < len(c.els) && prefixMatches(els[len(els)-k:], c.els[:k]) {
				return hit("a folder holding " + c.row.Why)
			}
		}
	}
	return ProtectedRow{}, false
}

// protectedNames are the lower-case elements of every row: a find
// -name pattern that matches none of them deletes no protected path.
var protectedNames = func() []string {
	var out []string
	for _, r := range ProtectedTable {
		for _, el := range strings.Split(strings.ToLower(strings.TrimSuffix(r.Pattern, "/")), "/") {
			if !shell.ContainsString(out, el) {
				out = append(out, el)
			}
		}
	}
	return out
}()

// namesProtected reports whether a find -name pattern may match the name
// of a protected path (or a folder one lies in).
func namesProtected(pattern string) bool {
	pattern = strings.ToLower(pattern)
	for _, n := range protectedNames {
		if elementMatches(n, pattern) {
			return true
		}
		if ok, err := path.Match(pattern, n); ok || err != nil {
			return true
		}
	}
	return false
}

// prefixMatches matches els element by element against the first
// len(els) elements of a row.
func prefixMatches(els, row []string) bool {
	for i, e := range els {
		if i >= len(row) || !elementMatches(row[i], e) {
			return false
		}
	}
	return true
}

// matchRel matches the leading elements of a relative, lower-case path
// against a compiled row (the file systems brabo meets may fold case: .GIT
// is .git there). A row that is one plain name (".git", "HEAD") matches
// that element followed by anything only for .git: what lies inside a
// .git folder is git's.
func matchRel(els []string, c compiledRow) bool {
	if len(els) < len(c.els) {
		return false
	}
	for i, pe := range c.els {
		if !elementMatches(pe, els[i]) {
			return false
		}
	}
	if c.folder || len(els) == len(c.els) {
		return true
	}
	return c.els[0] == ".git" && len(c.els) == 1
}

// elementMatches matches one element of a path as written against one of
// a protected pattern. An element holding a glob (permissions.jso?,
// .gi?) matches every name its glob could: bash picks the file, not the
// line.
func elementMatches(pattern, el string) bool {
	if strings.ContainsAny(el, "*?[") {
		for _, name := range []string{pattern, strings.ReplaceAll(pattern, "*", ""), strings.ReplaceAll(pattern, "*", "x")} {
			if ok, _ := path.Match(el, name); ok {
				return true
			}
		}
		return false
	}
	return globElement(pattern, el)
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

// procPrefix is abs with repeated and "." elements dropped but its ".."
// kept, when it names /proc/<pid>/cwd or /proc/<pid>/root; "" otherwise.
func procPrefix(abs string) string {
	var els []string
	for _, e := range strings.Split(abs, "/") {
		if e != "" && e != "." {
			els = append(els, e)
		}
	}
	if len(els) >= 3 && els[0] == "proc" && (els[2] == "cwd" || els[2] == "root") {
		return "/" + strings.Join(els, "/")
	}
	return ""
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
func (p Protect) segmentHits(s *shell.Segment, root string) (writes, reads []protectedHit) {
	for _, pw := range s.Paths {
		if pw.Kind != shell.ArgWrite && !mayLeave(pw.Text) {
			// A read can only reach a read-protected path (brabo's own,
			// never inside a project) by leaving the folder it runs in.
			continue
		}
		for _, abs := range p.candidates(pw.Text, s.Cwds) {
			row, ok := p.protectedPathAt(abs.path, pw.Text, root, pw.Kind == shell.ArgWrite, pw.Kind == shell.ArgWrite && !pw.Below)
			if !abs.known {
				row, ok = ProtectedRow{Pattern: pw.Text, Base: BaseServer, Why: "a descriptor the line does not show"}, pw.Kind == shell.ArgWrite
			}
			if !ok {
				continue
			}
			hit := protectedHit{path: pw.Text, row: row}
			if abs.known && pw.Kind == shell.ArgWrite {
				hit.abs = protectedWrites(p, pw.Text, s.Cwds, root)
			}
			switch {
			case pw.Kind == shell.ArgWrite:
				writes = append(writes, hit)
			case row.ReadProtected:
				reads = append(reads, hit)
			}
			break
		}
	}
	return writes, reads
}

// mayLeave reports whether a path as written may name something outside
// the folder it is relative to: absolute, home-relative, an expansion of a
// directory variable, or climbing with "..".
func mayLeave(t string) bool {
	return t != "" && (t[0] == '/' || t[0] == '~' || t[0] == '$' || strings.Contains(t, ".."))
}

type candidatePath struct {
	path  string
	known bool
}

// candidates returns the absolute paths a path word may name.
func (p Protect) candidates(t string, cwds shell.CwdSet) []candidatePath {
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
		// /proc first, then the dots: bash opens /proc/self/cwd/../x
		// through the directory the segment runs in, where cleaning first
		// would fold cwd/.. into /proc/self/x, which names nothing.
		r, known := resolveProc(path.Clean(abs), cwd)
		if raw := procPrefix(abs); raw != "" {
			r, known = resolveProc(raw, cwd)
			r = path.Clean(r)
		}
		out = append(out, candidatePath{path: r, known: known})
	}
	if strings.HasPrefix(t, "/") {
		cwd := ""
		if len(cwds.Dirs) > 0 {
			cwd = cwds.Dirs[0]
		}
		add(t, cwd)
		for _, d := range cwds.Dirs[min(1, len(cwds.Dirs)):] {
			add(t, d)
		}
		return out
	}
	for _, d := range cwds.Dirs {
		add(path.Join(d, t), d)
	}
	if cwds.Unknown {
		// Where the line went is unknown: match the name anywhere.
		add(path.Join("/unknown", t), "")
	}
	return out
}

// Protected reports whether abs, an absolute and clean path, is a
// protected path for the project at root: for a write any row of the
// table, for a read (write false) the read-protected rows and brabo's own
// paths (ServerPaths). why is the row's sentence. A card's preview asks
// it before it reads a file to show.
func (p Protect) Protected(abs, root string, write bool) (why string, ok bool) {
	row, ok := p.protectedPath(path.Clean(abs), abs, path.Clean(root), write)
	return row.Why, ok
}
