package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWalkBeneath: the fallback of kernels without openat2 refuses a
// symlink at the end and on the way, as openat2 does.
func TestWalkBeneath(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "key"), []byte("secret"), 0o600)
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(root, "a", "b", "ok.txt"), []byte("fine"), 0o644)
	os.Symlink(filepath.Join(outside, "key"), filepath.Join(root, "a", "link"))
	os.Symlink(outside, filepath.Join(root, "dirlink"))
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dir)
	const flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	for _, c := range []struct {
		rel  string
		want error
	}{
		{"a/b/ok.txt", nil},
		{"a/link", unix.ELOOP},
		{"dirlink/key", unix.ENOTDIR},
		{"a/../a/b/ok.txt", unix.EXDEV},
		{"a/missing", unix.ENOENT},
	} {
		fd, err := walkBeneath(dir, c.rel, flags)
		if fd >= 0 {
			unix.Close(fd)
		}
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.rel, err, c.want)
		}
	}
}
