package policy

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// word is one shell word after quote removal, as the policy compares it.
// Expansions are never performed: their source text is kept in place, so
// "$HOME/x" stays the token `$HOME/x`.
type word struct {
	text string
	// static is true when the word holds no expansion of any kind
	// (parameter, command, arithmetic, process substitution, tilde, glob,
	// brace or extended glob): its text is exactly what the program sees.
	static bool
	// glob is true when an unquoted *, ? or [ or an extended glob appears.
	glob bool
	// brace is true when an unquoted brace expansion ({a,b} or {1..3}) appears:
	// the shell would turn the word into several.
	brace bool
	// starSuffix is true when the word ends in an unquoted '*' (pattern
	// tokens only give it meaning).
	starSuffix bool
	// substituted is true when a command substitution is part of the word:
	// its value is whatever a program prints.
	substituted bool
	// params are the variables the word expands.
	params []string
}

// expansion records what a dynamic part of a word reads.
func (w *word) expansion(p syntax.WordPart) {
	switch x := p.(type) {
	case *syntax.CmdSubst:
		w.substituted = true
	case *syntax.ParamExp:
		if x.Param != nil {
			w.params = append(w.params, x.Param.Value)
		}
	}
}

// decodeWord removes quoting from w as the shell would, without expanding
// anything; src is the text w was parsed from.
func decodeWord(src string, w *syntax.Word) word {
	if len(w.Parts) == 1 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.IndexByte(lit.Value, '\\') < 0 {
			// The common case: with no backslash the text is the literal
			// itself; only the flags need the scan.
			out := word{static: !strings.HasPrefix(lit.Value, "~"), text: lit.Value}
			decodeUnquotedLit(nil, lit.Value, &out, true)
			return out
		}
	}
	out := word{static: true}
	var b strings.Builder
	// Decoding never lengthens a word: one allocation for its text.
	b.Grow(int(w.End().Offset()) - int(w.Pos().Offset()))
	for i, part := range w.Parts {
		last := i == len(w.Parts)-1
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				out.static = false // tilde expansion
			}
			decodeUnquotedLit(&b, v, &out, last)
		case *syntax.SglQuoted:
			if p.Dollar {
				s, ok := decodeANSIC(p.Value)
				if !ok {
					out.static = false
					b.WriteString(sourceOf(src, p))
					continue
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
				out.static = false
				out.expansion(dp)
				b.WriteString(sourceOf(src, dp))
			}
		case *syntax.ExtGlob:
			out.static = false
			out.glob = true
			b.WriteString(sourceOf(src, p))
		default: // ParamExp, CmdSubst, ArithmExp, ProcSubst, BraceExp
			out.static = false
			out.expansion(p)
			b.WriteString(sourceOf(src, p))
		}
	}
	out.text = b.String()
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

func decodeUnquotedLit(b *strings.Builder, v string, out *word, last bool) {
	braceOpen := -1
	braceSep := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			if v[i] != '\n' { // a line continuation vanishes
				b.WriteByte(v[i])
			}
			continue
		case c == '*' || c == '?' || c == '[':
			out.glob = true
			out.static = false
			if c == '*' && last && i == len(v)-1 {
				out.starSuffix = true
			}
		case c == '{':
			braceOpen = i
			braceSep = false
		case c == ',' && braceOpen >= 0:
			braceSep = true
		case c == '.' && braceOpen >= 0 && i+1 < len(v) && v[i+1] == '.':
			braceSep = true
		case c == '}' && braceOpen >= 0 && braceSep:
			out.brace = true
			out.static = false
		}
		if b != nil { // nil: the caller only wants the flags
			b.WriteByte(c)
		}
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

// decodeANSIC decodes the body of a $'…' string. It reports false for an
// escape it does not know, so that the caller treats the word as dynamic
// rather than guess.
func decodeANSIC(v string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(v) {
			return "", false
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
			b.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(v) && j < i+1+max && isHexDigit(v[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				if !utf8.ValidRune(rune(n)) {
					return "", false
				}
				b.WriteRune(rune(n))
			}
			i = j - 1
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
