package shell

// A segment is one program a command line would run (DESIGN §4.3), with
// where it may run (CwdSet).

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Segment is one program a command line would run. The exported fields
// are what policy's checks read; the analysis sets them and nothing else
// changes them, except the Why of RunOpts, which Decide sets.
type Segment struct {
	Text    string  // the program's words as the line writes them
	Words   []word  // verb first; leading assignments excluded
	Assigns []word  // values of leading assignments (VAR=value → value)
	envSet  bool    // the program runs with variables set by the line
	redirs  []redir // redirections of this segment and its enclosing statements
	Opaque  string  // why the program cannot be known statically ("" if it can)
	Wraps   bool    // this segment is a wrapper whose program is its own segment too
	// childAt is the index in words where the wrapped program starts (or
	// the -c script of a shell): the words from there on are the child's.
	childAt int
	Cwds    CwdSet // where the segment may run
	Bare    bool   // no program at all: an assignment or a redirection alone
	cdpath  bool   // the line may set CDPATH: `cd name` may go where the line does not show
	// progEnv names a variable set for the program that is not on the
	// harmless list: no allow pattern covers the program then.
	ProgEnv string
	// computed names an argument whose value the line computes: no lexical
	// check can say which path it names.
	Computed string
	// paths are the texts the path scope checks: the operands, option
	// values and redirection targets that are paths, certain or in a form
	// DESIGN names as a path (checkArgs).
	Paths []pathWord
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
	Helper   bool
	// pathIsName is true when the program, named by its path, is the
	// file its name resolves to (identity): running it reads nothing the
	// path scope guards.
	PathIsName bool
	// loopVars are the loop variables bound, where the segment runs, to
	// a list of paths the line spells out (boundLoop).
	loopVars map[string][]word
	// runOpts are the options of the option table the segment holds
	// (options.go).
	RunOpts []RunOpt
	// toks are the words' texts, set once the analysis is done with the
	// words (freezeTokens).
	toks []string
}

// redir is a redirection target and what it is to the program: read,
// written, or data (a heredoc's word).
type redir struct {
	w    word
	kind ArgKind
}

// Verb is the program the segment runs as the analysis reads it (git for
// git's helpers), "" for a segment that runs none.
func (s *Segment) Verb() string {
	if len(s.Words) == 0 {
		return ""
	}
	return s.Words[0].Text
}

// Tokens returns the texts of the segment's words. Once the analysis has
// read the words (freezeTokens), the same slice is returned every time:
// callers must not change it.
func (s *Segment) Tokens() []string {
	if s.toks != nil {
		return s.toks
	}
	out := make([]string, len(s.Words))
	for i, w := range s.Words {
		out[i] = w.Text
	}
	return out
}

// freezeTokens records the tokens once the words no longer change.
func (s *Segment) freezeTokens() {
	s.toks = nil
	s.toks = s.Tokens()
}

// CwdSet is the set of absolute, cleaned directories a segment may run in.
// Unknown means the line may have moved somewhere it does not show.
type CwdSet struct {
	Dirs    []string
	Unknown bool
}

func (c CwdSet) union(o CwdSet) CwdSet {
	if (c.Unknown || !o.Unknown) && len(c.Dirs) <= maxCwds && containsAll(c.Dirs, o.Dirs) {
		return c // nothing new (the common case); dirs are never modified in place
	}
	out := CwdSet{Unknown: c.Unknown || o.Unknown}
	out.Dirs = append(out.Dirs, c.Dirs...)
	for _, d := range o.Dirs {
		if !ContainsString(out.Dirs, d) {
			out.Dirs = append(out.Dirs, d)
		}
	}
	if len(out.Dirs) > maxCwds {
		out.Dirs = out.Dirs[:maxCwds]
		out.Unknown = true
	}
	return out
}

// cd returns where a successful `cd target` leads from each directory.
func (c CwdSet) cd(target string) CwdSet {
	out := CwdSet{Unknown: c.Unknown}
	for _, d := range c.Dirs {
		var nd string
		if strings.HasPrefix(target, "/") {
			nd = path.Clean(target)
		} else {
			nd = path.Join(d, target)
		}
		if !ContainsString(out.Dirs, nd) {
			out.Dirs = append(out.Dirs, nd)
		}
	}
	return out
}

// cdWord is cd for a word: a word the line does not spell out leads to the
// unknown.
func (c CwdSet) cdWord(w word) CwdSet {
	if !w.Static || w.Text == "" {
		return CwdSet{Unknown: true}
	}
	return c.cd(w.Text)
}

func containsAll(list, sub []string) bool {
	for _, s := range sub {
		if !ContainsString(list, s) {
			return false
		}
	}
	return true
}

// ContainsString reports whether list holds s.
func ContainsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// CdTarget returns the directory a cd segment names, and false when the
// line does not show where it goes (bare cd, cd ~, cd -, an expansion).
func CdTarget(s *Segment) (string, bool) {
	var target *word
	for i := 1; i < len(s.Words); i++ {
		w := &s.Words[i]
		if target == nil && (w.Text == "-L" || w.Text == "-P" || w.Text == "-e" || w.Text == "-@" || w.Text == "--") {
			continue
		}
		if target != nil {
			return "", false // cd takes one directory
		}
		target = w
	}
	if target == nil || !target.Static || target.Text == "-" || target.Text == "" {
		return "", false
	}
	if s.cdpath && cdpathSearched(target.Text) {
		return "", false // CDPATH=/ cd etc goes to /etc
	}
	return target.Text, true
}

// cdpathSearched reports whether cd looks target up in CDPATH: a relative
// name whose first element is not "." or "..".
func cdpathSearched(target string) bool {
	return !strings.HasPrefix(target, "/") && target != "." && target != ".." &&
		!strings.HasPrefix(target, "./") && !strings.HasPrefix(target, "../")
}

// HasDotDot reports whether p has a ".." element.
func HasDotDot(p string) bool {
	// an element "..": a scan, not strings.Split, as it runs on every token
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '.' && p[i+1] == '.' && (i == 0 || p[i-1] == '/') && (i+2 == len(p) || p[i+2] == '/') {
			return true
		}
	}
	return false
}

// Within reports whether p is dir or inside it; both must be clean.
func Within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || (strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/')
}

// PathCandidates returns the absolute paths a token may name from the
// directories the segment may run in.
func PathCandidates(t string, cwds CwdSet) []string {
	if strings.HasPrefix(t, "/") {
		return []string{path.Clean(t)}
	}
	out := make([]string, 0, len(cwds.Dirs))
	for _, d := range cwds.Dirs {
		out = append(out, path.Join(d, t))
	}
	return out
}

// Clip cuts s to at most n bytes on a rune boundary, saying how much it
// left out.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}
