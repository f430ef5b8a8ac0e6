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
	entries, err := os.ReadDir(dir) // follows a symlinked folder, as a path through it would
	if err != nil {
		return
	}
	for _, e := range entries {
		child := n.children[strings.ToLower(e.Name())]
		if child == nil {
			continue
		}
		p := filepath.Join(dir, e.Name())
		switch {
		case child.folder:
			sn.takeFolder(p)
		case child.file:
			sn.take(p)
		}
		if child.children != nil && (e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
			sn.walkTree(p, child)
		}
	}
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
