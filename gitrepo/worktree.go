package gitrepo

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/brabo-dev/brabo"
)

// WorktreeStat is what `git add -A` would commit (brabo.GitRepo): the
// working tree against HEAD for every path HEAD or the index has, as
// `git diff --numstat HEAD` shows it, then the untracked files no ignore
// rule excludes (.gitignore files, info/exclude, the user's global
// ignore file), as `git ls-files --others --exclude-standard` lists them
// from the top of the working tree. Paths are relative to the top.
//
// A file whose size and modification time match its index entry (and
// that is older than the index) is taken to hold what the index says,
// as git does; the others are read and hashed.
func (g *Repo) WorktreeStat(max int) (*brabo.DiffStat, error) {
	head, err := g.commitOf("HEAD")
	if err != nil {
		return nil, err
	}
	base, err := g.flatten(head)
	if err != nil {
		return nil, err
	}
	idx, err := g.st.Index()
	if err != nil {
		return nil, fmt.Errorf("reading the index: %w", err)
	}
	var indexTime int64
	if fi, err := os.Stat(filepath.Join(g.layout.GitDir, "index")); err == nil {
		indexTime = fi.ModTime().UnixNano()
	}
	tracked := map[string]*index.Entry{}
	for _, e := range idx.Entries {
		if e.Stage == index.Merged || tracked[e.Name] == nil {
			tracked[e.Name] = e
		}
	}
	attrs := g.attributes()
	st := &brabo.DiffStat{}
	paths := unionPaths(base, sidesOf(tracked))
	for _, p := range paths {
		if err := g.alive(); err != nil {
			return nil, err
		}
		a, okA := base[p]
		b, okB, err := g.onDisk(p, tracked[p], indexTime)
		if err != nil {
			return nil, err
		}
		if !okA && !okB || okA && okB && !b.disk && a.hash == b.hash && a.mode == b.mode {
			continue
		}
		if okA && okB && b.disk && a.mode == b.mode && plumbing.ComputeHash(plumbing.BlobObject, b.data) == a.hash {
			continue
		}
		fs, err := g.fileStat(p, a, okA, b, okB, attrs)
		if err != nil {
			return nil, err
		}
		add(st, fs, max)
	}
	untracked, err := g.untracked(tracked)
	if err != nil {
		return nil, err
	}
	for _, p := range untracked {
		add(st, brabo.FileStat{Path: p, New: true}, max)
	}
	return st, nil
}

func sidesOf(m map[string]*index.Entry) map[string]side {
	out := make(map[string]side, len(m))
	for p := range m {
		out[p] = side{}
	}
	return out
}

// onDisk is the working tree's side of a tracked path: absent when the
// file is gone (or reached through a symlinked folder, which git does not
// follow either); the index's blob when the file's stat matches its entry.
func (g *Repo) onDisk(p string, e *index.Entry, indexTime int64) (side, bool, error) {
	if e == nil {
		return side{}, false, nil // in HEAD, not in the index: deleted
	}
	if e.SkipWorktree || e.Mode == filemode.Submodule {
		return side{hash: e.Hash, mode: e.Mode}, true, nil
	}
	if g.behindSymlink(p) {
		return side{}, false, nil
	}
	full := filepath.Join(g.layout.Top, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if err != nil || fi.IsDir() {
		return side{}, false, nil // gone, or a folder in the way of the path
	}
	mode := filemode.Regular
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		mode = filemode.Symlink
		if !g.symlinks {
			mode = e.Mode
		}
	case !fi.Mode().IsRegular():
		return side{}, false, nil
	case fi.Mode()&0o111 != 0:
		mode = filemode.Executable
	}
	if !g.filemode && mode != filemode.Symlink {
		mode = e.Mode
	}
	mt := fi.ModTime().UnixNano()
	if !e.IntentToAdd && int64(e.Size) == fi.Size()&0xffffffff && e.ModifiedAt.UnixNano() == mt && mt < indexTime {
		return side{hash: e.Hash, mode: mode}, true, nil
	}
	var data []byte
	if mode == filemode.Symlink {
		target, err := os.Readlink(full)
		if err != nil {
			return side{}, false, err
		}
		data = []byte(target)
	} else {
		if fi.Size() > maxBlob {
			return side{mode: mode, disk: true}, true, nil // counted as binary
		}
		if data, err = os.ReadFile(full); err != nil {
			return side{}, false, err
		}
	}
	return side{mode: mode, data: data, disk: true}, true, nil
}

// behindSymlink reports a path one of whose folders is a symlink.
func (g *Repo) behindSymlink(p string) bool {
	if g.dirs == nil {
		g.dirs = map[string]bool{}
	}
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		link, ok := g.dirs[d]
		if !ok {
			fi, err := os.Lstat(filepath.Join(g.layout.Top, filepath.FromSlash(d)))
			link = err != nil || !fi.IsDir()
			g.dirs[d] = link
		}
		if link {
			return true
		}
	}
	return false
}

// untracked lists the files of the working tree the index does not have
// and no ignore rule excludes, sorted; an untracked folder holding a
// repository of its own is listed once, as "folder/", as git lists it.
func (g *Repo) untracked(tracked map[string]*index.Entry) ([]string, error) {
	trackedDirs := map[string]bool{}
	for p := range tracked {
		for d := p; ; {
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d = d[:i]
			if trackedDirs[d] {
				break
			}
			trackedDirs[d] = true
		}
	}
	ps := globalIgnore()
	ps = append(ps, readIgnore(filepath.Join(g.layout.CommonDir, "info", "exclude"), nil)...)
	var out []string
	var walk func(dir []string, ps []gitignore.Pattern) error
	walk = func(dir []string, ps []gitignore.Pattern) error {
		if err := g.alive(); err != nil {
			return err
		}
		abs := filepath.Join(append([]string{g.layout.Top}, dir...)...)
		ps = append(ps[:len(ps):len(ps)], readIgnore(filepath.Join(abs, ".gitignore"), dir)...)
		entries, err := os.ReadDir(abs)
		if err != nil {
			return nil // unreadable: git skips it too
		}
		m := gitignore.NewMatcher(ps)
		for _, e := range entries {
			name := e.Name()
			if name == ".git" {
				continue
			}
			path := append(dir[:len(dir):len(dir)], name)
			rel := strings.Join(path, "/")
			if e.IsDir() {
				if _, ok := tracked[rel]; ok {
					continue // a submodule
				}
				if !trackedDirs[rel] {
					if m.Match(path, true) {
						continue
					}
					if _, err := os.Lstat(filepath.Join(abs, name, ".git")); err == nil {
						out = append(out, rel+"/")
						continue
					}
				}
				if err := walk(path, ps); err != nil {
					return err
				}
				continue
			}
			if _, ok := tracked[rel]; ok || m.Match(path, false) {
				continue
			}
			out = append(out, rel)
		}
		return nil
	}
	if err := walk(nil, ps); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// readIgnore reads one ignore file's patterns for the folder dir.
func readIgnore(file string, dir []string) []gitignore.Pattern {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(io.LimitReader(f, 4<<20))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, append([]string(nil), dir...)))
	}
	return ps
}

// globalIgnore is the user's own ignore file, which git reads by default
// ($XDG_CONFIG_HOME/git/ignore, or ~/.config/git/ignore); brabo's git
// reads no global configuration that could name another.
func globalIgnore() []gitignore.Pattern {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(home, ".config")
	}
	return readIgnore(filepath.Join(dir, "git", "ignore"), nil)
}
