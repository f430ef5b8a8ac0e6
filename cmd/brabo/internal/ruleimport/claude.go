package ruleimport

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// ClaudeFiles are the project's Claude Code settings brabo import reads,
// relative to the project folder.
var ClaudeFiles = []string{".claude/settings.json", ".claude/settings.local.json"}

// Claude reads the permissions block (allow, deny, ask) of the project's
// Claude Code settings, and of the extra files named.
func Claude(dir string, extra []string) (*Result, error) {
	r := &Result{Agent: "claude"}
	var files []string
	for _, f := range ClaudeFiles {
		files = append(files, filepath.Join(dir, f))
	}
	for _, f := range append(files, extra...) {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) && !contains(extra, f) {
			continue
		}
		if err != nil {
			return nil, err
		}
		name := rel(dir, f)
		r.Files = append(r.Files, name)
		var settings struct {
			Permissions map[string]json.RawMessage `json:"permissions"`
		}
		if err := json.Unmarshal(data, &settings); err != nil {
			return nil, fmt.Errorf("%s: not valid JSON: %v", name, err)
		}
		keys := make([]string, 0, len(settings.Permissions))
		for k := range settings.Permissions {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, list := range []string{"allow", "deny", "ask"} {
			raw, ok := settings.Permissions[list]
			if !ok {
				continue
			}
			var rules []string
			if err := json.Unmarshal(raw, &rules); err != nil {
				return nil, fmt.Errorf("%s: permissions.%s must be a list of strings", name, list)
			}
			for i, rule := range rules {
				r.add(list, rule, fmt.Sprintf("%s permissions.%s[%d]", name, list, i))
			}
		}
		for _, k := range keys {
			switch k {
			case "allow", "deny", "ask":
			default:
				r.skip(name+" permissions."+k, string(settings.Permissions[k]),
					"brabo has no counterpart: its decisions are the three lists, and the project folder is its scope")
			}
		}
	}
	return r, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
