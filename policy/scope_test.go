package policy

// Path scope (DESIGN §5): the root's checks (lexical on every use, and on
// the real disk when a local project is created), the tokens compared
// against it, and the cd tracking along a line.

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/brabo-dev/brabo"
)

func TestCheckRoot(t *testing.T) {
	for _, c := range []struct {
		root string
		err  string // "" accepts
	}{
		{"/srv/projects/acme-1234abcd", ""},
		{"/home/alice/code/acme", ""},
		{"/Users/bob/src/acme", ""},
		{"/tmp/acme", ""}, // only /tmp itself is refused
		{"/var/tmp/acme", ""},
		{"/opt/projects/acme", ""},
		{"/work", ""},
		{"", "the project folder is empty"},
		{"relative/acme", `the project folder "relative/acme" is not an absolute path`},
		{"./acme", "is not an absolute path"},
		{"~/acme", "is not an absolute path"},
		{"/srv/../etc", `the project folder "/srv/../etc" holds ".."`},
		{"/srv/acme/..", `holds ".."`},
		{"/srv/acme/", `the project folder "/srv/acme/" is not a clean path (want "/srv/acme")`},
		{"/srv//acme", "is not a clean path"},
		{"/srv/./acme", "is not a clean path"},
		{"/", `the project folder "/" is a system directory`},
		{"/etc", "is a system directory"},
		{"/usr", "is a system directory"},
		{"/usr/local", "is a system directory"},
		{"/home", "is a system directory"},
		{"/root", "is a system directory"},
		{"/tmp", "is a system directory"},
		{"/var", "is a system directory"},
		{"/var/lib", "is a system directory"},
		{"/Users", "is a system directory"},
		{"/etc/acme", `the project folder "/etc/acme" is inside the system directory /etc`},
		{"/usr/local/src/acme", "is inside the system directory /usr"},
		{"/proc/1/cwd", "is inside the system directory /proc"},
		{"/dev/shm/x", "is inside the system directory /dev"},
		{"/home/alice", `the project folder "/home/alice" is a whole home directory`},
		{"/Users/bob", "is a whole home directory"},
	} {
		err := CheckRoot(c.root)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("CheckRoot(%q) = %v, want accepted", c.root, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("CheckRoot(%q) = %v, want an error holding %q", c.root, err, c.err)
		}
	}
}

// diskProbe looks at the real disk: an existing directory, and a real write
// (a temp file created and removed) to tell whether brabo can write in it.
func diskProbe(p string) (isDir, writable bool, err error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !fi.IsDir() {
		return false, false, nil
	}
	f, err := os.CreateTemp(p, ".brabo-write-probe-*")
	if err != nil {
		return true, false, nil
	}
	name := f.Name()
	f.Close()
	return true, true, os.Remove(name)
}

func TestValidateLocalRoot(t *testing.T) {
	base := t.TempDir()
	project := filepath.Join(base, "acme")
	brabo := filepath.Join(base, "brabo")
	for _, d := range []string{project, brabo, filepath.Join(brabo, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(base, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	own := []string{filepath.Join(brabo, "data"), "/opt/brabo/checkout/"}
	for _, c := range []struct {
		name string
		root string
		own  []string
		err  string
	}{
		{"an existing writable folder is accepted", project, own, ""},
		{"a relative path is refused", "acme", own, "is not an absolute path"},
		{"a path with .. is refused", project + "/../acme", own, `holds ".."`},
		{"a path that does not exist is refused", filepath.Join(base, "missing"), own, "does not exist or is not a directory"},
		{"a file is refused", file, own, "does not exist or is not a directory"},
		{"a system root is refused", "/", own, "is a system directory"},
		{"a folder inside a system tree is refused", "/usr/share", own, "inside the system directory /usr"},
		{"a folder holding brabo's own files is refused", brabo, own, "overlaps " + filepath.Join(brabo, "data")},
		{"a folder inside brabo's own files is refused", filepath.Join(brabo, "data", "projects"), own, "overlaps "},
		{"brabo's own folder itself is refused", filepath.Join(brabo, "data"), own, "overlaps "},
		{"brabo's own paths are compared cleaned", "/opt/brabo/checkout/x", own, "overlaps /opt/brabo/checkout"},
		{"a sibling of brabo's own files sharing a prefix is accepted", project, []string{project + "-brabo"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateLocalRoot(c.root, c.own, diskProbe)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("ValidateLocalRoot(%q) = %v, want accepted", c.root, err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("ValidateLocalRoot(%q) = %v, want an error holding %q", c.root, err, c.err)
			}
		})
	}
	t.Run("a folder brabo cannot write in is refused", func(t *testing.T) {
		ro := filepath.Join(base, "read-only")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(ro, 0o755)
		if os.Geteuid() == 0 {
			// root writes in a 0555 folder: run the check as nobody
			validateAsNobody(t, ro)
			return
		}
		if err := ValidateLocalRoot(ro, own, diskProbe); err == nil || !strings.Contains(err.Error(), "is not writable by brabo") {
			t.Fatalf("ValidateLocalRoot(read-only) = %v", err)
		}
	})
	t.Run("a folder the probe finds unwritable is refused", func(t *testing.T) {
		unwritable := func(string) (bool, bool, error) { return true, false, nil }
		if err := ValidateLocalRoot(project, own, unwritable); err == nil || !strings.Contains(err.Error(), "is not writable by brabo") {
			t.Fatalf("ValidateLocalRoot with an unwritable probe = %v", err)
		}
	})
	t.Run("a probe error is named", func(t *testing.T) {
		boom := func(string) (bool, bool, error) { return false, false, errors.New("permission denied") }
		if err := ValidateLocalRoot(project, own, boom); err == nil || !strings.Contains(err.Error(), "cannot be used: permission denied") {
			t.Fatalf("ValidateLocalRoot with a failing probe = %v", err)
		}
	})
	t.Run("the lexical checks come before the disk", func(t *testing.T) {
		called := false
		probe := func(string) (bool, bool, error) { called = true; return true, true, nil }
		if err := ValidateLocalRoot("/etc", nil, probe); err == nil || called {
			t.Fatalf("ValidateLocalRoot(/etc) = %v, probe called %v", err, called)
		}
	})
	t.Run("the probe leaves nothing behind", func(t *testing.T) {
		entries, err := os.ReadDir(project)
		if err != nil || len(entries) != 0 {
			t.Fatalf("the project folder holds %v after the probes (%v)", entries, err)
		}
	})
}

// scopeProbeDirVar names the folder TestValidateLocalRootAsChild checks
// when validateAsNobody runs this test binary as nobody.
const scopeProbeDirVar = "BRABO_TEST_SCOPE_PROBE_DIR"

// validateAsNobody runs ValidateLocalRoot on dir with the real disk probe
// in a copy of this test binary started as nobody (uid 65534), which
// cannot write in a 0555 folder as root can, and fails t unless the
// folder is refused as not writable.
func validateAsNobody(t *testing.T, dir string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "policy.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// nobody must reach the binary and the folder: open their ancestors
	for _, p := range []string{filepath.Dir(bin), filepath.Dir(dir)} {
		for ; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(bin, "-test.run=^TestValidateLocalRootAsChild$", "-test.v")
	cmd.Env = append(os.Environ(), scopeProbeDirVar+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "refused: ") {
		t.Fatalf("ValidateLocalRoot as nobody: %v\n%s", err, out)
	}
}

// TestValidateLocalRootAsChild is validateAsNobody's child: with
// BRABO_TEST_SCOPE_PROBE_DIR set it checks that folder with the real disk
// probe and passes only when it is refused as not writable. Without the
// variable it has nothing to check.
func TestValidateLocalRootAsChild(t *testing.T) {
	dir := os.Getenv(scopeProbeDirVar)
	if dir == "" {
		return
	}
	if os.Geteuid() == 0 {
		t.Fatal("the child runs as root")
	}
	err := ValidateLocalRoot(dir, nil, diskProbe)
	if err == nil || !strings.Contains(err.Error(), "is not writable by brabo") {
		t.Fatalf("ValidateLocalRoot(%q) as uid %d = %v, want not writable", dir, os.Geteuid(), err)
	}
	t.Logf("refused: %v", err)
}

// The tokens DESIGN §5 checks: absolute paths, "..", "~", $HOME/${HOME},
// and the value of --opt=/abs; and the ones it leaves alone.
func TestScopeTokens(t *testing.T) {
	allow := []string{"Terminal(cat)", "Terminal(ls)", "Terminal(grep)", "Terminal(cp)", "Terminal(echo)", "Terminal(gcc)"}
	in := func(name, cmd string) row {
		return row{name: "inside: " + name, allow: allow, cmd: cmd, want: A, reason: "permissions.json allow: ", segs: "allow"}
	}
	out := func(name, cmd, why string) row {
		return row{name: "outside: " + name, allow: allow, cmd: cmd, want: RA, reason: "scope: " + why, segs: "allow"}
	}
	runRows(t, []row{
		in("an absolute path under the root", "cat <root>/src/app/x.ts"),
		in("the root itself", "ls <root>"),
		in("the root with trailing slashes", "ls <root>///"),
		in("the root with a . element", "ls <root>/./src"),
		in("an absolute path with .. that stays inside", "cat <root>/src/../lib/x"),
		in("a relative path", "cat src/x.ts"),
		in("a relative path with .. that stays inside", "cat src/../lib/x"),
		in("a flag that looks like nothing", "grep -rn -m 4 TODO ."),
		in("a --opt=value that is no path", "grep --color=always x src"),
		in("a --opt=/abs under the root", "grep --include=<root>/src x ."),
		in("a -I/abs under the root", "cat -I<root>/src x"),
		in("/dev/null as an argument", "cp x /dev/null"),
		in("//dev//null is /dev/null", "cat //dev//null"),
		in("a home-like word that is not one", "echo home/~x HOME"),
		out("an absolute path elsewhere", "cat /etc/passwd", "outside the project folder: /etc/passwd"),
		out("the parent of the root", "ls <root>/..", "outside the project folder: <root>/.."),
		out("<root>/../.. resolved", "ls <root>/../..", "outside the project folder: <root>/../.."),
		out("a sibling sharing the root's prefix", "cat <root>x/y", "outside the project folder: <root>x/y"),
		out("a relative path that climbs out", "cat ../x", "outside the project folder: ../x"),
		out("a relative path that climbs out after going in", "cat src/../../x", "outside the project folder: src/../../x"),
		out("~", "ls ~", "the home directory: ~"),
		out("~/x", "cat ~/.ssh/id_rsa", "the home directory: ~/.ssh/id_rsa"),
		out("~user", "ls ~root", "the home directory: ~root"),
		out("$HOME", "ls $HOME", "the home directory: $HOME"),
		out("${HOME}", "ls ${HOME}", "the home directory: ${HOME}"),
		out("$HOME/x in quotes", `cat "$HOME/.aws/credentials"`, "the home directory: $HOME/.aws/credentials"),
		out("${HOME}/x", "cat ${HOME}/x", "the home directory: ${HOME}/x"),
		out("--opt=/abs", "grep --file=/etc/shadow x", "outside the project folder: /etc/shadow"),
		out("--opt=../x", "grep --file=../x y", "outside the project folder: ../x"),
		out("--opt=~/x", "grep --file=~/x y", "the home directory: ~/x"),
		out("--opt=/abs of a program the table does not know", "gcc --sysroot=/usr x", "outside the project folder: --sysroot=/usr"),
		out("-I/abs", "gcc -I/usr/include x", "outside the project folder: -I/usr/include"),
		out("a redirection target", "echo x > /tmp/out", "outside the project folder: /tmp/out"),
		out("an input redirection", "cat < ../secret", "outside the project folder: ../secret"),
		out("an assignment's value", "LANG=/etc/x cat y", "outside the project folder: /etc/x"),
		out("an absolute root //", "ls //", "outside the project folder: //"),
		out("/dev/sda", "cat /dev/sda", "outside the project folder: /dev/sda"),
		out("/dev/tcp", "echo x > /dev/tcp/1.2.3.4/80", "outside the project folder: /dev/tcp/1.2.3.4/80"),
		{name: "outside: a path in a nested program", allow: allow, cmd: "echo $(cat /etc/hostname)", want: RA,
			reason: "scope: outside the project folder: /etc/hostname", segs: "allow allow"},
		in("$PWD/x is where the segment runs", "cat $PWD/src/x"),
		in("${PWD}/x in quotes", `cat "${PWD}/src/x"`),
		out("$PWD/../.. climbs out of the folder", "cat $PWD/../../etc/passwd", "outside the project folder: $PWD/../../etc/passwd"),
		{name: "outside: $(pwd)/.. climbs out of the folder", allow: append(allow, "Terminal(pwd)"), cmd: "cat $(pwd)/../x",
			want: RA, reason: "scope: outside the project folder: $(pwd)/../x", segs: "allow allow"},
		out("--opt=$PWD/..", "grep --file=$PWD/../x y", "outside the project folder: $PWD/../x"),
		out("$OLDPWD", "cat $OLDPWD/x", "a path the line computes cannot be checked: $OLDPWD/x"),
		{name: "outside: ${PWD%/*} is an operator, which makes the path opaque", allow: allow, cmd: "cat ${PWD%/*}/x",
			want: RA, reason: "default: no rule approves it", segs: "opaque"},
		{name: "outside: a wrapped program's path", allow: append(allow, "Terminal(timeout)"), cmd: "timeout 5 cat /etc/x",
			want: RA, reason: "scope: outside the project folder: /etc/x", segs: "allow allow"},
		{name: "outside is require_approval, never deny, even with the floor", allow: allow, container: true,
			cmd: "cat /etc/passwd", want: RA, reason: "scope: outside the project folder: /etc/passwd", segs: "allow"},
	})
}

// A cd moves the directory the later segments' relative tokens resolve
// against, lexically, along the line; a cd that may have failed leaves the
// line in either place.
func TestScopeCdTracking(t *testing.T) {
	allow := []string{"Terminal(cat)", "Terminal(ls)", "Terminal(true)"}
	cdIn := "permissions.json allow: Terminal(cat); scope: cd inside the project folder"
	runRows(t, []row{
		{name: "cd src && cat ../x is inside", allow: allow, cmd: "cd src && cat ../x", want: A, reason: cdIn, segs: "cd allow"},
		{name: "cd src && cat ../../x is outside", allow: allow, cmd: "cd src && cat ../../x", want: RA,
			reason: "scope: outside the project folder: ../../x", segs: "cd allow"},
		{name: "cd src/app && cat ../../x is inside", allow: allow, cmd: "cd src/app && cat ../../x", want: A, reason: cdIn,
			segs: "cd allow"},
		{name: "cd nonexistent/deep; cat ../../x is not inside: the cd may have failed", allow: allow,
			cmd: "cd nonexistent/deep; cat ../../x", want: RA, reason: "scope: outside the project folder: ../../x",
			segs: "cd allow"},
		{name: "cd nonexistent/deep && cat ../../x is inside: cat runs only if cd succeeded", allow: allow,
			cmd: "cd nonexistent/deep && cat ../../x", want: A, reason: cdIn, segs: "cd allow"},
		{name: "cd src || cat ../x: cat runs when the cd failed", allow: allow, cmd: "cd src || cat ../x", want: RA,
			reason: "scope: outside the project folder: ../x", segs: "cd allow"},
		{name: "cd src & cat ../x: a background cd moves nothing", allow: allow, cmd: "cd src & cat ../x", want: RA,
			reason: "scope: outside the project folder: ../x", segs: "cd allow"},
		{name: "cd src | cat ../x: a piped cd moves nothing", allow: allow, cmd: "cd src | cat ../x", want: RA,
			reason: "scope: outside the project folder: ../x", segs: "cd allow"},
		{name: "(cd src); cat ../x: a subshell's cd moves nothing", allow: allow, cmd: "(cd src); cat ../x", want: RA,
			reason: "scope: outside the project folder: ../x", segs: "cd allow"},
		{name: "$(cd src); cat ../x: a substitution's cd moves nothing", allow: allow, cmd: "x=$(cd src); cat ../x",
			auto: false, want: RA, reason: "compound: the segment", segs: "cd none allow"},
		{name: "{ cd src && cat ../x; } is inside", allow: allow, cmd: "{ cd src && cat ../x; }", want: A, reason: cdIn,
			segs: "cd allow"},
		// Imprecise on the safe side: the condition's statements are taken
		// as possibly failed, so the then-branch is checked from both places.
		{name: "if cd src; then cat ../x; fi is checked from both places", allow: allow, cmd: "if cd src; then cat ../x; fi",
			want: RA, reason: "scope: outside the project folder: ../x", segs: "cd allow"},
		{name: "if cd src; then cat x; fi is inside from both places", allow: allow, cmd: "if cd src; then cat x; fi",
			want: A, reason: cdIn, segs: "cd allow"},
		{name: "after if cd src; then …; fi the line may be in either place", allow: allow,
			cmd: "if cd src; then true; fi; cat ../x", want: RA, reason: "scope: outside the project folder: ../x",
			segs: "cd allow allow"},
		{name: "cd src/app && cd .. && cat ../x is inside", allow: allow, cmd: "cd src/app && cd .. && cat ../x", want: A,
			reason: cdIn, segs: "cd cd allow"},
		{name: "cd src; cd .. is not an in-scope cd: from the root it climbs out", allow: allow, cmd: "cd src; cd ..",
			want: RA, reason: `compound: the segment "cd .." has no rule`, segs: "cd none"},
		{name: "cd to an absolute path inside, then ..", allow: allow, cmd: "cd <root>/lib/core && cat ../x", want: A,
			reason: cdIn, segs: "cd allow"},
		{name: "cd -P and -L are options, not the target", allow: allow, cmd: "cd -P src && cat ../x", want: A,
			reason: cdIn, segs: "cd allow"},
		{name: "cd with two targets is not one the line shows", allow: allow, cmd: "cd src lib && cat x", want: RA,
			reason: `compound: the segment "cd src lib" has no rule`, segs: "none allow"},
		{name: "a relative cwd is where the line starts", allow: allow, cwd: "src/app", cmd: "cat ../../x", want: A,
			reason: "permissions.json allow: Terminal(cat)", segs: "allow"},
		{name: "a relative cwd, climbing out", allow: allow, cwd: "src", cmd: "cat ../../x", want: RA,
			reason: "scope: outside the project folder: ../../x", segs: "allow"},
		{name: "an absolute cwd inside the root", allow: allow, cwd: "<root>/lib/core", cmd: "cat ../../x", want: A,
			reason: "permissions.json allow: Terminal(cat)", segs: "allow"},
		{name: "a cwd outside the root", allow: allow, cwd: "/", cmd: "ls", want: RA, reason: "scope: runs in /", segs: "allow"},
		{name: "a cd to an expansion leaves the line somewhere unknown", container: true, cmd: "cd $DIR; cat x",
			want: RA, reason: "scope: cd goes somewhere the line does not show", segs: "none none"},
		{name: "after a cd to an expansion, .. is relative to the unknown", container: true, cmd: "cd \"$(mktemp -d)\" && cat ../x",
			want: RA, reason: "scope: cd goes somewhere the line does not show", segs: "none none none"},
		{name: "$PWD follows the cd: cd src && cat $PWD/../x is inside", allow: allow, cmd: "cd src && cat $PWD/../x",
			want: A, reason: cdIn, segs: "cd allow"},
		{name: "$PWD follows the cd: cd src && cat $PWD/../../x is outside", allow: allow, cmd: "cd src && cat $PWD/../../x",
			want: RA, reason: "scope: outside the project folder: $PWD/../../x", segs: "cd allow"},
		{name: "$OLDPWD after a cd is the folder it left, which the scope does not follow", allow: allow,
			cmd: "cd src && cat $OLDPWD/../x", want: RA, reason: "scope: a path the line computes cannot be checked: $OLDPWD/../x",
			segs: "cd allow"},
		{name: "auto mode frees the tracking too", auto: true, allow: allow, cmd: "cd src && cat ../../../x", want: A,
			reason: cdIn, segs: "cd allow"},
	})
}

// The decision names the scope root by its mode and relative id, never by
// its absolute path (DESIGN §5).
func TestScopeRootInDecision(t *testing.T) {
	root := newProject(t)
	for _, mode := range []brabo.ExecutionMode{brabo.ModeContainer, brabo.ModeRunner, brabo.ModeLocal} {
		d := Decide(Input{Type: brabo.Terminal, Command: "cat /etc/x", Role: brabo.Developer,
			Scope: Scope{Root: root, Mode: mode, ID: "acme-1234abcd"}})
		if d.ScopeRoot != (brabo.ScopeRoot{Mode: mode, ID: "acme-1234abcd"}) {
			t.Errorf("scopeRoot %+v", d.ScopeRoot)
		}
		if strings.Contains(d.Reason, root) {
			t.Errorf("the reason holds the root: %s", d.Reason)
		}
	}
}
