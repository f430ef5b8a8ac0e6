package shell

// Git's helpers (git-push, git-upload-pack …) read as git and a
// subcommand, so that the operand table, the effects and the caps apply
// to them (DESIGN §4.2, "Which program runs").

import "strings"

// VerbAsWritten is the program as the line names it: a git helper's path
// before it was read as git and a subcommand.
func (s *Segment) VerbAsWritten() string {
	if s.progPath != "" {
		return s.progPath
	}
	return s.Verb()
}

// gitHelper reports whether a program name is one of git's helpers,
// git-<sub> (git-push, /usr/lib/git-core/git-reset), and returns sub.
func gitHelper(v string) (string, bool) {
	b := Base(v)
	sub, ok := strings.CutPrefix(b, "git-")
	if !ok || sub == "" || strings.ContainsAny(sub, "/.") {
		// git dispatches on the name after git-: one with an extension
		// (git-sync.sh) names no subcommand, and is a script of its own.
		return "", false
	}
	return sub, true
}

// readHelper rewrites a segment whose program is one of git's helpers as
// git with that subcommand, so that every check (the operand table, the
// denies, the caps, git's code-running options) reads what runs: the
// helper is git. The path as written stays for the scope and identity.
func readHelper(s *Segment) {
	if len(s.Words) == 0 || !s.Words[0].Static {
		return
	}
	sub, ok := gitHelper(s.Words[0].Text)
	if !ok {
		return
	}
	s.progPath, s.Helper = s.Words[0].Text, true
	words := make([]word, 0, len(s.Words)+1)
	words = append(words, word{Text: "git", Static: true}, word{Text: sub, Static: true})
	s.Words = append(words, s.Words[1:]...)
}
