package agenthook

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// TestAgentWords: the hook carries each agent's own description of a call
// (Claude Code's and Gemini CLI's description, Codex's justification) and
// cuts a long one at a character, under the server's limit, so that a
// long description never costs the call.
func TestAgentWords(t *testing.T) {
	long := strings.Repeat("é", brabo.MaxDescription) // two bytes each
	cases := []struct {
		agent string
		input any
		want  string
	}{
		{"claude", map[string]any{"command": "ls", "description": "  List the files  "}, "List the files"},
		{"gemini", map[string]any{"command": "ls", "description": "List the files"}, "List the files"},
		{"codex", map[string]any{"command": []string{"ls"}, "justification": "Do you want to list the files?"}, "Do you want to list the files?"},
		{"claude", map[string]any{"command": "ls"}, ""},
		{"claude", map[string]any{"command": "ls", "description": 42}, ""},
		{"codex", "*** Begin Patch", ""},
	}
	for _, c := range cases {
		b, _ := json.Marshal(c.input)
		if got := agentWords(c.agent, b); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.agent, b, got, c.want)
		}
	}
	b, _ := json.Marshal(map[string]any{"description": long})
	got := agentWords("claude", b)
	if len(got) > brabo.MaxDescription || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("a long description: %d bytes, valid %v, %q…", len(got), utf8.ValidString(got), got[len(got)-10:])
	}
}
