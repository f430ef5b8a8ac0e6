package policy

import (
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/brabo-dev/brabo"
	"mvdan.cc/sh/v3/syntax"
)

// NeverAlwaysAllowTypes returns the types that can never be always-allowed
// (DESIGN §6.3: each instance is approved on its own), in the order of
// brabo.AllActionTypes.
func NeverAlwaysAllowTypes() []brabo.ActionType {
	var out []brabo.ActionType
	for _, t := range brabo.AllActionTypes() {
		if t.Traits().NeverAlwaysAllow {
			out = append(out, t)
		}
	}
	return out
}

// NeverAlwaysAllow reports whether an "always allow" click on t is refused
// (brabo.Traits.NeverAlwaysAllow).
func NeverAlwaysAllow(t brabo.ActionType) bool { return t.Traits().NeverAlwaysAllow }

// subcommandWord is a second token that makes "verb subcommand" the unit.
var subcommandWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:-]*$`) })

// gitWithMutatingSiblings are git subcommands whose bare form would also
// allow their mutating siblings (git branch -D): the unit stays exact.
var gitWithMutatingSiblings = shell.Set("branch", "remote", "worktree", "config", "tag", "stash", "notes", "reflog", "submodule")

// Click is the action an "always allow" click derives its patterns from.
type Click struct {
	Type brabo.ActionType
	// Command is a terminal action's command line.
	Command string
	// Path is a write_file action's path, relative to Root or absolute.
	Path string
	// Root is the project folder (the scope root).
	Root string
}

// AlwaysAllow returns the patterns an "always allow" click on an action
// would record, in segment order and without repeats (DESIGN §6.3): for a
// terminal command one unit per segment (verb + subcommand, the verb alone,
// or the exact segment; the exact segment for an interpreter or a runner),
// nothing for an opaque segment or one that is a cap command's prefix even
// exact; for a write_file the folder of its path (WriteFile(src/app/**)),
// or the path itself at the project's root, never a protected path; for
// any other type its Label(). It returns an error with code
// always_allow_cap for a type that can never be always-allowed, for a
// command with an external effect or privilege and for a protected path,
// and invalid_action for a command that cannot be analysed. The same call
// is the preview: it records nothing.
func AlwaysAllow(c Click) ([]string, error) {
	t, command := c.Type, c.Command
	if !t.Valid() {
		return nil, brabo.Errorf(brabo.CodeInvalidAction, "unknown action type %q", t)
	}
	if NeverAlwaysAllow(t) {
		return nil, brabo.Errorf(brabo.CodeAlwaysAllowCap,
			"%s can never be always-allowed; approve this one on its own", t)
	}
	if t == brabo.WriteFile {
		return writeUnit(c)
	}
	if t != brabo.Terminal {
		return []string{t.Label() + "()"}, nil
	}
	an, err := shell.Analyze(command, shell.CwdSet{Dirs: []string{"/"}}, namesProtected)
	if err != nil {
		return nil, brabo.Errorf(brabo.CodeInvalidAction, "%s", err.Error())
	}
	if an.Overflow != "" {
		return nil, brabo.Errorf(brabo.CodeInvalidAction, "%s: nothing can be recorded for it", an.Overflow)
	}
	segs := an.Segs
	for _, s := range segs {
		toks := s.Tokens()
		if shell.IsPrivileged(toks) {
			return nil, brabo.Errorf(brabo.CodeAlwaysAllowCap,
				"%q gains privilege; it can never be always-allowed, approve this one on its own", s.Text)
		}
		if e := shell.ExternalEffect(toks); e != nil {
			return nil, brabo.Errorf(brabo.CodeAlwaysAllowCap,
				"%q has an external effect (%s); it can never be always-allowed, approve this one on its own",
				s.Text, strings.Join(e.Words, " "))
		}
	}
	var out []string
	for _, s := range segs {
		p, ok := unitPattern(s)
		if ok && !shell.ContainsString(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// unitPattern is the pattern always-allow records for one segment.
func unitPattern(s *shell.Segment) (string, bool) {
	if s.Bare || s.Opaque != "" || len(s.Words) == 0 {
		return "", false
	}
	toks := s.Tokens()
	var unit []string
	switch {
	case s.Wraps && shell.IsShell(shell.Base(toks[0])):
		// bash -c: the flag that makes it run the literal script, never a
		// bare shell that would run any script file.
		for i, t := range toks {
			if strings.HasPrefix(t, "-") && strings.Contains(t, "c") && !strings.HasPrefix(t, "--") {
				unit = toks[:i+1]
				break
			}
		}
		if unit == nil && shell.Base(toks[0]) == "busybox" {
			unit = toks[:1] // busybox <applet>: the applet is a segment of its own
		}
		if unit == nil {
			return "", false
		}
	case isRunner(toks):
		// python3 x.py, node -e '…', go run .: the click approved this
		// code, not whatever the runner is given next (DESIGN §9).
		unit = toks
	case s.Wraps, shell.Base(toks[0]) == "cd", shell.Base(toks[0]) == "pushd":
		// A wrapper grants nothing by itself, and cd's argument is always a
		// place, never a subcommand: the verb alone.
		unit = toks[:1]
	case len(toks) == 1:
		unit = toks
	case strings.HasPrefix(toks[1], "-"):
		unit = toks
	case subcommandWord().MatchString(toks[1]):
		unit = toks[:2]
		if shell.Base(toks[0]) == "git" && gitWithMutatingSiblings[toks[1]] {
			unit = toks
		}
	default:
		unit = toks[:1]
	}
	if isCapPrefix(unit) {
		unit = toks
		if isCapPrefix(unit) {
			return "", false
		}
	}
	// The unit must match the segment it came from: a seeded read-only unit
	// (find, git log) never matches a segment that writes or runs code
	// (find -exec, git log --output), so the exact segment is recorded, and
	// nothing when even that is guarded or the program is chosen by a
	// variable set on the line (PATH=. git status).
	if guardedUnit(unit) && readOnlyViolation(s) != "" {
		unit = toks
		if guardedUnit(unit) {
			return "", false
		}
	}
	if s.ProgEnv != "" && (shell.GitSafetyEnv(s.ProgEnv) || shell.ShellSensitive(s.ProgEnv) && shell.ProgramChoosing(s.ProgEnv)) {
		return "", false
	}
	return renderPattern(unit)
}

// guardedUnit reports whether a unit has the content of a seeded read-only
// pattern, which the read-only guard applies to.
func guardedUnit(unit []string) bool {
	toks := make([]patternToken, len(unit))
	for i, u := range unit {
		toks[i] = patternToken{text: u}
	}
	return isSeededReadOnly(toks)
}

// isCapPrefix reports whether unit is a prefix of (or equal to) a cap
// command, comparing the verb by basename.
func isCapPrefix(unit []string) bool {
	for _, c := range shell.CapPrefixes() {
		if len(unit) > len(c) {
			continue
		}
		match := true
		for i, u := range unit {
			if i == 0 {
				u = shell.Base(u)
			}
			if u != c[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// renderPattern writes tokens as a Terminal pattern that parses back to
// the same tokens, quoting where the shell (or a wildcard '*') needs it.
func renderPattern(tokens []string) (string, bool) {
	parts := make([]string, len(tokens))
	for i, t := range tokens {
		q, err := syntax.Quote(t, syntax.LangBash)
		if err != nil {
			return "", false
		}
		parts[i] = q
	}
	p := "Terminal(" + strings.Join(parts, " ") + ")"
	parsed, _, err := parsePattern(p)
	if err != nil || len(parsed.tokens) != len(tokens) {
		return "", false
	}
	for i, t := range parsed.tokens {
		if t.wildcard || t.text != tokens[i] {
			return "", false
		}
	}
	return p, true
}

// isRunner reports whether a segment runs code it is given: an
// interpreter, a shell running a script file, or a build tool's run
// subcommand (go run, cargo run, deno run, bun, npx…).
func isRunner(toks []string) bool {
	name := shell.Base(toks[0])
	if shell.IsInterpreter(name) || shell.IsShell(name) {
		return true
	}
	switch name {
	case "npx", "bunx", "pnpx", "uvx", "pipx":
		return true
	}
	if len(toks) < 2 {
		return false
	}
	switch name + " " + toks[1] {
	case "go run", "cargo run", "deno run", "deno eval", "bun run", "bun x", "dotnet run", "uv run",
		"poetry run", "pnpm exec", "pnpm dlx", "npm exec", "yarn dlx", "yarn exec":
		return true
	}
	return false
}

// writeUnit is what a click on a write_file records: its folder's path
// pattern, or the exact path for a file at the project's root.
func writeUnit(c Click) ([]string, error) {
	rel, ok := relativeTo(c.Path, c.Root)
	if !ok {
		return nil, brabo.Errorf(brabo.CodeInvalidAction, "%q is not inside the project folder", c.Path)
	}
	if row, protected := (Protect{}).protectedPath(path.Join(c.Root, rel), rel, c.Root, true); protected {
		return nil, brabo.Errorf(brabo.CodeAlwaysAllowCap,
			"%s is protected (%s); approve each write on its own", rel, row.Why)
	}
	if strings.ContainsAny(rel, "*()") {
		return nil, brabo.Errorf(brabo.CodeAlwaysAllowCap,
			"%q cannot be written as a pattern; approve each write on its own", rel)
	}
	if dir := path.Dir(rel); dir != "." {
		return []string{"WriteFile(" + dir + "/**)"}, nil
	}
	return []string{"WriteFile(" + rel + ")"}, nil
}
