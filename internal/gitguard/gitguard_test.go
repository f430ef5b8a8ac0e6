package gitguard_test

import (
	"errors"
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
