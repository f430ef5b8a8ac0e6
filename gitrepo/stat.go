package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitattributes"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/brabo-dev/brabo"
)

// maxBlob is the largest content whose lines are counted; a larger file
// counts as binary, as git does past core.bigFileThreshold.
const maxBlob = 32 << 20

// side is one side of a file's change: its blob (or the bytes on disk)
// and mode.
type side struct {
	hash plumbing.Hash
	mode filemode.FileMode
	data []byte // the working tree's content, when read from disk
	disk bool
}

// RangeStat is `git diff --numstat base...tip` (brabo.GitRepo).
func (g *Repo) RangeStat(base, tip string, max int) (*brabo.DiffStat, error) {
	b, err := g.commitOf(base)
	if err != nil {
		return nil, err
	}
	t, err := g.commitOf(tip)
	if err != nil {
		return nil, err
	}
	if b == nil || t == nil {
		return nil, fmt.Errorf("%s...%s: not both commits", base, tip)
	}
	mb, err := g.mergeBase(b, t)
	if err != nil {
		return nil, err
	}
	if mb == nil {
		return nil, fmt.Errorf("%s and %s share no history", base, tip)
	}
	from, err := g.flatten(mb)
	if err != nil {
		return nil, err
	}
	to, err := g.flatten(t)
	if err != nil {
		return nil, err
	}
	st := &brabo.DiffStat{}
	attrs := g.attributes()
	for _, p := range unionPaths(from, to) {
		a, okA := from[p]
		b, okB := to[p]
		if okA && okB && a.hash == b.hash && a.mode == b.mode {
			continue
		}
		if err := g.alive(); err != nil {
			return nil, err
		}
		fs, err := g.fileStat(p, a, okA, b, okB, attrs)
		if err != nil {
			return nil, err
		}
		add(st, fs, max)
	}
	return st, nil
}

// add puts one file in the stat, within max.
func add(st *brabo.DiffStat, fs brabo.FileStat, max int) {
	st.Added += fs.Added
	st.Removed += fs.Removed
	if len(st.Files) < max {
		st.Files = append(st.Files, fs)
	} else {
		st.More++
	}
}

// flatten lists every file of a commit's tree (gitlinks included) by path.
func (g *Repo) flatten(c *object.Commit) (map[string]side, error) {
	out := map[string]side{}
	if c == nil {
		return out, nil
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("the tree of %s: %w", c.Hash, err)
	}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the tree of %s: %w", c.Hash, err)
		}
		if e.Mode == filemode.Dir {
			continue
		}
		if err := g.alive(); err != nil {
			return nil, err
		}
		out[name] = side{hash: e.Hash, mode: e.Mode}
	}
	return out, nil
}

func unionPaths(maps ...map[string]side) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range maps {
		for p := range m {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// fileStat is one line of `git diff --numstat` from a to b (either may be
// absent).
func (g *Repo) fileStat(p string, a side, okA bool, b side, okB bool, attrs gitattributes.Matcher) (brabo.FileStat, error) {
	fs := brabo.FileStat{Path: p}
	if okA && a.mode == filemode.Submodule || okB && b.mode == filemode.Submodule {
		// "Subproject commit <hash>" lines, as git counts them.
		if okA && a.mode == filemode.Submodule {
			fs.Removed = 1
		}
		if okB && b.mode == filemode.Submodule {
			fs.Added = 1
		}
		return fs, nil
	}
	var old, new []byte
	var err error
	if okA {
		if old, err = g.content(a); err != nil {
			return fs, fmt.Errorf("%s: %w", p, err)
		}
	}
	if okB {
		if new, err = g.content(b); err != nil {
			return fs, fmt.Errorf("%s: %w", p, err)
		}
	}
	if old == nil && okA || new == nil && okB || binaryAttr(attrs, p, old, new) {
		fs.Binary = true
		return fs, nil
	}
	fs.Added, fs.Removed = countLines(old, new)
	return fs, nil
}

// content is a side's bytes; nil (binary) when larger than maxBlob.
func (g *Repo) content(s side) ([]byte, error) {
	if s.disk {
		return s.data, nil
	}
	blob, err := g.repo.BlobObject(s.hash)
	if err != nil {
		return nil, err
	}
	if blob.Size > maxBlob {
		return nil, nil
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if b == nil {
		b = []byte{}
	}
	return b, err
}

// attributes reads the working tree's .gitattributes files and
// info/attributes as data, for the diff and binary attributes only (a
// diff driver's name is never looked up: brabo runs none). A folder's
// file is read when a path under it is first matched: only changed files
// need attributes.
func (g *Repo) attributes() gitattributes.Matcher {
	m := &lazyMatcher{top: g.layout.Top, seen: map[string]bool{}}
	m.read(nil)
	if f, err := os.Open(filepath.Join(g.layout.CommonDir, "info", "attributes")); err == nil {
		defer f.Close()
		if as, err := gitattributes.ReadAttributes(io.LimitReader(f, 1<<20), nil, true); err == nil {
			m.info = as
		}
	}
	return m
}

type lazyMatcher struct {
	top   string
	seen  map[string]bool
	stack []gitattributes.MatchAttribute
	info  []gitattributes.MatchAttribute
}

func (m *lazyMatcher) read(dir []string) {
	key := strings.Join(dir, "/")
	if m.seen[key] {
		return
	}
	m.seen[key] = true
	fi, err := os.Lstat(filepath.Join(append([]string{m.top}, dir...)...))
	if err != nil || !fi.IsDir() {
		return // never through a symlink
	}
	f, err := os.Open(filepath.Join(append([]string{m.top}, append(dir, ".gitattributes")...)...))
	if err != nil {
		return
	}
	defer f.Close()
	if as, err := gitattributes.ReadAttributes(io.LimitReader(f, 1<<20), append([]string(nil), dir...), len(dir) == 0); err == nil {
		m.stack = append(m.stack, as...)
	}
}

func (m *lazyMatcher) Match(path []string, attributes []string) (map[string]gitattributes.Attribute, bool) {
	for i := 1; i < len(path); i++ {
		m.read(path[:i])
	}
	// Deeper files come later in the stack and win, as in git; the
	// repository's info/attributes wins over all. The first rule (from
	// the most specific) that names an attribute decides it.
	all := append(append([]gitattributes.MatchAttribute(nil), m.stack...), m.info...)
	out := map[string]gitattributes.Attribute{}
	matched := false
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Pattern == nil || !all[i].Pattern.Match(path) {
			continue
		}
		matched = true
		for _, a := range all[i].Attributes {
			if _, done := out[a.Name()]; !done && slices.Contains(attributes, a.Name()) {
				out[a.Name()] = a
			}
		}
	}
	return out, matched
}

// binaryAttr reports a file git's numstat shows as binary: the binary or
// -diff attribute, or a NUL byte in the first 8000 bytes of either side
// unless the diff attribute is set.
func binaryAttr(attrs gitattributes.Matcher, p string, old, new []byte) bool {
	if attrs != nil {
		res, _ := attrs.Match(strings.Split(p, "/"), []string{"diff", "binary"})
		if a, ok := res["binary"]; ok && a.IsSet() {
			return true
		}
		if a, ok := res["diff"]; ok {
			if a.IsUnset() {
				return true
			}
			if a.IsSet() {
				return false
			}
		}
	}
	return hasNUL(old) || hasNUL(new)
}

func hasNUL(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// countLines is numstat's added and removed lines from old to new: the
// shortest edit script over lines (Myers), as git's diff finds it for
// all but huge changes. Past maxCost the unmatched middle counts whole.
func countLines(old, new []byte) (added, removed int) {
	a, b := lines(old), lines(new)
	// Common prefix and suffix first: most changes are small.
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	d := editDistance(a, b)
	if d < 0 {
		return len(b), len(a)
	}
	// d = removed + added, and len(a) - removed = len(b) - added.
	return (d + len(b) - len(a)) / 2, (d + len(a) - len(b)) / 2
}

var seed = maphash.MakeSeed()

// lines hashes each line, its newline included (a last line without one
// differs from the same line with one, as in git).
func lines(b []byte) []uint64 {
	var out []uint64
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b) - 1
		}
		out = append(out, maphash.Bytes(seed, b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// maxCost bounds the Myers search (edits × lines): past it the change is
// counted as all its lines.
const maxCost = 200_000_000

// editDistance is the number of lines inserted and deleted by the
// shortest edit script from a to b, or -1 past maxCost.
func editDistance(a, b []uint64) int {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return n + m
	}
	max := n + m
	v := make([]int, 2*max+2)
	off := max + 1
	for d := 0; d <= max; d++ {
		if d*(n+m) > maxCost {
			return -1
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return d
			}
		}
	}
	return max
}
