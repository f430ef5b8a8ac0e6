package policy

// A segment is one program a command line would run (DESIGN §4.3), with
// where it may run (cwdSet).

import (
	"path"
	"strings"
)

// segment is one program a command line would run.
type segment struct {
	text    string
	words   []word  // verb first; leading assignments excluded
	assigns []word  // values of leading assignments (VAR=value → value)
	envSet  bool    // the program runs with variables set by the line
	redirs  []redir // redirections of this segment and its enclosing statements
	opaque  string  // why the program cannot be known statically ("" if it can)
	wraps   bool    // this segment is a wrapper whose program is its own segment too
	// childAt is the index in words where the wrapped program starts (or
	// the -c script of a shell): the words from there on are the child's.
	childAt int
	cwds    cwdSet // where the segment may run
	bare    bool   // no program at all: an assignment or a redirection alone
	cdpath  bool   // the line may set CDPATH: `cd name` may go where the line does not show
	// progEnv names a variable set for the program that is not on the
	// harmless list: no allow pattern covers the program then.
	progEnv string
	// computed names an argument whose value the line computes: no lexical
	// check can say which path it names.
	computed string
	// paths are the texts the path scope checks: the operands, option
	// values and redirection targets that are paths, certain or in a form
	// DESIGN names as a path (checkArgs).
	paths []pathWord
	// stdinArgs is true for a program xargs runs: it gets more words from
	// its input.
	stdinArgs bool
	// input is true when the program's standard input is a pipe, a heredoc
	// or a file the line names: an interpreter may read its program there.
	input bool
	// progPath is the program as the line names it when the analysis
	// reads it as another (a git helper, git-push, is git push); helper is
	// true then.
	progPath string
	helper   bool
	// pathIsName is true when the program, named by its path, is the
	// file its name resolves to (identity): running it reads nothing the
	// path scope guards.
	pathIsName bool
	// loopVars are the loop variables bound, where the segment runs, to
	// a list of paths the line spells out (boundLoop).
	loopVars map[string][]word
	// runOpts are the options of the option table the segment holds
	// (options.go).
	runOpts []runOpt
	// toks are the words' texts, set once the analysis is done with the
	// words (freezeTokens).
	toks []string
}

// redir is a redirection target and what it is to the program: read,
// written, or data (a heredoc's word).
type redir struct {
	w    word
	kind argKind
}

func (s *segment) verb() string {
	if len(s.words) == 0 {
		return ""
	}
	return s.words[0].text
}

// tokens returns the texts of the segment's words. Once the analysis has
// read the words (freezeTokens), the same slice is returned every time:
// callers must not change it.
func (s *segment) tokens() []string {
	if s.toks != nil {
		return s.toks
	}
	out := make([]string, len(s.words))
	for i, w := range s.words {
		out[i] = w.text
	}
	return out
}

// freezeTokens records the tokens once the words no longer change.
func (s *segment) freezeTokens() {
	s.toks = nil
	s.toks = s.tokens()
}

// cwdSet is the set of absolute, cleaned directories a segment may run in.
// unknown means the line may have moved somewhere it does not show.
type cwdSet struct {
	dirs    []string
	unknown bool
}

func (c cwdSet) union(o cwdSet) cwdSet {
	if (c.unknown || !o.unknown) && len(c.dirs) <= maxCwds && containsAll(c.dirs, o.dirs) {
		return c // nothing new (the common case); dirs are never modified in place
	}
	out := cwdSet{unknown: c.unknown || o.unknown}
	out.dirs = append(out.dirs, c.dirs...)
	for _, d := range o.dirs {
		if !containsString(out.dirs, d) {
			out.dirs = append(out.dirs, d)
		}
	}
	if len(out.dirs) > maxCwds {
		out.dirs = out.dirs[:maxCwds]
		out.unknown = true
	}
	return out
}

// cd returns where a successful `cd target` leads from each directory.
func (c cwdSet) cd(target string) cwdSet {
	out := cwdSet{unknown: c.unknown}
	for _, d := range c.dirs {
		var nd string
		if strings.HasPrefix(target, "/") {
			nd = path.Clean(target)
		} else {
			nd = path.Join(d, target)
		}
		if !containsString(out.dirs, nd) {
			out.dirs = append(out.dirs, nd)
		}
	}
	return out
}

// cdWord is cd for a word: a word the line does not spell out leads to the
// unknown.
func (c cwdSet) cdWord(w word) cwdSet {
	if !w.static || w.text == "" {
		return cwdSet{unknown: true}
	}
	return c.cd(w.text)
}

func containsAll(list, sub []string) bool {
	for _, s := range sub {
		if !containsString(list, s) {
			return false
		}
	}
	return true
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cdTarget returns the directory a cd segment names, and false when the
// line does not show where it goes (bare cd, cd ~, cd -, an expansion).
func cdTarget(s *segment) (string, bool) {
	var target *word
	for i := 1; i < len(s.words); i++ {
		w := &s.words[i]
		if target == nil && (w.text == "-L" || w.text == "-P" || w.text == "-e" || w.text == "-@" || w.text == "--") {
			continue
		}
		if target != nil {
			return "", false // cd takes one directory
		}
		target = w
	}
	if target == nil || !target.static || target.text == "-" || target.text == "" {
		return "", false
	}
	if s.cdpath && cdpathSearched(target.text) {
		return "", false // CDPATH=/ cd etc goes to /etc
	}
	return target.text, true
}

// cdpathSearched reports whether cd looks target up in CDPATH: a relative
// name whose first element is not "." or "..".
func cdpathSearched(target string) bool {
	return !strings.HasPrefix(target, "/") && target != "." && target != ".." &&
		!strings.HasPrefix(target, "./") && !strings.HasPrefix(target, "../")
}
