package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/brabo-dev/brabo"
)

// MaxPermissionsBytes bounds the permissions file brabo reads.
const MaxPermissionsBytes = brabo.MaxPermissionsBytes

func permissionsPath(root string) string { return filepath.Join(root, "permissions.json") }

// readPermissions returns the file's content; a missing file is an empty one.
func readPermissions(path string) ([]byte, error) {
	data, _, err := readPermissionsInfo(path)
	return data, err
}

// readPermissionsInfo returns the file's content and what fstat said of
// the file it read (nil for a missing file).
func readPermissionsInfo(path string) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, errors.New("permissions.json is not a regular file")
	}
	if info.Size() > MaxPermissionsBytes {
		return nil, nil, fmt.Errorf("permissions.json is %d bytes, over the %d-byte limit", info.Size(), MaxPermissionsBytes)
	}
	b := make([]byte, info.Size())
	_, err = f.ReadAt(b, 0)
	if err != nil && info.Size() > 0 {
		return nil, nil, err
	}
	return b, info, nil
}

// ReadPermissions returns the project's permissions.json as it is on disk.
func (s *Service) ReadPermissions(root string) ([]byte, error) {
	return readPermissions(permissionsPath(root))
}

func (s *Service) lockFile(path string) func() {
	v, _ := s.fileLocks.LoadOrStore(path, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// writeFileAtomic writes through a temporary file in the same folder and a
// rename: readers see the old file or the new one, never half of one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".permissions-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
