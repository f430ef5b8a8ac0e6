package policy

// Program identity (DESIGN §4.2, "Which program runs"): a rule names a
// program, and a line names a file. Decide is pure, so the caller resolves
// each name the line runs in the environment the command will run in
// (ProgramNames, then internal/progfind) and passes what each resolves to
// in Input.Programs; Decide compares identities, never reads the disk.

import (
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"strings"
)

// Program is what one program name of a command line resolves to where
// the command will run (Input.Programs).
type Program struct {
	// Path is the absolute path the name resolves to: the first match on
	// PATH for a bare name, the name made absolute for a path. "" when the
	// name resolves to nothing (bash says "command not found").
	Path string `json:"path,omitempty"`
	// Real is Path with its symbolic links resolved ("" when unknown):
	// /usr/lib/git-core/git-push is git.
	Real string `json:"real,omitempty"`
	// Writable is true when the agent can change what the name runs: the
	// file lies in a folder it can write (the project, its caches, the
	// temp folders), or an earlier PATH entry does.
	Writable bool `json:"writable,omitempty"`
	// ExecPath is, for git, the folder of its helper programs (git
	// --exec-path): a git-<name> there is git <name>.
	ExecPath string `json:"execPath,omitempty"`
}

// ProgramNames returns the program names a command line runs, for the
// caller to resolve into Input.Programs: every verb as written, for a verb
// written as a path its basename too (is /usr/bin/git the git PATH finds?),
// and git for one of git's helpers. A line Decide cannot read returns
// nothing: Decide asks for it anyway.
func ProgramNames(command string) []string {
	an, err := shell.Analyze(command, shell.CwdSet{Dirs: []string{"/"}}, namesProtected)
	if err != nil {
		return nil
	}
	var out []string
	add := func(n string) {
		if n != "" && !shell.ContainsString(out, n) {
			out = append(out, n)
		}
	}
	for _, s := range an.Segs {
		if s.Bare || len(s.Words) == 0 || !s.Words[0].Static {
			continue
		}
		v := s.VerbAsWritten()
		add(v)
		if strings.Contains(v, "/") {
			add(shell.Base(v))
		}
		if s.Helper {
			add("git")
		}
	}
	return out
}

// bashBuiltins run whatever PATH holds: a file of the same name is never
// what runs.
var bashBuiltins = shell.Set(":", ".", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command",
	"compgen", "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval",
	"exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill",
	"let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly",
	"return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type",
	"typeset", "ulimit", "umask", "unalias", "unset", "wait")

// identity says whether the rules may match the program a segment runs
// (why is "" then), and the tokens allow patterns are matched with: a
// verb written as the path PATH finds for its name is that name.
//
//   - A name the caller resolved into a folder the agent can write (the
//     project, its caches, a PATH entry there) matches no allow pattern.
//   - A path inside the project folder (./gradlew, bin/tool) matches
//     none: the agent writes what runs.
//   - One of git's helpers is git only when it lies in git's exec-path;
//     without Programs it is read as git for the denies and the caps, and
//     matches no allow pattern.
//   - Another path is its name only when it is the file PATH finds for
//     the name; otherwise allow patterns match it as written.
func identity(s *shell.Segment, toks []string, progs map[string]Program, root string) (allowToks []string, why string) {
	v := s.VerbAsWritten()
	if !strings.Contains(v, "/") {
		if progs == nil || bashBuiltins[v] {
			return toks, ""
		}
		if p, ok := progs[v]; ok && p.Writable {
			return nil, v + " is " + p.Path + ", in a folder the agent can write: no rule covers it"
		}
		if s.Helper {
			if g, ok := progs["git"]; ok && g.Writable {
				return nil, "git is " + g.Path + ", in a folder the agent can write: no rule covers it"
			}
		}
		return toks, ""
	}
	if s.Cwds.Unknown && !strings.HasPrefix(v, "/") {
		return nil, "the program " + v + " is relative to a directory the line does not show: no rule covers it"
	}
	for _, c := range shell.PathCandidates(v, s.Cwds) {
		if root != "" && shell.Within(c, root) {
			return nil, "the program " + v + " is inside the project folder, which the agent writes: no rule covers it"
		}
	}
	p, ok := progs[v]
	if !strings.HasPrefix(v, "/") {
		// The caller resolved it from where the line starts, and the line
		// may have moved: only an absolute path is compared.
		p, ok = Program{}, false
	}
	if ok && p.Writable {
		return nil, "the program " + v + " is in a folder the agent can write: no rule covers it"
	}
	if s.Helper {
		g, gok := progs["git"]
		if !ok || !gok || g.ExecPath == "" || g.Writable || path.Dir(p.Path) != path.Clean(g.ExecPath) {
			return nil, "the program " + v + " is not known to be a helper of the git PATH finds: no rule covers it"
		}
		s.PathIsName = true
		return toks, ""
	}
	if progs == nil {
		return toks, "" // allow patterns match a path as written only
	}
	if n, nok := progs[shell.Base(v)]; ok && nok && same(p, n) {
		out := make([]string, len(toks))
		copy(out, toks)
		out[0] = shell.Base(v)
		s.PathIsName = true
		return out, ""
	}
	return toks, ""
}

// same reports whether two resolutions name one file.
func same(a, b Program) bool {
	switch {
	case a.Path == "" || b.Path == "" || a.Writable || b.Writable:
		return false
	case a.Path == b.Path:
		return true
	}
	return a.Real != "" && a.Real == b.Real
}
