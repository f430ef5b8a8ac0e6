package main

// The unit tests of brabo install that read its code, not its binary (the
// binary's are in e2e/install_test.go).

import (
	"flag"
	"slices"
	"testing"
)

// oldProjectSwitch tells the release before's on/off --project from the
// new --project P the way flag.Parse reads the line: a value follows
// unless nothing or another flag does, and another flag's value is that
// flag's.
func TestOldProjectSwitch(t *testing.T) {
	fl := flag.NewFlagSet("install", flag.ContinueOnError)
	fl.String("project", "", "")
	fl.String("name", "", "")
	fl.Bool("user", false, "")
	for _, c := range []struct {
		in   []string
		out  []string
		old  bool
		name string
	}{
		{[]string{"--project"}, nil, true, "alone"},
		{[]string{"-project"}, nil, true, "one dash"},
		{[]string{"--project", "--server", "x"}, []string{"--server", "x"}, true, "before another flag"},
		{[]string{"--user", "--project"}, []string{"--user"}, true, "last"},
		{[]string{"--project", "shop"}, []string{"--project", "shop"}, false, "a slug"},
		{[]string{"--project", "prj_1"}, []string{"--project", "prj_1"}, false, "an id"},
		{[]string{"--project=shop"}, []string{"--project=shop"}, false, "with ="},
		{[]string{"--name", "--project"}, []string{"--name", "--project"}, false, "another flag's value"},
		{[]string{"--user", "--project", "shop"}, []string{"--user", "--project", "shop"}, false, "after a switch"},
		{[]string{"--", "--project"}, []string{"--", "--project"}, false, "after --"},
		{[]string{"extra", "--project"}, []string{"extra", "--project"}, false, "after a word flag.Parse stops at"},
	} {
		out, old := oldProjectSwitch(fl, c.in)
		if old != c.old || !slices.Equal(out, c.out) {
			t.Errorf("%s: oldProjectSwitch(%q) = %q, %v; want %q, %v", c.name, c.in, out, old, c.out, c.old)
		}
	}
}
