package ruleimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The two readers name the line of what they cannot read, and read what
// the agents' documentation writes.
func TestRuleFileReadersNameTheLine(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"starlark: an unclosed string", "prefix_rule(pattern = [\"git\n])", "line 1: a string runs past the end of the line"},
		{"starlark: a load", "load(\"x\")\nx = 1", "line 2: x is not called"},
		{"starlark: an expression", "prefix_rule(pattern = [\"a\"] + [\"b\"])", "is not read"},
	} {
		if _, err := parseStarlark(c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct{ name, src, want string }{
		{"toml: a key twice", "[[rule]]\ndecision = \"allow\"\ndecision = \"deny\"", "line 3: decision is set twice"},
		{"toml: a float", "[[rule]]\npriority = 1.5", "line 2"},
		{"toml: a multi-line string", "[[rule]]\ndenyMessage = \"\"\"x\"\"\"", "multi-line strings are not read"},
	} {
		if _, err := parseTOML(c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	calls, err := parseStarlark("# c\nprefix_rule(\n  pattern = [\"git\", [\"push\", 'fetch']],  # alt\n  decision = \"prompt\",\n)\n")
	if err != nil || len(calls) != 1 || calls[0].line != 2 || callText(calls[0]) != `prefix_rule(decision="prompt", pattern=["git", ["push", "fetch"]])` {
		t.Errorf("read %+v, %v", calls, err)
	}
	tables, err := parseTOML("[[rule]]\ntoolName = [\"write_file\", 'replace'] # both\ntoolAnnotations = { readOnlyHint = true }\npriority = 10\n")
	if err != nil || len(tables) != 1 || geminiText(tables[0]) != `[[rule]] priority = 10, toolAnnotations = map[readOnlyHint:true], toolName = ["write_file", "replace"]` {
		t.Errorf("read %+v, %v", tables, err)
	}
}

// FuzzRuleFiles: neither reader panics or loops on any input.
func FuzzRuleFiles(f *testing.F) {
	for _, s := range []string{"prefix_rule(pattern=[\"a\", [\"b\",\"c\"]], decision=\"allow\")",
		"[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"git\"]\n", "x = {a = [1, 'b']}", "'''", "\"\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		parseStarlark(src)
		parseTOML(src)
	})
}

// A Claude Code absolute or home path inside the project folder is the
// project-relative rule it is, so an allow inside the project is carried.
func TestClaudeAbsolutePathInsideTheProjectIsRelative(t *testing.T) {
	for _, c := range []struct{ rule, want string }{
		{"Edit(//p/shop/src/**)", "Edit(/src/**)"},
		{"Read(//p/shop/docs/)", "Read(/docs/)"},
		{"Read(//p/other/x)", "Read(//p/other/x)"},
		{"Read(//p/shop)", "Read(//p/shop)"},
		{"Read(//p/shopping/x)", "Read(//p/shopping/x)"},
		{"Bash(//p/shop/x)", "Bash(//p/shop/x)"},
	} {
		if got := claudeLocal(c.rule, "/p/shop"); got != c.want {
			t.Errorf("claudeLocal(%q) = %q, want %q", c.rule, got, c.want)
		}
	}
}

// A /path in a settings file that is not the project's (--from
// ~/.claude/settings.json) is relative to that file's root, not to the
// project: it is not carried over.
func TestClaudeSettingsRelativePathOutsideTheProjectIsNotCarried(t *testing.T) {
	dir, user := t.TempDir(), filepath.Join(t.TempDir(), "settings.json")
	os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(`{"permissions": {"deny": ["Read(/secrets/**)"]}}`), 0o644)
	os.WriteFile(user, []byte(`{"permissions": {"deny": ["Read(/secrets/**)", "Read(./x/**)"]}}`), 0o644)
	r, err := Claude(dir, []string{user})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 2 || r.Entries[0].Pattern != "ReadFile(secrets/**)" || len(r.NotCarried) != 1 ||
		!strings.Contains(r.NotCarried[0].Why, "relative to the root of the settings file") {
		t.Errorf("entries %+v, not carried %+v", r.Entries, r.NotCarried)
	}
}
