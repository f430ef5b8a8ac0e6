package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/brabo-dev/brabo/policy"
)

// MaxPermissionsBytes bounds the permissions file brabo reads.
const MaxPermissionsBytes = 4 << 20

func permissionsPath(root string) string { return filepath.Join(root, "permissions.json") }

// readPermissions returns the file's content; a missing file is an empty one.
func readPermissions(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("permissions.json is not a regular file")
	}
	if info.Size() > MaxPermissionsBytes {
		return nil, fmt.Errorf("permissions.json is %d bytes, over the %d-byte limit", info.Size(), MaxPermissionsBytes)
	}
	b := make([]byte, info.Size())
	_, err = f.ReadAt(b, 0)
	if err != nil && info.Size() > 0 {
		return nil, err
	}
	return b, nil
}

// loadRules compiles the project's permissions.json. A file that cannot be
// read or parsed yields invalid rules: Decide then asks a human for
// everything, naming the error. It never fails open.
func (s *Service) loadRules(root string) *policy.Rules {
	path := permissionsPath(root)
	data, err := readPermissions(path)
	if err != nil {
		s.log().Warn("permissions.json unreadable", "err", err)
		why := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Op + ": " + pe.Err.Error() // the reason never names the absolute path
		}
		return policy.Unreadable("permissions.json", why)
	}
	// The file is read on every decision (it is the truth, and may change
	// under brabo's feet); compiling it again is skipped when its bytes
	// are the ones compiled last time.
	if c, ok := s.rulesCache.Load(path); ok && bytes.Equal(c.(*compiledRules).data, data) {
		return c.(*compiledRules).rules
	}
	rules, _ := policy.Parse("permissions.json", data)
	s.rulesCache.Store(path, &compiledRules{data: data, rules: rules})
	return rules
}

type compiledRules struct {
	data  []byte
	rules *policy.Rules
}

// ReadPermissions returns the project's permissions.json as it is on disk
// and its validation error, if any.
func (s *Service) ReadPermissions(root string) ([]byte, error) {
	return readPermissions(permissionsPath(root))
}

// WritePermissions validates content and replaces the project's
// permissions.json atomically; invalid content writes nothing.
func (s *Service) WritePermissions(root string, content []byte) error {
	if len(content) > MaxPermissionsBytes {
		return fmt.Errorf("permissions.json over %d bytes", MaxPermissionsBytes)
	}
	if _, err := policy.Parse("permissions.json", content); err != nil {
		return err
	}
	path := permissionsPath(root)
	unlock := s.lockFile(path)
	defer unlock()
	s.own.note(path, content)
	return writeFileAtomic(path, content)
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
