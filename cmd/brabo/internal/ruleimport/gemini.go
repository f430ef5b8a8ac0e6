package ruleimport

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// GeminiPoliciesDir is where a project's Gemini CLI policies are, relative
// to the project folder.
const GeminiPoliciesDir = ".gemini/policies"

// geminiLists maps a rule's decision to a permissions.json list.
var geminiLists = map[string]string{"allow": "allow", "deny": "deny", "ask_user": "ask"}

// geminiTools maps Gemini CLI's file tools to brabo's labels.
var geminiTools = map[string]string{"read_file": "ReadFile()", "read_many_files": "ReadFile()",
	"write_file": "WriteFile()", "replace": "WriteFile()"}

// geminiKnown are the rule keys brabo reads.
var geminiKnown = map[string]bool{"toolName": true, "mcpName": true, "commandPrefix": true, "decision": true,
	"priority": true, "denyMessage": true, "allowRedirection": true}

// Gemini reads the [[rule]] tables of the project's .gemini/policies/*.toml
// and of the extra files named.
func Gemini(dir string, extra []string) (*Result, error) {
	r := &Result{Agent: "gemini"}
	files, _ := filepath.Glob(filepath.Join(dir, GeminiPoliciesDir, "*.toml"))
	sort.Strings(files)
	priorities := map[string]map[int]bool{} // decision → priorities seen
	for _, f := range append(files, extra...) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		name := rel(dir, f)
		r.Files = append(r.Files, name)
		tables, err := parseTOML(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		for _, t := range tables {
			if t.name != "rule" {
				continue
			}
			from := fmt.Sprintf("%s:%d", name, t.line)
			n := r.geminiRule(t, from)
			if n > 0 {
				d, _ := t.values["decision"].(string)
				p, _ := t.values["priority"].(int)
				if priorities[d] == nil {
					priorities[d] = map[int]bool{}
				}
				priorities[d][p] = true
			}
		}
	}
	if len(priorities) > 1 {
		r.Notes = append(r.Notes, "Gemini CLI lets the rule of highest priority win; in brabo a deny wins over an ask and an ask over an allow, whatever the priority, so a carried rule is never read more loosely")
	}
	return r, nil
}

// geminiRule carries one [[rule]] over and returns how many entries it
// became.
func (r *Result) geminiRule(t tomlTable, from string) int {
	text := geminiText(t)
	d, _ := t.values["decision"].(string)
	list, ok := geminiLists[d]
	if !ok {
		r.skip(from, text, fmt.Sprintf("decision %q is none of allow, deny, ask_user", d))
		return 0
	}
	var extra []string
	for k := range t.values {
		if !geminiKnown[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		switch k {
		case "modes", "subagent", "toolAnnotations", "interactive":
			if list == "allow" {
				r.skip(from, text, k+" narrows the rule to some calls; brabo has no such condition, and an allow for every call would let more through")
				return 0
			}
			// A deny or an ask for every call is stricter: carried.
		case "argsPattern", "commandRegex":
			r.skip(from, text, k+" is a regular expression over the call's JSON; brabo's patterns are not regular expressions")
			return 0
		default:
			r.skip(from, text, "the key "+k+" is not read")
			return 0
		}
	}
	tools := strings2(t.values["toolName"])
	prefixes := strings2(t.values["commandPrefix"])
	server, _ := t.values["mcpName"].(string)
	var patterns []string
	switch {
	case server != "":
		if len(tools) == 0 {
			tools = []string{"*"}
		}
		for _, tool := range tools {
			patterns = append(patterns, "mcp__"+server+"__"+tool)
		}
	case len(prefixes) > 0:
		for _, tool := range tools {
			if tool != "run_shell_command" {
				r.skip(from, text, "commandPrefix is for run_shell_command, not "+tool)
				return 0
			}
		}
		for _, p := range prefixes {
			p = strings.TrimSpace(p)
			if p == "" {
				r.skip(from, text, "an empty commandPrefix names every command; brabo has no pattern for every command")
				return 0
			}
			patterns = append(patterns, "Bash("+p+")")
		}
	case len(tools) == 0:
		r.skip(from, text, "the rule names no tool")
		return 0
	default:
		for _, tool := range tools {
			switch {
			case geminiTools[tool] != "":
				patterns = append(patterns, geminiTools[tool])
			case strings.HasPrefix(tool, "mcp_") && strings.Count(tool, "_") >= 2 && !strings.Contains(tool, "*"):
				s, name, _ := strings.Cut(strings.TrimPrefix(tool, "mcp_"), "_")
				patterns = append(patterns, "mcp__"+s+"__"+name)
			case tool == "run_shell_command":
				r.skip(from, text, "run_shell_command with no commandPrefix names every command; brabo has no pattern for every command")
				return 0
			default:
				r.skip(from, text, "the tool "+tool+" has no brabo counterpart")
				return 0
			}
		}
	}
	n := 0
	for _, p := range patterns {
		entries, skipped := len(r.Entries), len(r.NotCarried)
		r.add(list, p, from)
		if len(r.Entries) > entries {
			r.Entries[len(r.Entries)-1].Rule = text
			n++
		}
		if len(r.NotCarried) > skipped {
			r.NotCarried[len(r.NotCarried)-1].Rule = text
		}
	}
	return n
}

// strings2 reads a string or an array of strings.
func strings2(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// geminiText is a rule on one line, its keys sorted.
func geminiText(t tomlTable) string {
	keys := make([]string, 0, len(t.values))
	for k := range t.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s = %v", k, tomlShow(t.values[k]))
	}
	return "[[rule]] " + strings.Join(parts, ", ")
}

func tomlShow(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = tomlShow(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}
