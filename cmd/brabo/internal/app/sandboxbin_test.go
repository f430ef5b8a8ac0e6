package app

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestSandboxBinaryIsTheSlimOneOfTheSameBuild: brabo starts the
// brabo-sandbox beside it when it is of the same build (here the same
// binary, this test's, under both names), and passes over one that is not
// executable, not a Go program, or of another version or revision: a
// brabo-sandbox left from another version of brabo never runs a sandbox.
func TestSandboxBinaryIsTheSlimOneOfTheSameBuild(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "brabo")
	copyFile(t, os.Args[0], self, 0o755)
	if path, why := pickSandboxBinary(self); path != self || why != "" {
		t.Errorf("alone: %s (%s)", path, why)
	}
	other := filepath.Join(dir, slimSandbox)
	copyFile(t, os.Args[0], other, 0o755)
	if path, why := pickSandboxBinary(self); path != other || why != "" {
		t.Fatalf("beside a brabo-sandbox of the same build: %s (%s)", path, why)
	}
	copyFile(t, os.Args[0], other, 0o644)
	if path, why := pickSandboxBinary(self); path != self || !strings.Contains(why, "not an executable") {
		t.Errorf("beside a brabo-sandbox that is not executable: %s (%s)", path, why)
	}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, sh, other, 0o755)
	if path, why := pickSandboxBinary(self); path != self || !strings.Contains(why, "reading the build") {
		t.Errorf("beside a brabo-sandbox that is no Go program: %s (%s)", path, why)
	}
	base := debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/brabo-dev/brabo", Version: "v1.2.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}
	for name, change := range map[string]func(*debug.BuildInfo){
		"version": func(b *debug.BuildInfo) { b.Main.Version = "v1.1.0" },
		"revision": func(b *debug.BuildInfo) {
			b.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: "abd"}, {Key: "vcs.modified", Value: "false"}}
		},
		"modified": func(b *debug.BuildInfo) {
			b.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}
		},
		"go": func(b *debug.BuildInfo) { b.GoVersion = "go1.26.7" },
	} {
		o := base
		change(&o)
		if buildKey(&o) == buildKey(&base) {
			t.Errorf("two builds of another %s look the same: %s", name, buildKey(&o))
		}
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dst)
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}
