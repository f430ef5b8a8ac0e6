package main

import (
	"slices"
	"testing"
)

func TestCommandEnvKeepsBuildVariablesAndDropsSecrets(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "HOME=/root", "LC_ALL=C", "OPENAI_API_KEY=sk-secret",
		"BRABO_DB=postgres://u:pw@db/x", "BASH_ENV=/tmp/evil", "CDPATH=/etc", "GOPATH=/go", "CI_TOKEN=t", "EXTRA=1"}
	got := commandEnv(environ, []string{" EXTRA ", "", "CDPATH"})
	want := []string{"PATH=/usr/bin", "HOME=/root", "LC_ALL=C", "GOPATH=/go", "EXTRA=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("commandEnv = %q, want %q", got, want)
	}
}
