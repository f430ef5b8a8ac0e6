// Package gitguard finds a repository the way git would, and reads what
// git would obey in it as data, before brabo runs anything there: its
// gitfile, commondir and alternates (which must stay inside the project
// folder) and its configuration (which must hold only keys that name no
// program). brabo's own git — the git actions it executes, its worktree
// bookkeeping — runs only once Check has passed, and the preview's reader
// (package gitrepo) opens only a repository Locate accepted.
//
// It imports the standard library only: the executor, the engine and the
// reader share it.
package gitguard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Named refusals of a repository whose control files point out of the
// project folder. Errors returned by Locate wrap one of them (errors.Is).
var (
	// ErrNoRepository: no .git was found from the folder up to the
	// project folder.
	ErrNoRepository = errors.New("not a git repository")
	// ErrGitfileOutside: a .git file (gitdir: …) or a .git symlink names
	// a folder outside the project folder.
	ErrGitfileOutside = errors.New("the .git file points outside the project folder")
	// ErrCommondirOutside: the git folder's commondir names a folder
	// outside the project folder.
	ErrCommondirOutside = errors.New("the commondir points outside the project folder")
	// ErrAlternatesOutside: objects/info/alternates names an object folder
	// outside the project folder.
	ErrAlternatesOutside = errors.New("objects/info/alternates points outside the project folder")
)

// Layout is a repository as git finds it from a folder.
type Layout struct {
	// Top is the working tree: the folder holding .git.
	Top string
	// GitDir is the git folder (.git, or where a gitfile points),
	// symlinks resolved.
	GitDir string
	// CommonDir is where refs, objects and config live: GitDir, or where
	// GitDir/commondir points (a linked worktree).
	CommonDir string
	// Alternates are the object folders objects/info/alternates adds,
	// resolved, each inside the bound.
	Alternates []string
}

// Locate finds the repository that holds dir, looking in dir and its
// parents up to bound and never above it (bound is the project folder; it
// plays the part of GIT_CEILING_DIRECTORIES). What git would follow —
// a .git file or symlink, the commondir, objects/info/alternates, nested
// alternates — must resolve inside bound, or Locate refuses with
// ErrGitfileOutside, ErrCommondirOutside or ErrAlternatesOutside. An
// empty bound checks nothing and looks up to the file system's root.
// A folder is never taken for a bare repository: safe.bareRepository is
// explicit for brabo's git.
func Locate(bound, dir string) (*Layout, error) {
	rb := ""
	if bound != "" {
		r, err := filepath.EvalSymlinks(bound)
		if err != nil {
			return nil, fmt.Errorf("the project folder: %w", err)
		}
		rb = r
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(bound, dir)
		}
	}
	dir = filepath.Clean(dir)
	for d := dir; ; {
		l, err := atTop(rb, d)
		if err != nil || l != nil {
			return l, err
		}
		if bound != "" && (samePath(d, bound) || samePath(d, rb)) {
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	return nil, fmt.Errorf("%s: %w", dir, ErrNoRepository)
}

// atTop looks at d/.git: nil, nil when there is no repository there.
func atTop(rb, d string) (*Layout, error) {
	dotgit := filepath.Join(d, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return nil, nil
	}
	var gitdir string
	switch {
	case fi.Mode().IsRegular():
		data, err := readSmall(dotgit)
		if err != nil {
			return nil, err
		}
		target, ok := strings.CutPrefix(strings.TrimRight(string(data), "\r\n"), "gitdir: ")
		if !ok || target == "" {
			return nil, fmt.Errorf("%s: not a gitfile (no \"gitdir: \" line)", dotgit)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(d, target)
		}
		if gitdir, err = inside(rb, target, ErrGitfileOutside); err != nil {
			return nil, fmt.Errorf("%s names %s: %w", dotgit, target, err)
		}
	default: // a folder, or a symlink git would follow
		if gitdir, err = inside(rb, dotgit, ErrGitfileOutside); err != nil {
			return nil, fmt.Errorf("%s: %w", dotgit, err)
		}
		if st, err := os.Stat(gitdir); err != nil || !st.IsDir() {
			return nil, nil
		}
	}
	if _, err := os.Stat(filepath.Join(gitdir, "HEAD")); err != nil {
		if fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: the git folder %s has no HEAD", dotgit, gitdir)
		}
		return nil, nil // not a git folder: git looks further up
	}
	l := &Layout{Top: d, GitDir: gitdir, CommonDir: gitdir}
	if data, err := readSmall(filepath.Join(gitdir, "commondir")); err == nil {
		target := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(target) {
			target = filepath.Join(gitdir, target)
		}
		if l.CommonDir, err = inside(rb, target, ErrCommondirOutside); err != nil {
			return nil, fmt.Errorf("%s/commondir names %s: %w", gitdir, target, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := l.alternates(rb, filepath.Join(l.CommonDir, "objects"), 0); err != nil {
		return nil, err
	}
	return l, nil
}

// alternates checks objects/info/alternates of the object folder objects,
// and theirs, to git's depth of five.
func (l *Layout) alternates(rb, objects string, depth int) error {
	file := filepath.Join(objects, "info", "alternates")
	data, err := readSmall(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if depth >= 5 {
		return fmt.Errorf("%s: alternates nested too deep: %w", file, ErrAlternatesOutside)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, `"`) {
			u, err := strconv.Unquote(line)
			if err != nil {
				return fmt.Errorf("%s: %q: %w", file, line, ErrAlternatesOutside)
			}
			line = u
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		got, err := inside(rb, line, ErrAlternatesOutside)
		if err != nil {
			return fmt.Errorf("%s names %s: %w", file, line, err)
		}
		l.Alternates = append(l.Alternates, got)
		if err := l.alternates(rb, got, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// inside resolves p (symlinks followed as far as it exists) and checks it
// lies in rb (resolved already); "" checks nothing.
func inside(rb, p string, outside error) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		r = filepath.Clean(p) // git would fail on it; judged lexically
	}
	if rb != "" && !within(rb, r) {
		return "", outside
	}
	return r, nil
}

func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// maxControlFile caps what is read of a control file (config, gitfile).
const maxControlFile = 1 << 20

func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	n, err := b.ReadFrom(io.LimitReader(f, maxControlFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if n > maxControlFile {
		return nil, fmt.Errorf("%s is over %d bytes", p, maxControlFile)
	}
	return b.Bytes(), nil
}
