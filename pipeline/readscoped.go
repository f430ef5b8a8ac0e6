package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/brabo-dev/brabo"
)

// The file a write_file's card compares against is read here, and only
// here: inside the scope root, never through a symlink (not at the end of
// the path, not at any folder on the way), only a regular file with no
// other hard link, and at most maxPreviewFile bytes. A symlink planted at
// the path (Makefile → ~/.ssh/id_ed25519) then puts nothing of its
// target on a card, in the API, in a notification or on the page.

// maxPreviewFile is the largest file on disk a card diffs against: as
// large as the largest write (brabo.MaxWriteBytes), so that a write over
// any file it may replace is shown whole.
const maxPreviewFile = brabo.MaxWriteBytes

// errHidden is a file the card must not show, with the sentence it shows
// instead.
type errHidden struct{ why string }

func (e *errHidden) Error() string { return e.why }

func hidden(format string, a ...any) error { return &errHidden{why: fmt.Sprintf(format, a...)} }

// readScoped reads the file at rel (relative, clean, inside the root) of
// the scope root root. exists is false when nothing is there. A symlink
// on the way, a file that is not regular, one with other hard links, or
// one over max bytes is an *errHidden.
func readScoped(root, rel string, max int64) (data []byte, exists bool, err error) {
	if rel == "" || rel == "." || path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") || strings.ContainsRune(rel, 0) {
		return nil, false, hidden("the path is not inside the project folder")
	}
	// The root itself is trusted (validated when the project was made);
	// a symlink in it is followed, and nothing after it.
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, fmt.Errorf("opening the project folder: %w", err)
	}
	defer unix.Close(dir)
	fd, err := openBeneath(dir, rel)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, false, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return nil, true, hidden("the path goes through a symlink: nothing on disk is shown")
	case errors.Is(err, unix.ENOTDIR):
		return nil, false, hidden("a folder on the path is a file or a symlink: nothing on disk is shown")
	case err != nil:
		return nil, true, hidden("the file on disk cannot be read (%v)", err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(root, rel))
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, true, hidden("the file on disk cannot be read (%v)", err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, true, hidden("the path is not a regular file: nothing on disk is shown")
	case st.Nlink > 1:
		return nil, true, hidden("the file has other hard links: its content on disk is not shown")
	case st.Size > max:
		return nil, true, hidden("the file on disk is %s, over the %s a card diffs: its content is not shown", size(st.Size), size(max))
	}
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, true, hidden("the file on disk cannot be read (%v)", err)
	}
	if int64(len(data)) > max {
		return nil, true, hidden("the file on disk grew over the %s a card diffs: its content is not shown", size(max))
	}
	return data, true, nil
}

// openBeneath opens rel under the directory dir for reading, resolving no
// symlink on the way and never leaving dir: openat2 with
// RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH, or, where the kernel has no openat2,
// one openat per component with O_NOFOLLOW. It never blocks on a FIFO
// (O_NONBLOCK) and never gains a controlling terminal.
func openBeneath(dir int, rel string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	fd, err := unix.Openat2(dir, rel, &unix.OpenHow{Flags: flags,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS})
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
		return fd, err
	}
	return walkBeneath(dir, rel, flags)
}

// walkBeneath is openBeneath without openat2: every folder on the way is
// opened with O_NOFOLLOW|O_DIRECTORY (a symlink fails with ELOOP or
// ENOTDIR), the last element with O_NOFOLLOW.
func walkBeneath(dir int, rel string, flags int) (int, error) {
	els := strings.Split(rel, "/")
	cur := dir
	for i, el := range els {
		if el == "" || el == "." || el == ".." {
			if cur != dir {
				unix.Close(cur)
			}
			return -1, unix.EXDEV
		}
		var fd int
		var err error
		if i == len(els)-1 {
			fd, err = unix.Openat(cur, el, flags, 0)
		} else {
			fd, err = unix.Openat(cur, el, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if cur != dir {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

// size says a number of bytes the way a card does.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
