package policy

// A for loop over a literal list (once read over-strictly): `for f in
// README.md package.json; do head -3 "$f"; done` reads two files the line
// spells out. Inside the body, a word that is just the loop variable is
// each of its items, checked as a path like any other, when every item is
// a relative path (or a glob) inside the folder the loop runs in and the
// body does not change the variable.

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// boundLoop returns the loop variables in force inside c's body: the
// enclosing ones, with c's own bound to its items when they qualify and
// removed when they do not.
func (a *analyzer) boundLoop(src string, c *syntax.ForClause) map[string][]word {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok || wi.Name == nil {
		return a.loop
	}
	name := wi.Name.Value
	out := make(map[string][]word, len(a.loop)+1)
	for k, v := range a.loop {
		if k != name {
			out[k] = v
		}
	}
	if !wi.InPos.IsValid() || len(wi.Items) == 0 || len(wi.Items) > maxLoopItems || changesVar(sourceOf(src, c), name) {
		return out
	}
	items := make([]word, 0, len(wi.Items))
	for _, it := range wi.Items {
		if expandBraces(it) != nil {
			return out
		}
		w := decodeWord(src, it)
		if !(w.static || globOnly(&w)) || w.text == "" || strings.HasPrefix(w.text, "-") ||
			strings.HasPrefix(w.text, "/") || hasDotDot(w.text) || strings.ContainsAny(w.text, "$`~") {
			return out
		}
		items = append(items, w)
	}
	out[name] = items
	return out
}

// maxLoopItems bounds the items a loop variable is checked as.
const maxLoopItems = 64

// changesVar reports whether a loop's text may set its variable other
// than by the loop: an assignment, or a builtin that sets variables or
// evaluates strings. It reads the text, not the syntax: a mention
// anywhere counts.
func changesVar(text, name string) bool {
	if strings.Contains(text, name+"=") || strings.Contains(text, name+"+=") || strings.Contains(text, name+"[") ||
		strings.Contains(text, "${"+name+":") || strings.Contains(text, "${"+name+"=") || strings.Contains(text, "((") {
		return true
	}
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		switch f {
		case "read", "mapfile", "readarray", "printf", "declare", "typeset", "local", "export", "readonly",
			"unset", "getopts", "let", "eval", "source", "for", "select", "coproc", "function", "alias":
			if f == "for" && strings.Count(text, "for") == 1 {
				continue // the loop itself
			}
			return true
		}
	}
	return strings.Contains(text, ". ") || strings.Contains(text, "()")
}

// loopRef returns the items of the loop variable w is exactly ("$f",
// "${f}"), or nil.
func (s *segment) loopRef(w *word) []word {
	if s.loopVars == nil || len(w.params) != 1 || w.glob || w.brace || w.paramOp || w.substituted ||
		w.arith || w.tilde || w.nul || w.undecodable {
		return nil
	}
	p := w.params[0]
	if w.text != "$"+p && w.text != "${"+p+"}" {
		return nil
	}
	return s.loopVars[p]
}
