package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestTheSandboxUserHasAName: inside, the command's uid is UserName, its
// home is Home, its group is named, and the host's other accounts are not
// listed; git commits with the identity it finds there, without a word
// about an unknown user.
func TestTheSandboxUserHasAName(t *testing.T) {
	sb := need(t)
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatal(err)
		}
		t.Skip("git is missing (BRABO_REQUIRE_SANDBOX makes this a failure):", err)
	}
	out := run(t, sb, Spec{Root: project(t)},
		"echo whoami=$(whoami); echo idun=$(id -un); echo idgn=$(id -gn); echo tilde=~; "+
			"echo pwhome=$(getent passwd $(id -u) | cut -d: -f6); echo rootline=$(grep -c '^root:' /etc/passwd); "+
			"echo lines=$(wc -l < /etc/passwd); "+
			"cd /tmp && git init -q r 2>&1 && cd r && git -c user.email=a@example.com commit -q --allow-empty -m x 2>&1; "+
			"echo commit=$?; echo author=$(git log -1 --format=%an 2>&1)")
	want := map[string]string{"whoami": UserName, "idun": UserName, "idgn": UserName, "tilde": Home, "pwhome": Home,
		"rootline": "0", "lines": "2", "commit": "0", "author": "brabo sandbox"}
	expect(t, out, want)
	for _, bad := range []string{"cannot find name", "unknown user", "no such user", "passwd file"} {
		if strings.Contains(out, bad) {
			t.Errorf("the sandbox still lacks the user's entry (%q):\n%s", bad, out)
		}
	}
}

// TestIdentityListsOnlyTheSandboxUser: the generated files name the
// command's uid and gid and the overflow owner, nothing else, and never a
// second entry for a uid that is itself the overflow owner.
func TestIdentityListsOnlyTheSandboxUser(t *testing.T) {
	p, g := identity(DefaultUID, DefaultUID)
	u := strconv.Itoa(DefaultUID)
	if string(p) != UserName+":x:"+u+":"+u+":brabo sandbox:"+Home+":/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" {
		t.Errorf("passwd:\n%s", p)
	}
	if string(g) != UserName+":x:"+u+":\nnogroup:x:65534:\n" {
		t.Errorf("group:\n%s", g)
	}
	p, g = identity(65534, 65534)
	if strings.Count(string(p), ":65534:") != 1 || strings.Count(string(g), ":65534:") != 1 || !strings.HasPrefix(string(p), UserName+":") {
		t.Errorf("an overflow uid is listed twice or not as the sandbox user:\n%s%s", p, g)
	}
}
