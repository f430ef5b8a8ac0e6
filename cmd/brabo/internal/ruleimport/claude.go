package ruleimport

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
			projectFile := filepath.Dir(f) == filepath.Join(dir, ".claude")
			for i, rule := range rules {
				from := fmt.Sprintf("%s permissions.%s[%d]", name, list, i)
				if !projectFile && settingsRelative(rule) {
					r.skip(from, rule, "a /path is relative to the root of the settings file it is in, and this one is not the project's: write it //absolute or ./relative")
					continue
				}
				if local := claudeLocal(rule, dir); local != rule {
					entries, skipped := len(r.Entries), len(r.NotCarried)
					r.add(list, local, from)
					if len(r.Entries) > entries {
						r.Entries[len(r.Entries)-1].Rule = rule
					}
					if len(r.NotCarried) > skipped {
						r.NotCarried[len(r.NotCarried)-1].Rule = rule
					}
					continue
				}
				r.add(list, rule, from)
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

// claudeLocal rewrites a Claude Code path rule whose absolute (//…) or home
// (~/…) path lies inside the project folder dir as the project-relative
// rule it is (Read(//home/a/shop/src/**) in /home/a/shop is Read(/src/**)),
// so that an allow inside the project is not dropped as outside.
func claudeLocal(rule, dir string) string {
	open := strings.IndexByte(rule, '(')
	if open <= 0 || !strings.HasSuffix(rule, ")") {
		return rule
	}
	switch rule[:open] {
	case "Read", "Edit", "Write":
	default:
		return rule
	}
	content := rule[open+1 : len(rule)-1]
	var abs string
	switch {
	case strings.HasPrefix(content, "//"):
		abs = "/" + strings.TrimLeft(content, "/")
	case strings.HasPrefix(content, "~/"):
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return rule
		}
		abs = filepath.Join(home, content[2:])
		if strings.HasSuffix(content, "/") {
			abs += "/"
		}
	default:
		return rule
	}
	rest, ok := strings.CutPrefix(abs, filepath.Clean(dir)+"/")
	if !ok || rest == "" {
		return rule
	}
	return rule[:open] + "(/" + rest + ")"
}

// settingsRelative reports whether a path rule's path is Claude Code's
// /path, relative to the root of its settings file.
func settingsRelative(rule string) bool {
	for _, label := range []string{"Read(/", "Edit(/", "Write(/"} {
		if strings.HasPrefix(rule, label) && !strings.HasPrefix(rule, label+"/") {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
