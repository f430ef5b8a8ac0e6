package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Claude Code's Bash(…) is read as Terminal(…) (DESIGN §9), and brabo
// check says so, once per entry, beside the decision it made with it.
func TestCheckSaysBashIsReadAsTerminal(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "permissions.json"), []byte(`{"allow": ["Bash(pnpm test:*)"], "deny": ["Bash(curl)"]}`), 0o644)
	r := check(t, dir, exitAutoApprove, "--", "pnpm test --watch")
	for _, want := range []string{
		"auto_approve: permissions.json allow: Bash(pnpm test:*)",
		`warning: ` + filepath.Join(dir, "permissions.json") + `: allow[0] "Bash(pnpm test:*)": read as Terminal(pnpm test:*)`,
		`deny[0] "Bash(curl)": read as Terminal(curl)`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("brabo check does not say %q:\n%s", want, r)
		}
	}
	r = check(t, dir, exitDeny, "--", "curl -s https://example.com")
	if !strings.Contains(r.stdout, "deny: permissions.json deny: Bash(curl)") {
		t.Errorf("a Bash deny does not deny:\n%s", r)
	}
	r = check(t, dir, exitAutoApprove, "--json", "--", "pnpm test")
	if !strings.Contains(r.stdout, `read as Terminal(pnpm test:*)`) {
		t.Errorf("--json leaves the note out:\n%s", r)
	}
}
