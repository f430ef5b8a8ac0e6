package policy

import (
	"encoding/json"
	"fmt"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"sort"
	"strings"
)

// Mistakes in a permissions file's keys are loud (DESIGN §9): a key that is
// not a list name is a warning, kept by writers; a key that looks like a
// misspelt list name, or Claude Code's shape (lists under "permissions"),
// makes the file invalid, since every entry a reader sees in it would
// silently count for nothing.

// keyProblems returns the errors and the warnings the top-level keys of a
// file draw.
func keyProblems(top map[string]json.RawMessage) (problems []EntryError, warnings []string) {
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if shell.ContainsString(listNames[:], k) {
			continue
		}
		if k == "permissions" && holdsLists(top[k]) {
			problems = append(problems, EntryError{Entry: k,
				Why: `Claude Code's shape ({"permissions": {"allow": […]}}) is not read here: write "allow", "deny" and "ask" at the top level of the file`})
			continue
		}
		if name, ok := misspeltList(k); ok {
			if !strings.EqualFold(k, name) { // a case variant is listKeyProblems'
				problems = append(problems, EntryError{Entry: k,
					Why: fmt.Sprintf("%q looks like a misspelt %q: its rules would count for nothing; fix the key", k, name)})
			}
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%q is not a list brabo reads (allow, deny, ask): it holds no rules", k))
	}
	return problems, warnings
}

// misspeltList returns the list name a key is close to: at edit distance 1
// from allow, deny or ask in any case, or 2 when both the key and the list
// name have five characters or more ("allwo"). Short unrelated keys such
// as env, desc, deps, all, any, key, tasks and flow stay warnings.
func misspeltList(key string) (string, bool) {
	k := strings.ToLower(key)
	for _, name := range listNames {
		limit := 1
		if len(k) >= 5 && len(name) >= 5 {
			limit = 2
		}
		if editDistance(k, name) <= limit {
			return name, true
		}
	}
	return "", false
}

// holdsLists reports whether a value is an object with an allow, deny or
// ask key, or is a list itself.
func holdsLists(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, n := range listNames {
			if _, ok := obj[n]; ok {
				return true
			}
		}
		return false
	}
	var list []json.RawMessage
	return json.Unmarshal(raw, &list) == nil
}

// editDistance is the Levenshtein distance between two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
