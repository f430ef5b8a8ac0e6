package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Help alone exits 0 with the usage; anything else the hook cannot read
// is a deny (exit 2), as the agents' hook protocol wants.
func TestHelpAndDeny(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "brabo-hook")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-h").Output()
	if err != nil || !strings.Contains(string(out), "brabo-hook claude|codex|gemini <event>") {
		t.Fatalf("brabo-hook -h: %v, %q", err, out)
	}
	var exit *exec.ExitError
	for _, args := range [][]string{{}, {"-h", "claude"}, {"claude"}} {
		if err := exec.Command(bin, args...).Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("brabo-hook %v: %v, want exit 2 (deny)", args, err)
		}
	}
}
