package executor_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
)

func writeReq(root, path, content string) brabo.ExecRequest {
	return request(root, brabo.WriteFile, brabo.Payload{Path: path, Content: content})
}

// names lists a directory's entries, failing the test on an error.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFileCreatesTheFileAndItsParents(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	res := mustSucceed(t, e, writeReq(root, "src/pkg/new.go", "package pkg\n"))
	if got := readFile(t, filepath.Join(root, "src", "pkg", "new.go")); got != "package pkg\n" {
		t.Errorf("content = %q", got)
	}
	if res.Detail["path"] != "src/pkg/new.go" || res.Detail["bytes"] != "12" {
		t.Errorf("Detail = %v", res.Detail)
	}
	fi, err := os.Stat(filepath.Join(root, "src", "pkg", "new.go"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode = %v, %v; want 0644", fi.Mode(), err)
	}

	// An absolute path inside the root is the same file; "./" and "a/./b"
	// are cleaned.
	mustSucceed(t, e, writeReq(root, filepath.Join(root, "abs.txt"), "abs"))
	res = mustSucceed(t, e, writeReq(root, "./src/./x.txt", ""))
	if readFile(t, filepath.Join(root, "abs.txt")) != "abs" || res.Detail["path"] != "src/x.txt" || res.Detail["bytes"] != "0" {
		t.Errorf("abs/clean paths: %v", res.Detail)
	}
	if got, want := names(t, root), []string{"abs.txt", "src"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("root holds %v, want %v (no temporary files)", got, want)
	}
}

func TestWriteFileReplacesAtomicallyAndKeepsTheMode(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	script := filepath.Join(root, "run.sh")
	writeFile(t, script, "old\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	// A hard link still names the old inode after an atomic replace: the
	// file was renamed over, never rewritten in place.
	if err := os.Link(script, filepath.Join(root, "hardlink")); err != nil {
		t.Fatal(err)
	}
	mustSucceed(t, e, writeReq(root, "run.sh", "#!/bin/sh\necho new\n"))
	if got := readFile(t, script); got != "#!/bin/sh\necho new\n" {
		t.Errorf("content = %q", got)
	}
	if got := readFile(t, filepath.Join(root, "hardlink")); got != "old\n" {
		t.Errorf("the old inode was written in place: %q", got)
	}
	if fi, _ := os.Stat(script); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want 0755 kept", fi.Mode().Perm())
	}
	if got := names(t, root); strings.Join(got, ",") != "hardlink,run.sh" {
		t.Errorf("temporary files left: %v", got)
	}
}

func TestWriteFileConcurrentWritersLeaveOneWholeContent(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	contents := []string{strings.Repeat("a", 1<<16), strings.Repeat("b", 1<<16), strings.Repeat("c", 1<<16)}
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(c string) {
			defer wg.Done()
			mustSucceed(t, e, writeReq(root, "f", c))
		}(contents[i%3])
	}
	wg.Wait()
	got := readFile(t, filepath.Join(root, "f"))
	if got != contents[0] && got != contents[1] && got != contents[2] {
		t.Errorf("content is a mix of writers (%d bytes)", len(got))
	}
	if n := names(t, root); len(n) != 1 {
		t.Errorf("temporary files left: %v", n)
	}
}

func TestWriteFileOutsideTheRootIsRefused(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	base := realDir(t)
	root := filepath.Join(base, "project")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../evil", "sub/../../evil", "sub/../x", "..", filepath.Join(base, "evil"),
		"/etc/brabo-test-evil", root + "-sibling/evil", ".git/hooks/pre-commit", "sub/.GIT/config"} {
		se := mustRefuse[*executor.ScopeError](t, e, writeReq(root, p, "x"))
		if se.Field != "path" || se.Path != p {
			t.Errorf("%q: %v", p, se)
		}
	}
	for _, p := range []string{"", ".", root, "sub", "a\x00b"} {
		mustRefuse[*executor.PayloadError](t, e, writeReq(root, p, "x"))
	}
	if got := names(t, base); strings.Join(got, ",") != "project" {
		t.Errorf("something was written outside the root: %v", got)
	}
	if got := names(t, root); strings.Join(got, ",") != "sub" {
		t.Errorf("a refused write left something: %v", got)
	}
}

func TestWriteFileThroughASymlinkPointingOutsideIsRefused(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	base := realDir(t)
	root := filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	// A dangling link whose target would be created outside.
	if err := os.Symlink(filepath.Join(outside, "notyet"), filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"escape/f", "escape/new/dir/f"} {
		se := mustRefuse[*executor.ScopeError](t, e, writeReq(root, p, "x"))
		if !strings.Contains(se.Reason, "symlink") {
			t.Errorf("%q: reason %q does not name the symlink", p, se.Reason)
		}
	}
	se := mustRefuse[*executor.ScopeError](t, e, writeReq(root, "dangling/f", "x"))
	if !strings.Contains(se.Reason, "dangling symlink") {
		t.Errorf("dangling: reason %q", se.Reason)
	}
	if got := names(t, outside); len(got) != 0 {
		t.Errorf("written outside through a symlink: %v", got)
	}

	// A symlink that stays inside is followed.
	if err := os.MkdirAll(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(root, "inside")); err != nil {
		t.Fatal(err)
	}
	mustSucceed(t, e, writeReq(root, "inside/f", "ok"))
	if readFile(t, filepath.Join(root, "real", "f")) != "ok" {
		t.Errorf("a write through an inside symlink did not land in its target")
	}
}

// A symlink at the target itself is replaced by the file: the write never
// goes through it to the file it names.
func TestWriteFileReplacesASymlinkAtTheTarget(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	base := realDir(t)
	root := filepath.Join(base, "project")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(base, "victim")
	writeFile(t, victim, "untouched")
	if err := os.Symlink(victim, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	mustSucceed(t, e, writeReq(root, "link", "new"))
	if got := readFile(t, victim); got != "untouched" {
		t.Errorf("written through the symlink: victim = %q", got)
	}
	fi, err := os.Lstat(filepath.Join(root, "link"))
	if err != nil || !fi.Mode().IsRegular() || readFile(t, filepath.Join(root, "link")) != "new" {
		t.Errorf("link was not replaced by a regular file: %v, %v", fi, err)
	}
}

func TestWriteFileOntoADirectoryFailsCleanly(t *testing.T) {
	t.Parallel()
	e := executor.New(executor.Options{})
	root := realDir(t)
	if err := os.MkdirAll(filepath.Join(root, "d", "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustRefuse[*executor.PayloadError](t, e, writeReq(root, "d/inner", "x"))
	if got := names(t, filepath.Join(root, "d")); strings.Join(got, ",") != "inner" {
		t.Errorf("temporary files left: %v", got)
	}
}
