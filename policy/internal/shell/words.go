package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// word is one shell word as the policy reads it: quotes removed as bash
// removes them, and nothing expanded. An expansion keeps its source text in
// place, so "$HOME/x" stays the token `$HOME/x`.
//
// A word is certain (static) only when bash's reading of it is exactly its
// text: literal characters, single and double quotes, and $'…' without a
// NUL escape (DESIGN §9, "Words"). Every other form is recorded by what
// makes it uncertain, so that each check can refuse what it cannot read
// exactly: the program name, a subcommand and an option must be certain; a
// path may be a form DESIGN names as a path ($HOME, $PWD, ~); a printed
// string may be anything.
type word struct {
	Text string
	// static is true when the word holds no expansion of any kind: its text
	// is exactly what the program sees.
	Static bool

	glob        bool     // an unquoted *, ? or [, or an extended glob
	brace       bool     // an unquoted brace expansion (simple lists are expanded before; see expandBraces)
	substituted bool     // a command or process substitution
	arith       bool     // an arithmetic expansion $((…))
	params      []string // parameters expanded with no operator
	paramOp     bool     // a parameter expansion with an operator, an index, a length or indirection
	nul         bool     // a $'…' escape that yields NUL, which bash reads differently (it cuts the string there)
	tilde       bool     // a leading ~: a home folder
	undecodable bool     // a $'…' escape this decoder does not know
	// dynStart is true when the word's first character comes from an
	// expansion: it may start with '-' and be read as an option.
	dynStart bool
	// starSuffix is true when the word ends in an unquoted '*' (pattern
	// tokens only give it meaning).
	StarSuffix bool
	// onlyProcSubst is true for a word that is one process substitution,
	// <(…) or >(…): a pipe to the commands inside, not a path.
	onlyProcSubst bool
}

// opaqueForm says why a word is not one bash reads exactly in a position
// where a path is expected (DESIGN §9): a brace expansion, a NUL escape, a
// parameter operator or an escape this decoder does not know. A plain
// expansion ($x, $(…), a glob) is not among them: it is a path the line
// computes, which the scope check cannot place but can refuse to approve.
func (w *word) opaqueForm() string {
	switch {
	case w.nul:
		return "a NUL escape, which bash reads differently: " + w.Text
	case w.brace:
		return "a brace expansion other than a plain list: " + w.Text
	case w.paramOp:
		return "a parameter expansion with an operator: " + w.Text
	case w.undecodable:
		return "an escape brabo does not decode: " + w.Text
	}
	return ""
}

// mayBeOption reports whether bash could hand the word to the program as
// something starting with '-'.
func (w *word) mayBeOption() bool {
	return w.dynStart || strings.HasPrefix(w.Text, "-")
}

// expansion records what a dynamic part of a word reads.
func (w *word) expansion(p syntax.WordPart) {
	switch x := p.(type) {
	case *syntax.CmdSubst:
		w.substituted = true
	case *syntax.ProcSubst:
		w.substituted = true
	case *syntax.ArithmExp:
		w.arith = true
	case *syntax.ParamExp:
		if paramHasOperator(x) {
			w.paramOp = true
		} else if x.Param != nil {
			w.params = append(w.params, x.Param.Value)
		}
	case *syntax.BraceExp:
		w.brace = true
	}
}

// paramHasOperator reports whether a parameter expansion does more than read
// a variable: ${x:-…}, ${x#…}, ${#x}, ${!x}, ${x[i]}, ${x@P}, ${x/…/…}.
func paramHasOperator(x *syntax.ParamExp) bool {
	return x.Exp != nil || x.Slice != nil || x.Repl != nil || x.Names != 0 || x.Excl ||
		x.Length || x.Width || x.Index != nil || x.Param == nil
}

// DecodeWord removes quoting from w as the shell would, without expanding
// anything; src is the text w was parsed from.
func DecodeWord(src string, w *syntax.Word) word {
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.IndexByte(lit.Value, '\\') < 0 {
			// The common case: with no backslash the text is the literal
			// itself; only the flags need the scan.
			out := word{Static: true, Text: lit.Value}
			if lit.Value == "[" {
				// The test builtin: a lone '[' closes no bracket, and
				// bash reads it as the letter it is.
				return out
			}
			if strings.HasPrefix(lit.Value, "~") {
				out.Static, out.tilde = false, true
			}
			var bs braceScan
			decodeUnquotedLit(nil, lit.Value, &out, true, &bs)
			return out
		}
		if ps, ok := w.Parts[0].(*syntax.ProcSubst); ok {
			return word{Text: sourceOf(src, ps), substituted: true, dynStart: true, onlyProcSubst: true}
		}
	}
	out := word{Static: true}
	var b strings.Builder
	// Decoding never lengthens a word: one allocation for its text.
	b.Grow(int(w.End().Offset()) - int(w.Pos().Offset()))
	var bs braceScan
	for i, part := range w.Parts {
		last := i == len(w.Parts)-1
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				out.Static, out.tilde = false, true
			}
			decodeUnquotedLit(&b, v, &out, last, &bs)
		case *syntax.SglQuoted:
			if p.Dollar {
				s, nul, ok := decodeANSIC(p.Value)
				switch {
				case !ok:
					out.Static, out.undecodable = false, true
					b.WriteString(sourceOf(src, p))
					continue
				case nul:
					out.Static, out.nul = false, true
				}
				b.WriteString(s)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if lit, ok := dp.(*syntax.Lit); ok {
					decodeDoubleQuotedLit(&b, lit.Value)
					continue
				}
				if b.Len() == 0 {
					out.dynStart = true
				}
				out.Static = false
				out.expansion(dp)
				b.WriteString(sourceOf(src, dp))
			}
		case *syntax.ExtGlob:
			out.Static = false
			out.glob = true
			if b.Len() == 0 {
				out.dynStart = true
			}
			b.WriteString(sourceOf(src, p))
		default: // ParamExp, CmdSubst, ArithmExp, ProcSubst, BraceExp
			out.Static = false
			if b.Len() == 0 {
				out.dynStart = true
			}
			out.expansion(p)
			b.WriteString(sourceOf(src, p))
		}
	}
	if bs.brace {
		out.brace, out.Static = true, false
	}
	out.Text = b.String()
	return out
}

// sourceOf returns the source text of n, or a placeholder when its
// positions do not fit src (which never happens for a parsed src).
func sourceOf(src string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return "$?"
	}
	return src[start:end]
}

// braceScan follows the unquoted characters of one word across its parts,
// as bash's brace expansion reads them: an unquoted '{', then an unquoted
// ',' or '..', then an unquoted '}' is an expansion, whatever quoted parts
// stand between ({'-exec',} is the two words -exec and nothing).
type braceScan struct {
	depth int  // unquoted '{' not yet closed
	sep   bool // an unquoted ',' or '..' since the first '{'
	brace bool // an expansion was seen
}

func decodeUnquotedLit(b *strings.Builder, v string, out *word, last bool, bs *braceScan) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			if v[i] != '\n' { // a line continuation vanishes
				if b != nil {
					b.WriteByte(v[i])
				}
			}
			continue
		case c == '*' || c == '?' || c == '[':
			out.glob = true
			out.Static = false
			if b == nil && i == 0 || b != nil && b.Len() == 0 {
				out.dynStart = true // a glob may match a name that starts with '-'
			}
			if c == '*' && last && i == len(v)-1 {
				out.StarSuffix = true
			}
		case c == '{':
			bs.depth++
		case c == ',' && bs.depth > 0:
			bs.sep = true
		case c == '.' && bs.depth > 0 && i+1 < len(v) && v[i+1] == '.':
			bs.sep = true
		case c == '}' && bs.depth > 0:
			bs.depth--
			if bs.sep {
				bs.brace = true
			}
		}
		if b != nil { // nil: the caller only wants the flags
			b.WriteByte(c)
		}
	}
	if bs.brace {
		out.brace, out.Static = true, false
	}
}

func decodeDoubleQuotedLit(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(v[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
}

// decodeANSIC decodes the body of a $'…' string. nul reports an escape that
// yields a NUL byte (\0, \x00, \u0000, \400, \c@): bash cuts the string
// there, which a reader of the line does not see. ok is false for an escape
// it does not know, so that the caller treats the word as uncertain rather
// than guess.
func decodeANSIC(v string) (s string, nul, ok bool) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(v) {
			return "", false, false
		}
		i++
		switch e := v[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(v) && j < i+3 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(v[i:j], 8, 16)
			if byte(n) == 0 { // \400 is 256: bash keeps the low byte
				nul = true
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(v) && j < i+1+max && isHexDigit(v[j]) {
				j++
			}
			if j == i+1 {
				return "", false, false
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			if n == 0 {
				nul = true
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				if !utf8.ValidRune(rune(n)) {
					return "", false, false
				}
				b.WriteRune(rune(n))
			}
			i = j - 1
		default: // \cX (control characters) and anything newer: not guessed
			return "", false, false
		}
	}
	return b.String(), nul, true
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// expandBraces expands the one brace form brabo reads exactly (DESIGN §9):
// a word that is a single unquoted literal holding one non-nested comma
// list of plain items, such as src/{components,hooks}. Bash turns it into
// one word per item (prefix, item, suffix), dropping the ones that come out
// empty. It returns nil for any other word.
func expandBraces(w *syntax.Word) []string {
	if len(w.Parts) != 1 {
		return nil
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return nil
	}
	v := lit.Value
	open, close := strings.IndexByte(v, '{'), strings.IndexByte(v, '}')
	if open < 0 || close < open || strings.Count(v, "{") != 1 || strings.Count(v, "}") != 1 {
		return nil
	}
	prefix, body, suffix := v[:open], v[open+1:close], v[close+1:]
	if !strings.Contains(body, ",") || !plainBraceText(prefix) || !plainBraceText(suffix) {
		return nil
	}
	items := strings.Split(body, ",")
	out := make([]string, 0, len(items))
	for _, it := range items {
		if !plainBraceText(it) {
			return nil
		}
		if s := prefix + it + suffix; s != "" {
			out = append(out, s)
		}
	}
	return out
}

// plainBraceText reports whether s is made only of [A-Za-z0-9._/-].
func plainBraceText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}
