// Package ruleimport reads the permission rules another coding agent
// already has in a project — Claude Code's settings, Codex's .rules files,
// Gemini CLI's policy TOML — and says which permissions.json entries they
// become and what cannot be carried over (brabo import, docs/import.md).
// It writes nothing but the merged permissions.json, and only when asked.
package ruleimport

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/brabo-dev/brabo/policy"
)

// Entry is one permissions.json entry a rule became.
type Entry struct {
	List    string `json:"list"`    // allow, deny or ask
	Pattern string `json:"pattern"` // as permissions.json holds it
	From    string `json:"from"`    // file:line, or file
	Rule    string `json:"rule"`    // the rule as the agent wrote it
}

// Skipped is one rule that is not carried over, and why.
type Skipped struct {
	From string `json:"from"`
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

// Result is what an import found.
type Result struct {
	Agent      string    `json:"agent"`
	Files      []string  `json:"files"`
	Entries    []Entry   `json:"entries"`
	NotCarried []Skipped `json:"notCarried"`
	// Notes say where brabo reads a carried rule differently, always the
	// stricter way (Gemini's priorities: in brabo a deny always wins).
	Notes []string `json:"notes,omitempty"`
}

// add carries one rule over, or records why not.
func (r *Result) add(list, rule, from string) {
	pat, err := policy.ImportEntry(list, rule)
	if err != nil {
		r.skip(from, rule, err.Error())
		return
	}
	for _, e := range r.Entries {
		if e.List == list && e.Pattern == pat && e.From == from {
			return // write_file and replace are both WriteFile()
		}
	}
	r.Entries = append(r.Entries, Entry{List: list, Pattern: pat, From: from, Rule: rule})
}

func (r *Result) skip(from, rule, why string) {
	r.NotCarried = append(r.NotCarried, Skipped{From: from, Rule: rule, Why: why})
}

// Lists returns the entries by list, indexed as policy.ListNames.
func (r *Result) Lists() [3][]string {
	var out [3][]string
	for _, e := range r.Entries {
		for k, n := range policy.ListNames {
			if n == e.List {
				out[k] = append(out[k], e.Pattern)
			}
		}
	}
	return out
}

// Write merges the entries into dir's permissions.json (a missing file is
// an empty one), atomically: a temporary file in the folder renamed over
// it. It returns the entries that were not there yet.
func (r *Result) Write(dir string) (added [3][]string, err error) {
	path := filepath.Join(dir, "permissions.json")
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return added, err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	out, added, err := policy.AppendLists(data, r.Lists())
	if err != nil {
		return added, err
	}
	if len(added[0])+len(added[1])+len(added[2]) == 0 {
		return added, nil
	}
	tmp, err := os.CreateTemp(dir, ".permissions.json.import-*")
	if err != nil {
		return added, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return added, err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return added, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return added, err
	}
	if err := tmp.Close(); err != nil {
		return added, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return added, fmt.Errorf("permissions.json: %w", err)
	}
	return added, nil
}

// rel names a file for Result.From: relative to dir when under it.
func rel(dir, file string) string {
	if r, err := filepath.Rel(dir, file); err == nil && filepath.IsLocal(r) {
		return r
	}
	return file
}
