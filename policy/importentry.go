package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/brabo-dev/brabo/policy/internal/shell"
)

// ListNames are the lists of a permissions file, in the order AppendLists
// takes them: allow, deny, ask.
var ListNames = listNames

// ImportEntry returns the permissions.json entry one rule of list ("allow",
// "deny" or "ask") becomes: brabo's own spelling where it says the same
// (Read(./src/**) is ReadFile(src/**)), else the rule as written, which
// permissions.json reads as Claude Code's spelling (Read(.env) in deny,
// at any depth). The error says why the rule cannot be carried over: brabo
// has no meaning for it, or, in allow, it names a path outside the project
// folder.
func ImportEntry(list, src string) (string, error) {
	k := -1
	for i, n := range listNames {
		if n == list {
			k = i
		}
	}
	if k < 0 {
		return "", fmt.Errorf("unknown list %q", list)
	}
	p, warning, err := parseEntry(src, listKind(k))
	switch {
	case err != nil:
		return "", err
	case warning != "":
		return "", errors.New(warning)
	case p.path.outside() && listKind(k) == listAllow:
		return "", errOutsideAllow
	case p.synonym == "" || strings.Contains(p.synonym, " of "):
		return src, nil
	}
	q, w, err := parsePattern(p.synonym)
	if err != nil || w != "" || q.normalKey() != p.normalKey() {
		return src, nil
	}
	return p.synonym, nil
}

// AppendLists returns the content of a permissions file with entries added
// to its lists (add is indexed as ListNames), and the entries that were
// missing (only those are added). Every other key, known or not, is kept;
// an empty input is an empty file. The result is validated: AppendLists
// never returns a file that Parse refuses.
func AppendLists(data []byte, add [3][]string) (out []byte, added [3][]string, err error) {
	top := map[string]json.RawMessage{}
	var order []string
	if len(bytes.TrimSpace(data)) > 0 {
		if order, err = keyOrder(data); err != nil {
			return nil, added, fmt.Errorf("permissions.json: %w", err)
		}
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, added, fmt.Errorf("permissions.json: %w", err)
		}
	}
	n := 0
	for k, key := range listNames {
		var list []string
		if raw, ok := top[key]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, added, fmt.Errorf("permissions.json: %s must be a list of strings: %w", key, err)
			}
		}
		for _, p := range add[k] {
			if !shell.ContainsString(list, p) && !shell.ContainsString(added[k], p) {
				added[k] = append(added[k], p)
			}
		}
		if len(added[k]) == 0 {
			continue
		}
		n += len(added[k])
		raw, err := json.Marshal(append(list, added[k]...))
		if err != nil {
			return nil, added, err
		}
		if _, ok := top[key]; !ok {
			order = append(order, key)
		}
		top[key] = raw
	}
	if n == 0 {
		return data, added, nil
	}
	if out, err = writeTopLevel(order, top); err != nil {
		return nil, added, err
	}
	return out, added, nil
}

// writeTopLevel writes a permissions file's top-level keys in order, each
// value indented as people write them, and parses the result, so that
// what is returned is a file brabo reads.
func writeTopLevel(order []string, top map[string]json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range order {
		key, _ := json.Marshal(k)
		var v bytes.Buffer
		if err := json.Indent(&v, top[k], "  ", "  "); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "  %s: %s", key, v.Bytes())
		if i < len(order)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	if _, err := Parse("permissions.json", b.Bytes()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
