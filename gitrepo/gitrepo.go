// Package gitrepo reads a project's git repository as data, with the
// pure-Go git of github.com/go-git/go-git/v5 (brabo.RepoReader): the
// previews of the pipeline's cards never start git, so nothing the
// repository names — a filter, a textconv, an fsmonitor, a hook, an
// external diff, an include — ever runs for a proposal. The repository is
// found by internal/gitguard, which refuses a gitfile, commondir or
// alternates that leaves the project folder; the reader never looks above
// the project folder.
//
// It is the edge package of go-git (DESIGN §2): nothing else imports it.
package gitrepo

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/gitguard"
)

// ReadTimeout bounds what one preview may spend reading a repository: a
// card must not wait on a huge one. What is not read by then is an error
// the card shows as a note.
const ReadTimeout = 10 * time.Second

// ErrTooSlow is what a read that ran out of its time returns.
var ErrTooSlow = errors.New("the repository is too large to read in time")

// Reader opens repositories (brabo.RepoReader).
type Reader struct {
	// Timeout bounds the reads of one opened repository (ReadTimeout by
	// default).
	Timeout time.Duration
}

var _ brabo.RepoReader = (*Reader)(nil)

// OpenRepo finds the repository holding dir (relative to root, "" for the
// root), from dir up to root, and opens it for reading. A gitfile,
// commondir or alternates outside root is refused with gitguard's named
// errors.
func (r *Reader) OpenRepo(ctx context.Context, root, dir string) (brabo.GitRepo, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("the scope root %q is not absolute", root)
	}
	abs := filepath.Join(root, dir)
	if rel, err := filepath.Rel(root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("the folder %q is outside the project folder", dir)
	}
	l, err := gitguard.Locate(root, abs)
	if err != nil {
		return nil, err
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = ReadTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	var fs = osfs.New(l.GitDir)
	if l.CommonDir != l.GitDir {
		fs = dotgit.NewRepositoryFilesystem(osfs.New(l.GitDir), osfs.New(l.CommonDir))
	}
	// Alternates were checked to lie inside the project folder; go-git
	// reads absolute ones against the file system's root.
	st := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRUDefault(), filesystem.Options{AlternatesFS: osfs.New("/")})
	repo, err := git.Open(st, osfs.New(l.Top))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("opening %s: %w", l.GitDir, err)
	}
	cfg, err := st.Config()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("reading %s/config: %w", l.CommonDir, err)
	}
	g := &Repo{ctx: ctx, cancel: cancel, layout: l, repo: repo, st: st, filemode: true, symlinks: true}
	if v := cfg.Raw.Section("core").Option("filemode"); v != "" {
		g.filemode = gitBool(v, true)
	}
	if v := cfg.Raw.Section("core").Option("symlinks"); v != "" {
		g.symlinks = gitBool(v, true)
	}
	return g, nil
}

func gitBool(v string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	case "false", "no", "off", "0", "":
		return false
	}
	return def
}

// Repo is one opened repository (brabo.GitRepo). It is not safe for
// concurrent use.
type Repo struct {
	ctx      context.Context
	cancel   context.CancelFunc
	layout   *gitguard.Layout
	repo     *git.Repository
	st       *filesystem.Storage
	filemode bool
	symlinks bool
	dirs     map[string]bool // folders of the working tree: true when a symlink or absent
}

// Close releases what the repository holds.
func (g *Repo) Close() error {
	g.cancel()
	return g.st.Close()
}

func (g *Repo) alive() error {
	if err := g.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return ErrTooSlow
		}
		return err
	}
	return nil
}

// Commit returns the hash of the commit ref names, tags peeled; "" when
// it names none (brabo.GitRepo).
func (g *Repo) Commit(ref string) (string, error) {
	c, err := g.commitOf(ref)
	if c == nil || err != nil {
		return "", err
	}
	return c.Hash.String(), nil
}

func (g *Repo) commitOf(ref string) (*object.Commit, error) {
	var h plumbing.Hash
	if plumbing.IsHash(ref) {
		h = plumbing.NewHash(ref)
	} else {
		r, err := g.repo.Reference(plumbing.ReferenceName(ref), true)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		h = r.Hash()
	}
	for range 10 {
		obj, err := g.repo.Object(plumbing.AnyObject, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o, nil
		case *object.Tag:
			h = o.Target
		default:
			return nil, nil
		}
	}
	return nil, nil
}

// Refs lists the refs under prefix (brabo.GitRepo).
func (g *Repo) Refs(prefix string) ([]string, error) {
	it, err := g.repo.References()
	if err != nil {
		return nil, err
	}
	var out []string
	err = it.ForEach(func(r *plumbing.Reference) error {
		if strings.HasPrefix(string(r.Name()), prefix) && r.Type() == plumbing.HashReference {
			out = append(out, string(r.Name()))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// Log lists the commits of tip that none of not has (brabo.GitRepo), in
// git log's order: newest commit date first along the walk.
func (g *Repo) Log(tip string, not []string, max int) ([]brabo.Commit, int, error) {
	walk, err := g.walk(tip, not)
	if err != nil {
		return nil, 0, err
	}
	var out []brabo.Commit
	for _, c := range walk {
		if len(out) >= max {
			break
		}
		out = append(out, brabo.Commit{Hash: c.Hash.String()[:7], Author: c.Author.Name, Subject: subject(c.Message)})
	}
	return out, len(walk), nil
}

// subject is git's %s: the first paragraph of the message on one line.
func subject(msg string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimLeft(msg, "\n"), "\n") {
		l = strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(l) == "" {
			break
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	return strings.Join(lines, " ")
}

// IsAncestor reports whether a is b or an ancestor of b (brabo.GitRepo).
func (g *Repo) IsAncestor(a, b string) (bool, error) {
	walk, err := g.walk(a, []string{b})
	if err != nil {
		return false, err
	}
	return len(walk) == 0, nil
}

// slop is how many uninteresting commits the walk goes on reading once
// only uninteresting ones are left, as git's does, so that a commit with
// a skewed date is still found to be excluded.
const slop = 5

type walkItem struct {
	c     *object.Commit
	flags uint8
	seq   int
}

const (
	seen          = 1
	uninteresting = 2
	shown         = 4
)

type byDate []*walkItem

func (q byDate) Len() int { return len(q) }
func (q byDate) Less(i, j int) bool {
	ti, tj := q[i].c.Committer.When, q[j].c.Committer.When
	if !ti.Equal(tj) {
		return ti.After(tj)
	}
	return q[i].seq < q[j].seq
}
func (q byDate) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *byDate) Push(x any)   { *q = append(*q, x.(*walkItem)) }
func (q *byDate) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// walk returns the commits reachable from tip and from none of not (refs
// or hashes), in git log's default order.
func (g *Repo) walk(tip string, not []string) ([]*object.Commit, error) {
	items := map[plumbing.Hash]*walkItem{}
	q := &byDate{}
	seq := 0
	add := func(c *object.Commit, flags uint8) {
		it := items[c.Hash]
		if it == nil {
			it = &walkItem{c: c, seq: seq}
			seq++
			items[c.Hash] = it
		}
		if it.flags&seen != 0 {
			it.flags |= flags & uninteresting
			return
		}
		it.flags |= seen | flags
		heap.Push(q, it)
	}
	t, err := g.commitOf(tip)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("%s is not a commit", tip)
	}
	add(t, 0)
	for _, n := range not {
		c, err := g.commitOf(n)
		if err != nil {
			return nil, err
		}
		if c != nil {
			add(c, uninteresting)
		}
	}
	var order []*walkItem
	extra := slop
	for q.Len() > 0 {
		if err := g.alive(); err != nil {
			return nil, err
		}
		if g.onlyUninteresting(q) {
			if extra == 0 {
				break
			}
			extra--
		}
		it := heap.Pop(q).(*walkItem)
		if it.flags&uninteresting == 0 {
			order = append(order, it)
		}
		for _, ph := range it.c.ParentHashes {
			if p := items[ph]; p != nil {
				if it.flags&uninteresting != 0 {
					g.paint(p, items)
				}
				continue
			}
			pc, err := g.repo.CommitObject(ph)
			if err != nil {
				if errors.Is(err, plumbing.ErrObjectNotFound) {
					continue // a shallow clone's boundary
				}
				return nil, err
			}
			add(pc, it.flags&uninteresting)
		}
	}
	var out []*object.Commit
	for _, it := range order {
		if it.flags&uninteresting == 0 {
			out = append(out, it.c)
		}
	}
	return out, nil
}

// paint marks an already seen commit uninteresting, and its seen
// ancestors.
func (g *Repo) paint(it *walkItem, items map[plumbing.Hash]*walkItem) {
	stack := []*walkItem{it}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.flags&uninteresting != 0 {
			continue
		}
		it.flags |= uninteresting
		for _, ph := range it.c.ParentHashes {
			if p := items[ph]; p != nil {
				stack = append(stack, p)
			}
		}
	}
}

func (g *Repo) onlyUninteresting(q *byDate) bool {
	for _, it := range *q {
		if it.flags&uninteresting == 0 {
			return false
		}
	}
	return true
}

// mergeBase is the first merge base of a and b (git merge-base), nil when
// they share no history.
func (g *Repo) mergeBase(a, b *object.Commit) (*object.Commit, error) {
	bases, err := a.MergeBase(b)
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		return nil, nil
	}
	sort.SliceStable(bases, func(i, j int) bool { return bases[i].Committer.When.After(bases[j].Committer.When) })
	return bases[0], nil
}
