package gitguard_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/internal/gitguard"
)

// TestConfigParserRefusesWhatItCannotReadExactly: lines git reads in ways
// a loose parser might not are refused rather than guessed.
func TestConfigParserRefusesWhatItCannotReadExactly(t *testing.T) {
	for _, c := range []string{
		"[core] fsmonitor = x\n",             // a key on the header's line
		"[user]\n\tname = a \\\n",            // a continued value
		"[user]\n\tname = \"a\\qb\"\n",       // an unknown escape
		"fsmonitor = x\n",                    // a key outside a section
		"[core\n",                            // a broken header
		"[Filter \"x\"]\n\tClean = y\n",      // case does not hide a key
		"[includeIf \"gitdir:/\"]\npath=x\n", // includes are refused
		"[remote \"o\"]\n\turl = ext::sh -c x\n",
	} {
		if err := gitguard.CheckConfigData("config", []byte(c)); err == nil {
			t.Errorf("accepted %q", c)
		}
	}
	ok := "# c\n[core]\n\trepositoryformatversion = 0\n\tbare = false ; c\n[remote \"origin\"]\n\turl = /tmp/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[user]\n\tname = \"Ana \\\"A\\\" B\"\n"
	if err := gitguard.CheckConfigData("config", []byte(ok)); err != nil {
		t.Errorf("refused a plain config: %v", err)
	}
}

// TestConfigErrorNamesTheKey: the refusal names the key as git compares
// it, with its file and line.
func TestConfigErrorNamesTheKey(t *testing.T) {
	err := gitguard.CheckConfigData("cfg", []byte("[user]\n\tname = a\n[Core]\n\tSSHCommand = ./x\n"))
	var ce *gitguard.ConfigError
	if !errors.As(err, &ce) || ce.Key != "core.sshcommand" || ce.Line != 4 || ce.File != "cfg" {
		t.Fatalf("%v", err)
	}
}

// TestLocalValueIsWhatGitConfigPrints: user.name and user.email read as
// data are what `git config --local --get` prints, for configs that set
// them once, twice, quoted, in another case, in a subsection, or not.
func TestLocalValueIsWhatGitConfigPrints(t *testing.T) {
	for _, cfg := range []string{
		"[core]\n\tbare = false\n",
		"[user]\n\tname = Ana\n\temail = ana@x\n",
		"[User]\n\tName = first\n[user]\n\tNAME = \"Last  One\" ; c\n",
		"[user \"x\"]\n\tname = sub\n[user]\n\temail\n",
	} {
		dir := t.TempDir()
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := gitguard.Check(dir, dir)
		if err != nil {
			t.Fatalf("%q: %v", cfg, err)
		}
		for _, key := range []string{"name", "email"} {
			cmd := exec.Command("git", "config", "--local", "--get", "user."+key)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			want, _ := cmd.Output()
			got, err := l.LocalValue("user", key)
			if err != nil || got != strings.TrimSuffix(string(want), "\n") {
				t.Errorf("%q user.%s: got %q (%v), git prints %q", cfg, key, got, err, want)
			}
		}
	}
}
