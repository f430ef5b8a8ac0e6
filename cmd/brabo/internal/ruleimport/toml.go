package ruleimport

// A reader for the part of TOML Gemini CLI's policy files are written in:
// [[rule]] tables of key = value, the values strings (basic and literal),
// integers, booleans, arrays of those and inline tables of those. Other
// tables are read and ignored; anything else is an error naming the line.

import (
	"fmt"
	"strconv"
	"strings"
)

// tomlTable is one [[name]] table, with the line it starts on.
type tomlTable struct {
	name   string
	line   int
	values map[string]any
}

// parseTOML returns the array-of-tables entries of a file, in order.
func parseTOML(src string) ([]tomlTable, error) {
	var out []tomlTable
	var cur *tomlTable
	p := &tomlParser{src: src, line: 1}
	for {
		p.skipBlank()
		if p.pos >= len(p.src) {
			break
		}
		switch {
		case strings.HasPrefix(p.src[p.pos:], "[["):
			end := strings.Index(p.src[p.pos:], "]]")
			if end < 0 {
				return nil, fmt.Errorf("line %d: [[ is not closed", p.line)
			}
			out = append(out, tomlTable{name: strings.TrimSpace(p.src[p.pos+2 : p.pos+end]), line: p.line, values: map[string]any{}})
			cur = &out[len(out)-1]
			p.pos += end + 2
		case p.src[p.pos] == '[':
			end := strings.IndexByte(p.src[p.pos:], ']')
			if end < 0 {
				return nil, fmt.Errorf("line %d: [ is not closed", p.line)
			}
			cur = &tomlTable{values: map[string]any{}} // a table brabo does not read
			p.pos += end + 1
		default:
			key, err := p.key()
			if err != nil {
				return nil, err
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			if cur == nil {
				cur = &tomlTable{values: map[string]any{}}
			}
			if _, dup := cur.values[key]; dup {
				return nil, fmt.Errorf("line %d: %s is set twice", p.line, key)
			}
			cur.values[key] = v
		}
		p.endLine()
		if p.err != nil {
			return nil, p.err
		}
	}
	return out, nil
}

type tomlParser struct {
	src  string
	pos  int
	line int
	err  error
}

// skipBlank skips white space, new lines and comments.
func (p *tomlParser) skipBlank() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// endLine checks that only a comment follows on the line.
func (p *tomlParser) endLine() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\r') {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '#' {
		p.err = fmt.Errorf("line %d: unexpected %q after a value", p.line, p.src[p.pos])
	}
}

func (p *tomlParser) key() (string, error) {
	start := p.pos
	for p.pos < len(p.src) && (isAlnum(p.src[p.pos]) || p.src[p.pos] == '-') {
		p.pos++
	}
	key := p.src[start:p.pos]
	p.skipSpaces()
	if key == "" || p.pos >= len(p.src) || p.src[p.pos] != '=' {
		return "", fmt.Errorf("line %d: want key = value", p.line)
	}
	p.pos++
	p.skipSpaces()
	return key, nil
}

func (p *tomlParser) skipSpaces() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *tomlParser) value() (any, error) {
	if p.pos >= len(p.src) {
		return nil, fmt.Errorf("line %d: a value is missing", p.line)
	}
	switch c := p.src[p.pos]; {
	case c == '"' || c == '\'':
		if strings.HasPrefix(p.src[p.pos:], strings.Repeat(string(c), 3)) {
			return nil, fmt.Errorf("line %d: multi-line strings are not read", p.line)
		}
		return p.str(c)
	case c == '[':
		p.pos++
		var list []any
		for {
			p.skipBlank()
			if p.pos < len(p.src) && p.src[p.pos] == ']' {
				p.pos++
				return list, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			list = append(list, v)
			p.skipBlank()
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.src) && p.src[p.pos] == ']' {
				p.pos++
				return list, nil
			}
			return nil, fmt.Errorf("line %d: want ',' or ']' in an array", p.line)
		}
	case c == '{':
		p.pos++
		m := map[string]any{}
		for {
			p.skipSpaces()
			if p.pos < len(p.src) && p.src[p.pos] == '}' {
				p.pos++
				return m, nil
			}
			k, err := p.key()
			if err != nil {
				return nil, err
			}
			if m[k], err = p.value(); err != nil {
				return nil, err
			}
			p.skipSpaces()
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
			}
		}
	}
	start := p.pos
	for p.pos < len(p.src) && (isAlnum(p.src[p.pos]) || p.src[p.pos] == '-' || p.src[p.pos] == '+') {
		p.pos++
	}
	word := p.src[start:p.pos]
	switch word {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	n, err := strconv.Atoi(strings.ReplaceAll(word, "_", ""))
	if err != nil {
		return nil, fmt.Errorf("line %d: %q is not a value brabo reads (strings, integers, booleans, arrays)", p.line, word)
	}
	return n, nil
}

// str reads a basic ("…", with escapes) or literal ('…') string.
func (p *tomlParser) str(q byte) (string, error) {
	p.pos++
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c == '\n':
			return "", fmt.Errorf("line %d: a string runs past the end of the line", p.line)
		case c == '\\' && q == '"' && p.pos+1 < len(p.src):
			p.pos++
			switch e := p.src[p.pos]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '"':
				b.WriteByte(e)
			default:
				return "", fmt.Errorf("line %d: the escape \\%c is not read", p.line, e)
			}
			p.pos++
			continue
		}
		b.WriteByte(c)
		p.pos++
	}
	return "", fmt.Errorf("line %d: a string is not closed", p.line)
}
