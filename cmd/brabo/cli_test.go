package main

// The command line's tables, read in the code; the conventions they give
// the real binary are checked in e2e/cli_test.go.

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestUsageListsEveryCommand: brabo help lists every command of the table
// with its summary, in the table's order (e2e's TestCLIHelp then checks
// each listed command's help on the binary).
func TestUsageListsEveryCommand(t *testing.T) {
	var b strings.Builder
	printUsage(&b)
	rest := b.String()
	for _, c := range commands {
		line := "\n  " + c.name + " "
		i := strings.Index(rest, line)
		if i < 0 {
			t.Fatalf("brabo help does not list %q after the commands before it:\n%s", c.name, b.String())
		}
		rest = rest[i+len(line):]
		if l, _, _ := strings.Cut(rest, "\n"); strings.TrimSpace(l) != c.summary {
			t.Errorf("brabo help: %q's summary is %q, want %q", c.name, strings.TrimSpace(l), c.summary)
		}
	}
}

// TestVersionOf: the version names the module version, the VCS revision
// and the toolchain, and says when there is no revision or no build
// information.
func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-05-01T10:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			"v1.2.3 (rev 0123456789abcdef, 2026-05-01T10:00:00Z) go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			"(devel) (rev abc, modified) go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20260501100000-0123456789ab"}},
			"v0.0.0-20260501100000-0123456789ab (no VCS revision: built outside a checkout, or with -buildvcs=false) go1.26.8"},
	} {
		if got := versionOf(tc.bi, true); got != tc.want {
			t.Errorf("versionOf: %q, want %q", got, tc.want)
		}
	}
	if got := versionOf(nil, false); !strings.Contains(got, "unknown") {
		t.Errorf("versionOf without build information: %q", got)
	}
}
