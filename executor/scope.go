package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo"
)

// scope is a request's root, as given (cleaned) and with its symlinks
// resolved. A path is inside the scope when it is inside either lexically
// and, once resolved, inside the resolved one.
type scope struct {
	t        brabo.ActionType
	lexical  string
	resolved string
}

// newScope checks the scope root: absolute, not the filesystem root, an
// existing directory.
func newScope(t brabo.ActionType, root string) (*scope, error) {
	refuse := func(reason string) error {
		return &ScopeError{Type: t, Field: "root", Path: root, Reason: reason}
	}
	if root == "" || !filepath.IsAbs(root) || strings.ContainsRune(root, 0) {
		return nil, refuse("is not an absolute path")
	}
	lex := filepath.Clean(root)
	if lex == "/" {
		return nil, refuse("is the filesystem root")
	}
	res, err := filepath.EvalSymlinks(lex)
	if err != nil {
		return nil, fmt.Errorf("%s: scope root: %w", t, err)
	}
	if res == "/" {
		return nil, refuse("resolves to the filesystem root")
	}
	if fi, err := os.Stat(res); err != nil {
		return nil, fmt.Errorf("%s: scope root: %w", t, err)
	} else if !fi.IsDir() {
		return nil, refuse("is not a directory")
	}
	return &scope{t: t, lexical: lex, resolved: res}, nil
}

// within reports whether p is root or below it, on a separator boundary.
// Both are clean absolute paths.
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// abs returns the clean absolute form of a payload path (relative to the
// root; an absolute one is taken as is) and whether it lies lexically
// inside the root.
func (s *scope) abs(p string) (string, bool) {
	var a string
	if filepath.IsAbs(p) {
		a = filepath.Clean(p)
	} else {
		a = filepath.Join(s.lexical, p)
	}
	return a, within(s.lexical, a) || within(s.resolved, a)
}

// dir resolves a directory a payload names (cwd): relative to the root,
// empty for the root itself, inside the root lexically and once its
// symlinks are resolved, existing. It returns the resolved path, which is
// what commands run in.
func (s *scope) dir(field, p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", &PayloadError{Type: s.t, Field: field, Value: p, Reason: "holds a NUL byte"}
	}
	if p == "" {
		return s.resolved, nil
	}
	a, ok := s.abs(p)
	if !ok {
		return "", &ScopeError{Type: s.t, Field: field, Path: p, Reason: "lies outside the project folder"}
	}
	real, err := filepath.EvalSymlinks(a)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &PayloadError{Type: s.t, Field: field, Value: p, Reason: "does not exist"}
	} else if err != nil {
		return "", fmt.Errorf("%s: %s %q: %w", s.t, field, p, err)
	}
	if !within(s.resolved, real) {
		return "", &ScopeError{Type: s.t, Field: field, Path: p,
			Reason: "resolves through a symlink to outside the project folder"}
	}
	if fi, err := os.Stat(real); err != nil {
		return "", fmt.Errorf("%s: %s %q: %w", s.t, field, p, err)
	} else if !fi.IsDir() {
		return "", &PayloadError{Type: s.t, Field: field, Value: p, Reason: "is not a directory"}
	}
	return real, nil
}

// fileTarget is where write_file writes: the resolved directory (created if
// it was missing), the file's name in it, and the path relative to the root
// in slash form.
type fileTarget struct {
	dir, name, rel string
}

// file resolves the file a write_file payload names. The path must be
// relative to the root (or absolute inside it), hold no ".." element and no
// ".git" element, and name a file below the root; the deepest directory of
// it that exists, resolved with its symlinks, must be inside the resolved
// root. The missing directories are created there, and the result is
// checked again once they exist.
func (s *scope) file(field, p string) (*fileTarget, error) {
	refuse := func(reason string) error {
		return &ScopeError{Type: s.t, Field: field, Path: p, Reason: reason}
	}
	if p == "" {
		return nil, &PayloadError{Type: s.t, Field: field, Reason: "is empty"}
	}
	if strings.ContainsRune(p, 0) {
		return nil, &PayloadError{Type: s.t, Field: field, Value: p, Reason: "holds a NUL byte"}
	}
	for _, elem := range strings.Split(filepath.ToSlash(p), "/") {
		if elem == ".." {
			return nil, refuse(`holds a ".." element`)
		}
		// .git holds hooks and config that git runs: a file written there
		// would run code on the next auto-approved git_commit.
		if strings.EqualFold(elem, ".git") {
			return nil, refuse("lies inside the repository's .git directory")
		}
	}
	a, ok := s.abs(p)
	if !ok {
		return nil, refuse("lies outside the project folder")
	}
	if a == s.lexical || a == s.resolved {
		return nil, &PayloadError{Type: s.t, Field: field, Value: p, Reason: "names the project folder itself, not a file in it"}
	}
	base := s.lexical
	if !within(base, a) {
		base = s.resolved
	}
	rel, err := filepath.Rel(base, a)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %q: %w", s.t, field, p, err)
	}

	// The deepest existing ancestor of the file's directory, resolved.
	existing, missing := filepath.Dir(a), []string(nil)
	var real string
	for {
		r, err := filepath.EvalSymlinks(existing)
		if err == nil {
			real = r
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %s %q: %w", s.t, field, p, err)
		}
		if existing == base {
			return nil, fmt.Errorf("%s: %s %q: the project folder disappeared", s.t, field, p)
		}
		if _, err := os.Lstat(existing); err == nil {
			// It exists but does not resolve: a dangling symlink, whose
			// target may lie anywhere.
			return nil, refuse("passes through a dangling symlink")
		}
		missing = append([]string{filepath.Base(existing)}, missing...)
		existing = filepath.Dir(existing)
	}
	if !within(s.resolved, real) {
		return nil, refuse("resolves through a symlink to outside the project folder")
	}
	dir := filepath.Join(append([]string{real}, missing...)...)
	if len(missing) > 0 {
		// MkdirAll refuses to pass through a dangling symlink (Mkdir on the
		// link fails and Lstat does not call it a directory).
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %s %q: %w", s.t, field, p, err)
		}
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %q: %w", s.t, field, p, err)
		}
		if !within(s.resolved, r) {
			return nil, refuse("resolves through a symlink to outside the project folder")
		}
		dir = r
	}
	return &fileTarget{dir: dir, name: filepath.Base(a), rel: filepath.ToSlash(rel)}, nil
}
