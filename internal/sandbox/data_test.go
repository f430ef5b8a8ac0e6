package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDataReachesOnlyItsCommand: a Spec.Data file (a push's credential)
// is readable inside at its path, read-only, mode 0400, through Start and
// through the root helper; its content is on no argument of the command
// line, and a folder bound writable (a remote repository) is the
// command's own to write, its owner on disk kept.
func TestDataReachesOnlyItsCommand(t *testing.T) {
	sb := need(t)
	root := project(t)
	remote := t.TempDir()
	os.Chmod(remote, 0o755)
	const secret = "password=s3cret-data-42"
	spec := Spec{Root: root, Data: []Data{{Dst: "/run/brabo/git-credential", Content: []byte(secret + "\n")}},
		Binds: []Bind{{Src: remote}}, Env: []string{"PATH=/usr/bin:/bin"}}
	p, err := sb.Prepare(spec, []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(p.Args, " "), "s3cret") || strings.Contains(strings.Join(p.Env, " "), "s3cret") {
		t.Errorf("the data is on the command line or in the environment: %q", p.Args)
	}
	p.close()
	script := "cat /run/brabo/git-credential; stat -c mode=%a /run/brabo/git-credential; " +
		"(echo x >> /run/brabo/git-credential) 2>/dev/null && echo wrote-data; echo w > " + filepath.Join(remote, "made") + " && echo wrote-remote"
	for name, out := range map[string]string{"Start": run(t, sb, spec, script), "helper": runHelper(t, sb, spec, script)} {
		if !strings.Contains(out, secret+"\n") || !strings.Contains(out, "mode=400\n") || strings.Contains(out, "wrote-data") ||
			!strings.Contains(out, "wrote-remote") {
			t.Errorf("%s: %s", name, out)
		}
	}
	var st, rst os.FileInfo
	if st, err = os.Stat(filepath.Join(remote, "made")); err != nil {
		t.Fatal(err)
	}
	rst, _ = os.Stat(remote)
	if owner(st) != owner(rst) {
		t.Errorf("the file made in the writable bind belongs to %d, its folder to %d", owner(st), owner(rst))
	}
}

// owner is the uid a file belongs to on disk.
func owner(fi os.FileInfo) uint32 {
	return fi.Sys().(*syscall.Stat_t).Uid
}
