package executor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/confine/confinetest"
)

// TestConfinedTerminalCommand: with Confine set, a terminal command writes
// in its scope root, its private TMPDIR and its project's cache folder, and
// nowhere else: not a sibling folder, not the hidden data folder (which it
// cannot read either), not the home folder. Its TMPDIR is gone afterwards.
func TestConfinedTerminalCommand(t *testing.T) {
	confinetest.Require(t)
	t.Parallel()
	base := realDir(t)
	root, sibling, data, home := filepath.Join(base, "proj"), filepath.Join(base, "sibling"), filepath.Join(base, "data"), os.Getenv("HOME")
	for _, d := range []string{root, sibling, data} {
		os.MkdirAll(d, 0o755)
	}
	writeFile(t, filepath.Join(data, "brabo.db"), "the store")
	e := executor.New(executor.Options{Confine: &executor.Confinement{Launcher: os.Args[0], Hide: []string{data},
		CacheRoot: filepath.Join(data, "caches")}})
	try := func(what, cmd string) string {
		return "echo " + what + "=$(" + cmd + " >/dev/null 2>&1 && echo ok || echo denied); "
	}
	req := terminal(root, "", try("inside", "echo x > made")+
		try("tmp", `echo x > "$TMPDIR/t"`)+
		try("cache", `mkdir -p "$GOCACHE" && echo x > "$GOCACHE/c"`)+
		try("sibling", "echo x > "+sibling+"/made")+
		try("data", "echo x > "+data+"/made")+
		try("readdata", "cat "+data+"/brabo.db")+
		try("home", "echo x >> "+home+"/.gitconfig")+
		`echo "tmpdir=$TMPDIR"`)
	req.Project = &brabo.Project{WorkspaceDir: "proj-12345678"}
	res := mustSucceed(t, e, req)
	for k, v := range map[string]string{"inside": "ok", "tmp": "ok", "cache": "ok", "sibling": "denied",
		"data": "denied", "readdata": "denied", "home": "denied"} {
		if !strings.Contains(res.Output, k+"="+v+"\n") {
			t.Errorf("%s: want %s; output:\n%s", k, v, res.Output)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "caches", "proj-12345678")); err != nil {
		t.Errorf("the project's cache folder: %v", err)
	}
	for _, p := range []string{filepath.Join(sibling, "made"), filepath.Join(data, "made"), filepath.Join(home, ".gitconfig")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	_, tmp, _ := strings.Cut(res.Output, "tmpdir=")
	tmp = strings.TrimSpace(tmp)
	if !strings.HasPrefix(tmp, os.TempDir()) {
		t.Errorf("TMPDIR %q is not a private folder under %s", tmp, os.TempDir())
	}
	if _, err := os.Stat(tmp); err == nil {
		t.Errorf("the private TMPDIR %s is left after the action", tmp)
	}
}
