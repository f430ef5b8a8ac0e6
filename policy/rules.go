package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
	"mvdan.cc/sh/v3/syntax"
)

// Rules is a compiled permissions.json (DESIGN §3.1). The nil *Rules is the
// empty file: no list matches anything. A Rules returned with an error by
// Parse is invalid, and Decide never approves with it.
type Rules struct {
	file     string
	err      error
	warnings []string
	lists    [3]ruleList // indexed by listKind
}

type listKind int

const (
	listAllow listKind = iota
	listDeny
	listAsk
)

var listNames = [3]string{"allow", "deny", "ask"}

type ruleList struct {
	patterns []pattern
	terminal trie
	typed    map[brabo.ActionType][]int // label → indices of its patterns, in file order
}

// pattern is one compiled entry of a list.
type pattern struct {
	source   string // as written: Terminal(pnpm test)
	typ      brabo.ActionType
	tokens   []patternToken
	readOnly bool        // the content of a seeded read-only pattern: guarded (DESIGN §4.3)
	path     pathPattern // the content of a typed label whose content is a path (WriteFile)
	tool     toolPattern // the content of McpTool
	net      netPattern  // the content of Network (network.go)
	// synonym is what a pattern written in another agent's spelling is
	// read as: Bash(git status) is Terminal(git status).
	synonym string
}

type patternToken struct {
	text     string
	wildcard bool // text is a prefix: the pattern token ended in '*'
}

// FileError reports every invalid entry of a permissions file. Its code is
// invalid_permissions.
type FileError struct {
	File    string       `json:"file"`
	Entries []EntryError `json:"entries"`
}

// EntryError is one invalid entry: where it is, what it says, and why it is
// refused. Entry is "allow[2]" for an entry, or the key or "" for the file.
type EntryError struct {
	Entry   string `json:"entry"`
	Pattern string `json:"pattern,omitempty"`
	Why     string `json:"why"`
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	for i, en := range e.Entries {
		if i > 0 {
			b.WriteString("; ")
		}
		if en.Entry != "" {
			b.WriteString(en.Entry)
			if en.Pattern != "" {
				fmt.Fprintf(&b, " %q", en.Pattern)
			}
			b.WriteString(": ")
		}
		b.WriteString(en.Why)
	}
	return b.String()
}

// Code returns the API error code of an invalid permissions file.
func (e *FileError) Code() brabo.Code { return brabo.CodeInvalidPermissions }

// Parse compiles the content of a permissions file; name is how errors and
// reasons name the file. Empty content (or only white space) is the empty
// file, like a missing one. An unknown top-level key is a warning (and kept
// by writers); one that looks like a misspelt list name (keys.go) makes the
// file invalid. On error the returned *Rules is invalid: Decide approves
// nothing with it and asks a human, naming the error, but the deny and ask
// entries it could read still deny and ask.
func Parse(name string, data []byte) (*Rules, error) {
	if name == "" {
		name = "permissions.json"
	}
	var lists [3][]string
	var keyWarnings []string
	if len(bytes.TrimSpace(data)) > 0 {
		fe := &FileError{File: name}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil {
			fe.Entries = append(fe.Entries, EntryError{Why: jsonWhy(data, err)})
			return invalid(name, fe), fe
		}
		fe.Entries = append(fe.Entries, listKeyProblems(data, top)...)
		problems, warnings := keyProblems(top)
		fe.Entries = append(fe.Entries, problems...)
		for _, w := range warnings {
			keyWarnings = append(keyWarnings, name+": "+w)
		}
		for k, key := range listNames {
			raw, ok := top[key]
			if !ok || string(raw) == "null" {
				continue
			}
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				fe.Entries = append(fe.Entries, EntryError{Entry: key, Why: "must be a list of pattern strings"})
				continue
			}
			for i, item := range items {
				var s string
				if err := json.Unmarshal(item, &s); err != nil {
					fe.Entries = append(fe.Entries, EntryError{
						Entry: fmt.Sprintf("%s[%d]", key, i), Pattern: string(item),
						Why: "must be a string such as \"Terminal(pnpm test)\""})
					continue
				}
				lists[k] = append(lists[k], s)
			}
		}
		if len(fe.Entries) > 0 {
			salvaged, _ := compile(name, lists)
			salvaged.err = fe
			return salvaged, fe
		}
	}
	r, err := compile(name, lists)
	r.warnings = append(keyWarnings, r.warnings...)
	return r, err
}

// NewRules compiles the three lists as if they were read from a file called
// name. It is Parse without the JSON.
func NewRules(name string, allow, deny, ask []string) (*Rules, error) {
	if name == "" {
		name = "permissions.json"
	}
	return compile(name, [3][]string{allow, deny, ask})
}

func invalid(name string, err error) *Rules { return &Rules{file: name, err: err} }

// Unreadable returns the rules of a permissions file that exists but
// cannot be read: like an invalid file, every decision with them asks a
// human, and the reason says why ("permissions.json invalid: cannot be
// read: permission denied"). why must not hold an absolute path: reasons
// are stored in events every member reads.
func Unreadable(name, why string) *Rules {
	if name == "" {
		name = "permissions.json"
	}
	return invalid(name, &FileError{File: name, Entries: []EntryError{{Why: "cannot be read: " + why}}})
}

func compile(name string, lists [3][]string) (*Rules, error) {
	r := &Rules{file: name}
	fe := &FileError{File: name}
	for k, list := range lists {
		rl := &r.lists[k]
		for i, src := range list {
			entry := fmt.Sprintf("%s[%d]", listNames[k], i)
			p, warning, err := parseEntry(src, listKind(k))
			var fe2 *foreignError
			switch {
			case err != nil && listKind(k) == listAllow && errors.As(err, &fe2):
				// Another agent's spelling brabo cannot read: in allow
				// alone it is dropped, and counts as absent.
				r.warnings = append(r.warnings, fmt.Sprintf("%s: %s %q: dropped: %s", name, entry, src, err))
				continue
			case err != nil:
				fe.Entries = append(fe.Entries, EntryError{Entry: entry, Pattern: src, Why: err.Error()})
				continue
			case p.path.outside() && listKind(k) == listAllow:
				r.warnings = append(r.warnings, fmt.Sprintf("%s: %s %q: dropped: %s", name, entry, src, errOutsideAllow))
				continue
			case p.path.outside() && listKind(k) == listAsk:
				r.warnings = append(r.warnings, fmt.Sprintf("%s: %s %q: %s", name, entry, src, outsideAskNote))
			}
			if warning != "" {
				r.warnings = append(r.warnings, fmt.Sprintf("%s: %s %q: %s", name, entry, src, warning))
				continue
			}
			if p.synonym != "" {
				r.warnings = append(r.warnings, fmt.Sprintf("%s: %s %q: read as %s", name, entry, src, p.synonym))
			}
			if w := invisibleWarning(src); w != "" {
				r.warnings = append(r.warnings, fmt.Sprintf("%s: %s %q: %s", name, entry, src, w))
			}
			idx := len(rl.patterns)
			rl.patterns = append(rl.patterns, p)
			if p.typ == brabo.Terminal {
				rl.terminal.insert(p.tokens, idx)
				continue
			}
			if rl.typed == nil {
				rl.typed = map[brabo.ActionType][]int{}
			}
			rl.typed[p.typ] = append(rl.typed[p.typ], idx)
		}
	}
	if len(fe.Entries) > 0 {
		// The entries that did compile stay: an invalid file never
		// approves, and never drops a deny it could read (list).
		r.err = fe
		return r, fe
	}
	return r, nil
}

// Err returns why the file is invalid, or nil.
func (r *Rules) Err() error {
	if r == nil {
		return nil
	}
	return r.err
}

// Warnings returns remarks on entries that are valid but can never match,
// such as content on a label other than Terminal, or that do not hold back
// what they seem to (a deny "Terminal(curl:*)" does not match curl).
func (r *Rules) Warnings() []string {
	if r == nil {
		return nil
	}
	return r.warnings
}

// File returns the name the rules were read under.
func (r *Rules) File() string {
	if r == nil {
		return "permissions.json"
	}
	return r.file
}

// list returns the compiled list k. An invalid file has no allow list; its
// deny and ask lists hold the entries that compiled.
func (r *Rules) list(k listKind) *ruleList {
	if r == nil || r.err != nil && k == listAllow {
		return nil
	}
	return &r.lists[k]
}

var errPatternShape = errors.New(`a pattern is Label(content), such as "Terminal(pnpm test)" or "GitPush()"`)

// parsePattern compiles one entry. A warning (and no error) means the entry
// is valid but matches nothing.
func parsePattern(src string) (p pattern, warning string, err error) {
	open := strings.IndexByte(src, '(')
	if open <= 0 || !strings.HasSuffix(src, ")") {
		return p, "", errPatternShape
	}
	label, content := src[:open], src[open+1:len(src)-1]
	if label == NetworkLabel {
		p = pattern{source: src, typ: networkType}
		p.net, err = parseNetPattern(content)
		return p, "", err
	}
	synonym := ""
	typ, ok := brabo.ActionTypeForLabel(label)
	if !ok {
		return p, "", fmt.Errorf("unknown label %s (labels are the action types in PascalCase: Terminal, GitPush, …)", label)
	}
	p = pattern{source: src, typ: typ, synonym: synonym}
	if pathLabel(string(typ)) {
		p.path, err = parsePathPattern(content)
		return p, "", err
	}
	if typ == brabo.McpTool {
		p.tool, err = parseToolPattern(content)
		return p, "", err
	}
	if typ != brabo.Terminal {
		if strings.TrimSpace(content) != "" {
			return p, "content is only used for Terminal: " + label + "(…) matches nothing; write " + label + "()", nil
		}
		return p, "", nil
	}
	p.tokens, err = patternTokens(content)
	if err != nil {
		return p, "", err
	}
	p.readOnly = isSeededReadOnly(p.tokens)
	return p, "", nil
}

// invisibleWarning explains an entry holding a character that shows as a
// blank or not at all (U+00A0, U+205F, a zero-width space, a bidi
// control): the shell splits words on space and tab only, so such a
// character is part of a word, and "Terminal(rm\u00a0)" in deny does not
// hold back the rm its reader sees. The entry still counts.
func invisibleWarning(src string) string {
	for _, r := range src {
		if r != ' ' && r != '\t' && r != utf8.RuneError && !unicode.IsPrint(r) {
			return fmt.Sprintf("it holds %U, an invisible character the shell takes as part of a word: "+
				"the entry matches only commands that hold it too", r)
		}
	}
	return ""
}

// patternTokens tokenizes the content of a Terminal pattern with the shell
// rules commands are tokenized with (DESIGN §4.2).
func patternTokens(content string) ([]patternToken, error) {
	if strings.TrimSpace(content) == "" {
		return nil, errors.New("Terminal() needs a command: an empty pattern would match every command")
	}
	if err := shell.CheckCommandText(content); err != nil {
		return nil, err
	}
	f, err := shell.ParseShell(content)
	if err != nil {
		// errors.Unwrap would give back errParse alone and lose where and
		// why the content does not parse.
		return nil, fmt.Errorf("the command does not parse: %s", strings.TrimPrefix(err.Error(), shell.ErrParse.Error()+": "))
	}
	if len(f.Stmts) != 1 {
		return nil, errors.New("a pattern is one simple command, not a list")
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Background || st.Negated || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, errors.New("a pattern is one simple command: no operators, redirections or assignments")
	}
	toks := make([]patternToken, 0, len(call.Args))
	for _, w := range call.Args {
		bad := false
		syntax.Walk(w, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
				bad = true
			}
			return !bad
		})
		if bad {
			return nil, errors.New("a pattern cannot hold a command, process or arithmetic substitution")
		}
		if innerStar(w) {
			return nil, errors.New("a '*' matches only at the end of a token (\"test:*\", \"curl*\"); quote it to mean a literal '*'")
		}
		d := shell.DecodeWord(content, w)
		t := patternToken{text: d.Text}
		// A trailing unquoted '*' is a wildcard inside the token, never a
		// path glob: in a token with a '/' it stays literal (rm -rf /*).
		if d.StarSuffix && !strings.Contains(d.Text, "/") {
			t.text, t.wildcard = d.Text[:len(d.Text)-1], true
		}
		toks = append(toks, t)
	}
	return toks, nil
}

// innerStar reports whether a pattern word holds an unquoted '*' anywhere
// but at its very end.
func innerStar(w *syntax.Word) bool {
	for i, p := range w.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		v := lit.Value
		for j := 0; j < len(v); j++ {
			switch v[j] {
			case '\\':
				j++
			case '*':
				if i != len(w.Parts)-1 || j != len(v)-1 {
					return true
				}
			}
		}
	}
	return false
}

// listKeyProblems finds the top-level keys that would make a rule a reader
// sees in the file silently not count: a list written twice (JSON parsers
// disagree on which one wins; encoding/json keeps the last) and a list name
// in another case ("Deny"), which would otherwise be an ignored unknown key.
func listKeyProblems(data []byte, top map[string]json.RawMessage) []EntryError {
	var out []EntryError
	seen := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			key, _ := tok.(string)
			if seen[key]++; seen[key] == 2 && shell.ContainsString(listNames[:], key) {
				out = append(out, EntryError{Entry: key,
					Why: "the list appears more than once; JSON readers disagree on which one counts, so brabo uses none"})
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
		}
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, key := range listNames {
			if k != key && strings.EqualFold(k, key) {
				out = append(out, EntryError{Entry: k,
					Why: fmt.Sprintf("list names are lower case: %q is not read; write %q", k, key)})
			}
		}
	}
	return out
}

// jsonWhy turns a JSON decoding error into a sentence with a line and
// column.
func jsonWhy(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read, the offending one included: the
		// column is the one of that byte, or just past the end of the input.
		at := se.Offset
		if at > 0 && at <= int64(len(data)) && !strings.HasPrefix(se.Error(), "unexpected end of JSON input") {
			at--
		}
		line, col := lineCol(data, at)
		return fmt.Sprintf("not valid JSON at line %d, column %d: %v", line, col, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "must be a JSON object with the lists allow, deny and ask"
	}
	return "not valid JSON: " + err.Error()
}

func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	line, col := 1, 1
	for _, c := range data[:offset] {
		switch {
		case c == '\n':
			line, col = line+1, 1
		case c&0xC0 != 0x80: // count characters, not UTF-8 continuation bytes
			col++
		}
	}
	return line, col
}
