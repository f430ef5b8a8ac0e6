package pipeline

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The integrity snapshot runs twice around every executed action, so what
// it costs is paid by every proposal that runs. Two things keep it cheap:
// it lists the folders on the way to the protected paths instead of trying
// each name (one directory read instead of two dozen failed lstat calls),
// and it keeps what it read of a protected file for as long as the file's
// status says it has not changed.

// treeNode is a folder on the way to protected paths: the names below it
// that are protected themselves (file), taken whole (folder), or lead to
// more (children).
type treeNode struct {
	file, folder bool
	children     map[string]*treeNode // by lower-case name
}

// protectedTree is protectedFiles and protectedFolders as a tree.
var protectedTree = func() *treeNode {
	root := &treeNode{}
	add := func(rel string, folder bool) {
		n := root
		for _, el := range strings.Split(rel, "/") {
			if n.children == nil {
				n.children = map[string]*treeNode{}
			}
			el = strings.ToLower(el)
			if n.children[el] == nil {
				n.children[el] = &treeNode{}
			}
			n = n.children[el]
		}
		if folder {
			n.folder = true
		} else {
			n.file = true
		}
	}
	for _, rel := range protectedFiles {
		add(rel, false)
	}
	for _, rel := range protectedFolders {
		add(rel, true)
	}
	return root
}()

// walkTree takes the protected paths under dir. Names match whatever their
// case (a file system that folds case opens CLAUDE.md for claude.md, and
// the policy's table matches so too); a path that is absent is left out,
// which the comparison reads as absent.
func (sn *snapshot) walkTree(dir string, n *treeNode) {
	for _, e := range listings.list(dir) { // follows a symlinked folder, as a path through it would
		child := n.children[strings.ToLower(e.name)]
		if child == nil {
			continue
		}
		p := filepath.Join(dir, e.name)
		switch {
		case child.folder:
			sn.takeFolder(p)
		case child.file:
			sn.take(p)
		}
		if child.children != nil && e.mayHold {
			sn.walkTree(p, child)
		}
	}
}

// dirEntry is a name in a folder, and whether a path may go on through
// it (a folder, or a symlink that may point to one).
type dirEntry struct {
	name    string
	mayHold bool
}

// listCache keeps folder listings, by the folder's status: adding,
// removing or renaming an entry changes the folder's modification and
// change times, so an unchanged status (older than racyWindow) is an
// unchanged list of names. What the entries hold is read anew.
type listCache struct {
	mu sync.Mutex
	m  map[string]cachedList
}

type cachedList struct {
	key     statKey
	entries []dirEntry
	readAt  time.Time
}

var listings = &listCache{}

// list returns the entries of dir, nil when it cannot be read.
func (c *listCache) list(dir string) []dirEntry {
	key, ok := statKeyFollow(dir) // not ok: absent, or no status to trust; read
	if ok {
		c.mu.Lock()
		cached, hit := c.m[dir]
		c.mu.Unlock()
		if hit && cached.key == key && cached.readAt.Sub(time.Unix(0, max(key.ctime, key.mtime))) > racyWindow {
			return cached.entries
		}
	}
	now := time.Now()
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	entries := make([]dirEntry, len(des))
	for i, e := range des {
		entries[i] = dirEntry{name: e.Name(), mayHold: e.IsDir() || e.Type()&fs.ModeSymlink != 0}
	}
	if ok {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxCachedStates {
			c.m = map[string]cachedList{}
		}
		c.m[dir] = cachedList{key: key, entries: entries, readAt: now}
		c.mu.Unlock()
	}
	return entries
}

// statCache keeps the state read of protected files, with the status they
// had, so that a file whose status has not moved is not read and hashed
// again.
type statCache struct {
	mu sync.Mutex
	m  map[string]cachedState
}

type cachedState struct {
	key    statKey
	state  fileState
	readAt time.Time
}

// statKey is what changes when a file's content, type, mode or identity
// does (statKeyOf). The change time is set by the kernel on every write,
// rename, chmod or utimes, and no program can set it back.
type statKey struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64 // nanoseconds
}

// racyWindow is how long after a file's last change its cached state is
// not trusted: the kernel's timestamps are coarse, so a second change in
// the same tick as the first would keep the same change time ("racy git").
const racyWindow = time.Second

// maxCachedStates bounds the cache; past it, it starts again empty.
const maxCachedStates = 4096

var states = &statCache{}

// read returns the state of path, from the cache when its status is the
// one cached and its last change is older than the read by racyWindow.
func (c *statCache) read(path string) fileState {
	key, ok := statKeyOf(path)
	if !ok {
		return readState(path) // absent, or a system without a change time: read
	}
	changed := time.Unix(0, key.ctime)
	c.mu.Lock()
	cached, hit := c.m[path]
	c.mu.Unlock()
	if hit && cached.key == key && cached.readAt.Sub(changed) > racyWindow {
		return cached.state
	}
	now := time.Now()
	state := readState(path)
	if state.exists {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxCachedStates {
			c.m = map[string]cachedState{}
		}
		c.m[path] = cachedState{key: key, state: state, readAt: now}
		c.mu.Unlock()
	}
	return state
}
