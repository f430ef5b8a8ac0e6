package ruleimport

// A reader for the part of Starlark Codex's .rules files are written in:
// top-level calls with keyword or positional arguments whose values are
// strings, lists, True, False, None and numbers. Anything else is an error
// that names the line; Codex itself is the judge of what each rule means
// (codex.go checks every carried rule with codex execpolicy check).

import (
	"fmt"
	"strconv"
	"strings"
)

// starCall is one top-level call: name(args).
type starCall struct {
	name   string
	line   int
	text   string // the call as written
	kwargs map[string]any
	args   []any
}

type starLexer struct {
	src  string
	pos  int
	line int
}

type starTok struct {
	kind string // ident, str, num, punct, eof
	text string
	line int
	off  int
}

func (l *starLexer) next() (starTok, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\\' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '\n':
			l.pos++
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		default:
			goto token
		}
	}
	return starTok{kind: "eof", line: l.line, off: l.pos}, nil
token:
	start, c := l.pos, l.src[l.pos]
	switch {
	case strings.ContainsRune("()[],=", rune(c)):
		l.pos++
		return starTok{kind: "punct", text: string(c), line: l.line, off: start}, nil
	case c == '"' || c == '\'':
		s, err := l.str()
		return starTok{kind: "str", text: s, line: l.line, off: start}, err
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		for l.pos < len(l.src) && (l.src[l.pos] == '_' || isAlnum(l.src[l.pos])) {
			l.pos++
		}
		return starTok{kind: "ident", text: l.src[start:l.pos], line: l.line, off: start}, nil
	case c >= '0' && c <= '9' || c == '-':
		l.pos++
		for l.pos < len(l.src) && isAlnum(l.src[l.pos]) {
			l.pos++
		}
		return starTok{kind: "num", text: l.src[start:l.pos], line: l.line, off: start}, nil
	}
	return starTok{}, fmt.Errorf("line %d: %q is not read (brabo reads calls of strings and lists)", l.line, c)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// str reads a quoted string, triple-quoted or not, with Python's escapes.
func (l *starLexer) str() (string, error) {
	q := l.src[l.pos]
	delim := string(q)
	if strings.HasPrefix(l.src[l.pos:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	l.pos += len(delim)
	var b strings.Builder
	for l.pos < len(l.src) {
		if strings.HasPrefix(l.src[l.pos:], delim) {
			l.pos += len(delim)
			return b.String(), nil
		}
		c := l.src[l.pos]
		switch {
		case c == '\n' && len(delim) == 1:
			return "", fmt.Errorf("line %d: a string runs past the end of the line", l.line)
		case c == '\n':
			l.line++
		case c == '\\' && l.pos+1 < len(l.src):
			l.pos++
			switch e := l.src[l.pos]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case '\n':
				l.line++
			default:
				return "", fmt.Errorf("line %d: the escape \\%c is not read", l.line, e)
			}
			l.pos++
			continue
		}
		b.WriteByte(c)
		l.pos++
	}
	return "", fmt.Errorf("line %d: a string is not closed", l.line)
}

// parseStarlark reads the top-level calls of a .rules file.
func parseStarlark(src string) ([]starCall, error) {
	l := &starLexer{src: src, line: 1}
	tok, err := l.next()
	var calls []starCall
	for err == nil && tok.kind != "eof" {
		if tok.kind != "ident" {
			return nil, fmt.Errorf("line %d: a statement is a call such as prefix_rule(…)", tok.line)
		}
		call := starCall{name: tok.text, line: tok.line, kwargs: map[string]any{}}
		start := tok.off
		if tok, err = l.next(); err != nil {
			return nil, err
		}
		if tok.text != "(" {
			return nil, fmt.Errorf("line %d: %s is not called; brabo reads calls only", call.line, call.name)
		}
		for {
			if tok, err = l.next(); err != nil {
				return nil, err
			}
			if tok.text == ")" {
				break
			}
			var name string
			if tok.kind == "ident" && !isStarConst(tok.text) {
				name = tok.text
				eq, err := l.next()
				if err != nil {
					return nil, err
				}
				if eq.text != "=" {
					return nil, fmt.Errorf("line %d: %s: a name is not read as a value", eq.line, name)
				}
				if tok, err = l.next(); err != nil {
					return nil, err
				}
			}
			v, after, err := l.value(tok)
			if err != nil {
				return nil, err
			}
			if name != "" {
				call.kwargs[name] = v
			} else {
				call.args = append(call.args, v)
			}
			if after.text == ")" {
				break
			}
			if after.text != "," {
				return nil, fmt.Errorf("line %d: want ',' or ')'", after.line)
			}
		}
		call.text = src[start:l.pos]
		calls = append(calls, call)
		tok, err = l.next()
	}
	return calls, err
}

func isStarConst(s string) bool { return s == "True" || s == "False" || s == "None" }

// value reads the value starting at tok, and returns the token after it.
func (l *starLexer) value(tok starTok) (any, starTok, error) {
	var v any
	switch {
	case tok.kind == "str":
		v = tok.text
		// Adjacent strings concatenate.
		for {
			next, err := l.next()
			if err != nil {
				return nil, next, err
			}
			if next.kind != "str" {
				return v, next, nil
			}
			v = v.(string) + next.text
		}
	case tok.kind == "num":
		n, err := strconv.Atoi(tok.text)
		if err != nil {
			return nil, tok, fmt.Errorf("line %d: %q is not a number brabo reads", tok.line, tok.text)
		}
		v = n
	case tok.kind == "ident" && isStarConst(tok.text):
		v = map[string]any{"True": true, "False": false, "None": nil}[tok.text]
	case tok.text == "[":
		var list []any
		for {
			t, err := l.next()
			if err != nil {
				return nil, t, err
			}
			if t.text == "]" {
				break
			}
			item, after, err := l.value(t)
			if err != nil {
				return nil, after, err
			}
			list = append(list, item)
			if after.text == "]" {
				break
			}
			if after.text != "," {
				return nil, after, fmt.Errorf("line %d: want ',' or ']' in a list", after.line)
			}
		}
		v = list
	default:
		return nil, tok, fmt.Errorf("line %d: %q is not a value brabo reads (strings, lists, True, False, None)", tok.line, tok.text)
	}
	next, err := l.next()
	return v, next, err
}
