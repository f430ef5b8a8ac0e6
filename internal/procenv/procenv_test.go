package procenv_test

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/internal/procenv"
)

func TestFilterKeepsBuildVariablesAndDropsSecrets(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "HOME=/root", "LC_ALL=C", "OPENAI_API_KEY=sk-secret",
		"BRABO_DB=postgres://u:pw@db/x", "BRABO_TOKEN=brb_x", "DATABASE_URL=postgres://x", "BASH_ENV=/tmp/evil",
		"CDPATH=/etc", "GOPATH=/go", "CI_TOKEN=t", "EXTRA=1", "GIT_CONFIG_GLOBAL=/etc/gc"}
	got := procenv.Filter(environ, []string{" EXTRA ", "", "CDPATH"})
	want := []string{"PATH=/usr/bin", "HOME=/root", "LC_ALL=C", "GOPATH=/go", "EXTRA=1", "GIT_CONFIG_GLOBAL=/etc/gc"}
	if !slices.Equal(got, want) {
		t.Fatalf("Filter = %q, want %q", got, want)
	}
}

// A secret is dropped even when named, and CheckPass refuses naming it, or
// a variable holding one's value.
func TestSecretsNeverPass(t *testing.T) {
	environ := []string{"BRABO_DB=postgres://u:pw@db/x", "OPENAI_API_KEY=sk-1", "SHOP_DATABASE_URL=postgres://y",
		"PGPASSWORD=pw", "COPY=postgres://u:pw@db/x", "FINE=1"}
	pass := []string{"BRABO_DB", "OPENAI_API_KEY", "SHOP_DATABASE_URL", "PGPASSWORD", "FINE"}
	if got := procenv.Filter(environ, pass); !slices.Equal(got, []string{"FINE=1"}) {
		t.Fatalf("Filter with secrets named = %q, want FINE only", got)
	}
	for _, name := range pass[:4] {
		if err := procenv.CheckPass(environ, []string{"FINE", name}); !errors.Is(err, procenv.ErrSecretPass) || !strings.Contains(err.Error(), name) {
			t.Errorf("CheckPass %s: %v", name, err)
		}
	}
	if err := procenv.CheckPass(environ, []string{"COPY"}, "postgres://u:pw@db/x"); !errors.Is(err, procenv.ErrSecretPass) {
		t.Errorf("CheckPass of a copy of the database URL: %v", err)
	}
	if err := procenv.CheckPass(environ, []string{"FINE", "", "COPY"}, ""); err != nil {
		t.Errorf("CheckPass of ordinary names: %v", err)
	}
}

func TestWithGitConfigAppendsAfterExistingEntries(t *testing.T) {
	env := []string{"PATH=/usr/bin", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=op"}
	got := procenv.WithGitConfig(env, procenv.GitSafety...)
	want := []string{"PATH=/usr/bin", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=op",
		"GIT_CONFIG_KEY_1=safe.bareRepository", "GIT_CONFIG_VALUE_1=explicit",
		"GIT_CONFIG_KEY_2=core.fsmonitor", "GIT_CONFIG_VALUE_2=false", "GIT_CONFIG_COUNT=3"}
	if !slices.Equal(got, want) {
		t.Fatalf("WithGitConfig = %q\nwant %q", got, want)
	}
	// A count git would refuse is dropped with its entries, so the safety
	// entries apply instead of git stopping on "bogus count".
	got = procenv.WithGitConfig([]string{"GIT_CONFIG_COUNT=x", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"}, procenv.NoHooks)
	want = []string{"GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=" + os.DevNull, "GIT_CONFIG_COUNT=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("WithGitConfig over a bogus count = %q\nwant %q", got, want)
	}
}

// TestGitReadsTheChildConfig runs the real git with a Child environment
// whose base already holds a command-line entry: git sees both, and the
// safety entries win over the repository's own config.
func TestGitReadsTheChildConfig(t *testing.T) {
	dir := t.TempDir()
	base := procenv.Filter(os.Environ(), nil)
	base = append(base, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=operator")
	git := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(base, "init", "-q")
	git(base, "config", "core.fsmonitor", "/bin/false")
	env := procenv.Child(base, []string{"BRABO_ACTION_ID=act_1"}, procenv.NoHooks)
	for key, want := range map[string]string{"user.name": "operator", "core.fsmonitor": "false",
		"safe.bareRepository": "explicit", "core.hooksPath": os.DevNull} {
		if got := git(env, "config", "--get", key); got != want {
			t.Errorf("git config %s = %q, want %q", key, got, want)
		}
	}
}
