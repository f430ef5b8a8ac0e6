package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportNeverStartsACodexAnAgentWrote: brabo import codex runs codex
// execpolicy check on the user's behalf, outside the sandbox; a codex the
// agent planted where PATH finds it first (the project's node_modules/.bin,
// a temp folder, a relative entry) is refused and never started.
func TestImportNeverStartsACodexAnAgentWrote(t *testing.T) {
	dir := importProject(t, "codex")
	marker := filepath.Join(t.TempDir(), "planted-codex-ran")
	planted := "#!/bin/sh\necho ran > " + marker + "\necho '{\"decision\":\"allow\"}'\n"
	for _, c := range []struct{ name, binDir, pathEntry string }{
		{"the project's node_modules/.bin", filepath.Join(dir, "node_modules", ".bin"), filepath.Join(dir, "node_modules", ".bin")},
		{"a temp folder", filepath.Join(os.TempDir(), "brabo-planted-codex-"+filepath.Base(dir)), ""},
		{"a relative entry", filepath.Join(dir, "bin"), "bin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.MkdirAll(c.binDir, 0o755)
			defer os.RemoveAll(filepath.Join(c.binDir)) // the temp folder's; the others go with dir
			if err := os.WriteFile(filepath.Join(c.binDir, "codex"), []byte(planted), 0o755); err != nil {
				t.Fatal(err)
			}
			entry := c.pathEntry
			if entry == "" {
				entry = c.binDir
			}
			cmd := exec.Command(braboBin, "import", "codex")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+entry+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if _, statErr := os.Stat(marker); statErr == nil {
				t.Fatalf("brabo import started the planted codex:\n%s", out)
			}
			if err == nil {
				t.Fatalf("brabo import codex checked its rules with no codex it may start:\n%s", out)
			}
			if !strings.Contains(string(out), "--codex") {
				t.Errorf("the refusal does not say how to name a codex:\n%s", out)
			}
		})
	}
}
