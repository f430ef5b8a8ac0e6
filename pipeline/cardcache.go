package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/brabo-dev/brabo"
)

// cardCache keeps the card last computed for each pending action with the
// state of the repository (or file) it was computed from: showing the
// queue again computes no card whose inputs did not move. An approval
// never reads it (checkRevision computes the card afresh).
type cardCache struct {
	mu sync.Mutex
	m  map[string]cachedCard
}

type cachedCard struct {
	key string
	pv  *brabo.Preview
}

// maxCachedCards bounds the cache; past it, it starts again empty.
const maxCachedCards = 2000

func (c *cardCache) get(id, key string) *brabo.Preview {
	if key == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[id]; ok && e.key == key {
		return e.pv
	}
	return nil
}

// put records pv as id's card for key; a nil pv forgets id's card.
func (c *cardCache) put(id, key string, pv *brabo.Preview) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pv == nil {
		delete(c.m, id)
		return
	}
	if c.m == nil || len(c.m) >= maxCachedCards {
		c.m = map[string]cachedCard{}
	}
	c.m[id] = cachedCard{key: key, pv: pv}
}

// maxKeyEntries bounds the files a key stats: a working tree larger than
// that is not cached.
const maxKeyEntries = 20000

// cardKey is the state a's card depends on, "" when it is not cached (the
// card is cheap, or its inputs cannot be stat'ed): for a write the file's
// status; for a git action the status of the git folder's HEAD, index,
// packed refs and every loose ref, and for a commit every entry of the
// working tree too; for a merge the pull request's branches.
func (s *Service) cardKey(a *brabo.ProposedAction, p *brabo.Project, pr *brabo.PullRequest) string {
	scope, err := s.ScopeRoot(p)
	if err != nil {
		return ""
	}
	root := scope.Root
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", root, a.Status)
	stat := func(p string) {
		k, ok := statKeyOf(p)
		fmt.Fprintf(h, "%s\x00%v\x00%v\x00", p, ok, k)
	}
	switch a.Type {
	case brabo.WriteFile:
		target := a.Payload.Path
		if !filepath.IsAbs(target) {
			target = filepath.Join(root, target)
		}
		stat(target)
		stat(filepath.Dir(target))
	case brabo.GitPush, brabo.GitCommit, brabo.PrOpen, brabo.GitMerge:
		gitDir := filepath.Join(root, ".git")
		if fi, err := os.Lstat(gitDir); err != nil || !fi.IsDir() {
			return "" // a gitfile, a linked worktree: computed each time
		}
		for _, f := range []string{"HEAD", "index", "packed-refs"} {
			stat(filepath.Join(gitDir, f))
		}
		n := 0
		if !walkStat(filepath.Join(gitDir, "refs"), stat, &n, "") {
			return ""
		}
		if a.Type == brabo.GitCommit {
			stat(filepath.Join(gitDir, "info", "exclude"))
			if !walkStat(root, stat, &n, gitDir) {
				return ""
			}
		}
		if pr != nil {
			fmt.Fprintf(h, "%s\x00%s\x00%s\x00", pr.Head, pr.Base, pr.State)
		}
	default:
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// walkStat stats every entry under dir but skip, in order; false when
// there are more than maxKeyEntries or a folder cannot be read.
func walkStat(dir string, stat func(string), n *int, skip string) bool {
	ok := true
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			ok = false
			return filepath.SkipAll
		}
		if p == skip {
			return filepath.SkipDir
		}
		if *n++; *n > maxKeyEntries {
			ok = false
			return filepath.SkipAll
		}
		stat(p)
		return nil
	})
	return ok
}
