package executor

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sshRemote routes the ssh URL forms git knows to their host and port,
// and nothing else: a path, another scheme, a host that would be an
// option or a shell word.
func TestSSHRemoteForms(t *testing.T) {
	for raw, want := range map[string]string{
		"ssh://git@Example.com/org/repo.git": "example.com 22",
		"ssh://example.com:2222/repo":        "example.com 2222",
		"git+ssh://u@[::1]:2200/r":           "::1 2200",
		"ssh+git://10.0.0.1/r":               "10.0.0.1 22",
		"git@github.com:org/repo.git":        "github.com 22",
		"host.internal:repo":                 "host.internal 22",
		"user@[fe80:0:0:0:0:0:0:1]:repo":     "fe80::1 22",
		"[::1]:repo":                         "", // "::" names a remote helper: classifyRemote refuses it first
		"/srv/git/repo.git":                  "",
		"./a:b":                              "",
		"https://example.com/r":              "",
		"git://example.com/r":                "",
		"ssh://-oProxyCommand=x/r":           "",
		"-oProxyCommand=x:r":                 "",
		"ssh://example.com:0/r":              "",
		"ssh://exa$mple.com/r":               "",
		"ext::sh -c x":                       "",
		"ssh://example.com:99999/r":          "",
		"ssh://user@host'x/r":                "",
	} {
		tgt, ok := sshRemote(raw)
		got := ""
		if ok {
			got = tgt.host + " " + strconv.Itoa(tgt.port)
		}
		if got != want {
			t.Errorf("sshRemote(%q) = %q, want %q", raw, got, want)
		}
	}
}

// ssh looks a host up in known_hosts as the URL writes it (lowercased),
// whatever form brabo connects to.
func TestSSHRemoteKnownName(t *testing.T) {
	for raw, want := range map[string]string{
		"user@[fe80:0:0:0:0:0:0:1]:repo": "fe80:0:0:0:0:0:0:1",
		"ssh://Git.Example:2222/r":       "[git.example]:2222",
		"git@git.example:r":              "git.example",
	} {
		if tgt, ok := sshRemote(raw); !ok || tgt.known() != want {
			t.Errorf("sshRemote(%q).known() = %q, want %q", raw, tgt.known(), want)
		}
	}
}

// knownHostsFor keeps the lines that name the host (plain, on its port,
// wildcard, hashed, a CA) and no other, and none but revocations is no
// known host.
func TestKnownHostsForTheRemoteOnly(t *testing.T) {
	home := t.TempDir()
	salt := []byte("0123456789abcdefghij")
	m := hmac.New(sha1.New, salt)
	m.Write([]byte("[git.example]:2222"))
	hashed := "|1|" + base64.StdEncoding.EncodeToString(salt) + "|" + base64.StdEncoding.EncodeToString(m.Sum(nil))
	lines := []string{
		"git.example ssh-ed25519 AAAAport22",
		"[git.example]:2222 ssh-ed25519 AAAAplain",
		hashed + " ssh-ed25519 AAAAhashed",
		"*.example,!bad.example ssh-ed25519 AAAAwild",
		"@cert-authority [git.example]:* ssh-ed25519 AAAAca",
		"other.example ssh-ed25519 AAAAother",
		"# git.example a comment",
		"[git.example]:22222 ssh-ed25519 AAAAotherport",
	}
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	got := string(knownHostsFor(sshTarget{host: "git.example", name: "git.example", port: 2222}, home))
	for _, want := range []string{"AAAAplain", "AAAAhashed", "AAAAca"} {
		if !strings.Contains(got, want) {
			t.Errorf("the filtered known_hosts lacks the %s line:\n%s", want, got)
		}
	}
	for _, bad := range []string{"AAAAport22", "AAAAwild", "AAAAother", "comment", "AAAAotherport"} {
		if strings.Contains(got, bad) {
			t.Errorf("the filtered known_hosts holds the %s line:\n%s", bad, got)
		}
	}
	// On port 22 the name is the host's: its own line and the wildcard.
	got = string(knownHostsFor(sshTarget{host: "git.example", name: "git.example", port: 22}, home))
	if !strings.Contains(got, "AAAAport22") || !strings.Contains(got, "AAAAwild") || strings.Contains(got, "AAAAplain") {
		t.Errorf("the filtered known_hosts of port 22:\n%s", got)
	}
	if got := knownHostsFor(sshTarget{host: "bad.example", name: "bad.example", port: 22}, home); got != nil {
		t.Errorf("a host a negated pattern excludes: %q", got)
	}
	os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte("@revoked git.example ssh-ed25519 AAAArev\n"), 0o600)
	if got := knownHostsFor(sshTarget{host: "git.example", name: "git.example", port: 22}, home); got != nil {
		t.Errorf("a host with only a revocation is known: %q", got)
	}
}
