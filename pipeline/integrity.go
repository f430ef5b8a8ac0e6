package pipeline

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/brabo-dev/brabo"
)

// Integrity around every executed action (DESIGN §9, "Three layers"): a
// program brabo allowed (go test, make) is code the agent can edit, so the
// lexical rule cannot see what it writes. brabo takes the project's
// protected files before the action runs and looks again after: a file that
// changed without a maintainer's approval for that change is put back, and
// the action fails naming it.

const (
	// maxProtectedFile is the largest protected file kept in full to put
	// back; a larger one is only hashed (a change fails the action, which
	// then says it could not restore the file).
	maxProtectedFile = 1 << 20
	// maxProtectedFiles bounds the files taken in one folder walk.
	maxProtectedFiles = 500
)

// protectedFiles are the project's files an action must not change
// unseen, relative to the project folder and to each of its worktrees:
// permissions, git's config and hooks, the hook managers', the agents'
// configuration and instructions.
var protectedFiles = []string{
	"permissions.json", ".git", ".git/config", ".git/config.worktree", ".git/commondir", ".git/gitdir",
	".git/objects/info/alternates",
	".gitmodules", ".pre-commit-config.yaml", "lefthook.yml", "lefthook.yaml", ".lefthook.yml",
	"lefthook-local.yml", ".claude/settings.json", ".claude/settings.local.json", ".cursor/hooks.json",
	".mcp.json", "CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules",
}

// protectedFolders are taken whole (every file in them).
var protectedFolders = []string{
	".git/hooks", ".git/info", ".husky", ".githooks", ".claude/agents", ".claude/skills", ".claude/commands",
	".claude/hooks", ".codex", ".gemini", ".cursor/rules",
}

// fileState is one protected path as it was.
type fileState struct {
	exists bool
	dir    bool
	link   string // a symlink's target ("" for none)
	mode   fs.FileMode
	data   []byte // nil when the file was too large to keep
	sum    [32]byte
}

// snapshot is the protected paths of one project, by absolute path.
type snapshot struct {
	root      string
	files     map[string]fileState
	worktrees map[string]bool // the worktree folders that existed
	// gitDirs are the git folders whose control files were taken besides
	// the projects' own .git (a gitfile's target, a commondir, the
	// administrative folders of .git/worktrees): a new file counts only
	// inside a folder the snapshot before the action took.
	gitDirs map[string]bool
}

// takeSnapshot reads the project's protected files. It lists folders
// rather than trying every protected name (most are absent), and reuses
// what it read of a file whose status has not moved (statCache).
func takeSnapshot(root string) *snapshot {
	sn := &snapshot{root: root, files: map[string]fileState{}, worktrees: map[string]bool{}, gitDirs: map[string]bool{}}
	for _, base := range projectRoots(root) {
		if base != root {
			sn.worktrees[base] = true
		}
		sn.walkTree(base, protectedTree)
		for _, rel := range gitConfigPaths(base) {
			sn.takeFolder(filepath.Join(base, rel))
		}
		sn.takeGitDirs(base) // gitcontrol.go
	}
	return sn
}

// projectRoots are the project folder and the worktrees brabo keeps in it.
func projectRoots(root string) []string {
	out := []string{root}
	entries, err := os.ReadDir(filepath.Join(root, ".brabo", "worktrees"))
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(root, ".brabo", "worktrees", e.Name()))
		}
	}
	return out
}

// gitConfigPaths are the folders and files .git/config names that run code
// or hold more config: core.hooksPath and include.path, when they lie
// inside the project (outside it, the confinement keeps commands off them).
func gitConfigPaths(base string) []string {
	data, err := readNoFollow(filepath.Join(base, ".git", "config"), maxProtectedFile)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.Trim(strings.TrimSpace(value), `"`)
		if key != "hookspath" && key != "path" {
			continue
		}
		p := value
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, ".git", p)
			if key == "hookspath" {
				p = filepath.Join(base, value) // relative to the worktree's top
			}
		}
		if rel, err := filepath.Rel(base, filepath.Clean(p)); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
			out = append(out, rel)
		}
	}
	return out
}

func (sn *snapshot) take(path string) {
	if _, seen := sn.files[path]; seen {
		return
	}
	sn.files[path] = states.read(path)
}

func (sn *snapshot) takeFolder(dir string) {
	sn.take(dir)
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		if n++; n > maxProtectedFiles {
			return filepath.SkipAll
		}
		sn.take(p)
		return nil
	})
}

// readState reads one path without following a symlink.
func readState(path string) fileState {
	info, err := os.Lstat(path)
	if err != nil {
		return fileState{}
	}
	st := fileState{exists: true, mode: info.Mode()}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		st.link, _ = os.Readlink(path)
		st.sum = sha256.Sum256([]byte("link:" + st.link))
	case info.IsDir():
		st.dir = true
	case info.Mode().IsRegular():
		data, err := readNoFollow(path, maxProtectedFile)
		if err == nil {
			st.data = data
			st.sum = sha256.Sum256(data)
		} else {
			st.sum = hashNoFollow(path)
		}
	default:
		st.sum = sha256.Sum256([]byte("special:" + info.Mode().String()))
	}
	return st
}

// readNoFollow reads a regular file of at most max bytes, refusing a
// symlink.
func readNoFollow(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errors.New("too large to keep")
	}
	return data, nil
}

func hashNoFollow(path string) [32]byte {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return [32]byte{}
	}
	defer f.Close()
	h := sha256.New()
	_, _ = io.Copy(h, f)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func (a fileState) same(b fileState) bool {
	return a.exists == b.exists && a.dir == b.dir && a.link == b.link && a.sum == b.sum &&
		(!a.exists || a.mode.Perm() == b.mode.Perm() && a.mode.Type() == b.mode.Type())
}

// changes returns the protected paths that differ now from the snapshot,
// sorted: changed, removed, and new files in the protected folders. A
// worktree brabo added or removed meanwhile is its own bookkeeping, not
// the action's.
func (sn *snapshot) changes() []string {
	now := takeSnapshot(sn.root)
	var out []string
	for p, before := range sn.files {
		if wt := sn.worktreeOf(p); wt != "" && !now.worktrees[wt] {
			continue // the worktree is gone: removed by brabo
		}
		if sn.worktreeAdminMoved(now, p) {
			continue
		}
		if after, ok := now.files[p]; !ok {
			after = readState(p)
			if !before.same(after) {
				out = append(out, p)
			}
		} else if !before.same(after) {
			out = append(out, p)
		}
	}
	for p, after := range now.files {
		if _, known := sn.files[p]; known || !after.exists {
			continue
		}
		if wt := now.worktreeOf(p); wt != "" && !sn.worktrees[wt] {
			continue // a worktree brabo added meanwhile
		}
		if sn.worktreeAdminMoved(now, p) {
			continue
		}
		if !sn.covers(p) {
			continue // a folder a changed gitfile points to now: the gitfile is the change
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// worktreeOf returns the worktree folder p lies in, or "".
func (sn *snapshot) worktreeOf(p string) string {
	wts := filepath.Join(sn.root, ".brabo", "worktrees") + string(filepath.Separator)
	rest, ok := strings.CutPrefix(p, wts)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, string(filepath.Separator))
	return filepath.Join(sn.root, ".brabo", "worktrees", name)
}

// restore puts the paths back as they were. It returns the paths it could
// not put back (too large to have been kept, or a write that failed).
func (sn *snapshot) restore(paths []string) []string {
	var failed []string
	// Deepest first, so that a new folder's files go before the folder.
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	for _, p := range paths {
		before, known := sn.files[p]
		if err := restoreOne(p, before, known); err != nil {
			failed = append(failed, p)
		}
	}
	sort.Strings(failed)
	return failed
}

func restoreOne(p string, before fileState, known bool) error {
	now := readState(p)
	switch {
	case !known || !before.exists:
		if now.dir {
			return os.RemoveAll(p)
		}
		return os.Remove(p)
	case before.dir:
		if now.exists && !now.dir {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
		return os.MkdirAll(p, before.mode.Perm())
	case before.link != "":
		if now.exists {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
		return os.Symlink(before.link, p)
	case before.data == nil:
		return errors.New("too large to have been kept")
	}
	if now.exists && (now.dir || now.link != "") {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return writeFileMode(p, before.data, before.mode.Perm())
}

// writeFileMode writes through a temporary file and a rename.
func writeFileMode(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".brabo-restore-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ownWrites are the contents brabo itself wrote to protected files while
// actions ran (a PUT of permissions.json, an always-allow, a maintainer's
// approved write): not an action's change.
type ownWrites struct {
	mu sync.Mutex
	m  map[string][][32]byte
}

// note records that brabo wrote data to path.
func (o *ownWrites) note(path string, data []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string][][32]byte{}
	}
	list := append(o.m[path], sha256.Sum256(data))
	if len(list) > 16 {
		list = list[len(list)-16:]
	}
	o.m[path] = list
}

// wrote reports whether the content path holds now is one brabo wrote.
func (o *ownWrites) wrote(path string) bool {
	st := readState(path)
	if !st.exists || st.data == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, h := range o.m[path] {
		if h == st.sum {
			return true
		}
	}
	return false
}

// checkIntegrity runs after an action: it finds the protected files the
// action changed, leaves the ones a maintainer approved (allowed), puts the
// others back, and turns the result into a failure naming them.
func (s *Service) checkIntegrity(sn *snapshot, res *brabo.Result, allowed func(path string) bool) {
	if sn == nil {
		return
	}
	var bad []string
	for _, p := range sn.changes() {
		if allowed(p) || s.own.wrote(p) {
			continue
		}
		bad = append(bad, p)
	}
	if len(bad) == 0 {
		return
	}
	failed := sn.restore(bad)
	rel := make([]string, len(bad))
	for i, p := range bad {
		rel[i] = relTo(sn.root, p)
	}
	if res.Detail == nil {
		res.Detail = map[string]string{}
	}
	res.Detail["restored"] = strings.Join(rel, ", ")
	msg := fmt.Sprintf("integrity: the action changed %s, which only a maintainer's approval of that change allows; brabo put it back",
		strings.Join(rel, ", "))
	if len(failed) > 0 {
		fr := make([]string, len(failed))
		for i, p := range failed {
			fr[i] = relTo(sn.root, p)
		}
		msg += fmt.Sprintf(" (could not restore %s: look at it)", strings.Join(fr, ", "))
		res.Detail["notRestored"] = strings.Join(fr, ", ")
	}
	if res.Error != "" {
		msg += "; " + res.Error
	}
	res.Error = msg
}

func relTo(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// samePath compares two paths after cleaning, resolving the project's
// symlinked root on either side.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(filepath.Dir(a))
	rb, err2 := filepath.EvalSymlinks(filepath.Dir(b))
	return err1 == nil && err2 == nil && filepath.Join(ra, filepath.Base(a)) == filepath.Join(rb, filepath.Base(b))
}

// approvedChange says which protected changes an action may make: those a
// maintainer approved knowing them — the file a write_file names, or the
// protected paths a terminal line visibly writes (its segments'
// ProtectedWrites), and nothing else — when the human who approved it is a
// maintainer or above. An auto-approved action may change none.
func (s *Service) approvedChange(ctx context.Context, a *brabo.ProposedAction, root string, decider *brabo.Member, from brabo.ActionStatus) func(string) bool {
	none := func(string) bool { return false }
	if a.Type == brabo.GitRepoCreate {
		// Making the repository is the action: brabo's own git writes the
		// new .git (hooks off), whoever approved it (the type needs a
		// maintainer, and so does a rule that approves it).
		dotGit := filepath.Join(root, ".git")
		return func(p string) bool { return p == dotGit || strings.HasPrefix(p, dotGit+string(filepath.Separator)) }
	}
	if from != brabo.StatusApproved || decider == nil {
		return none
	}
	var role brabo.Role
	if err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		role, err = tx.Role(ctx, a.ProjectID, decider.ID)
		return err
	}); err != nil || !role.AtLeast(brabo.Maintainer) {
		return none
	}
	switch a.Type {
	case brabo.WriteFile:
		target := a.Payload.Path
		if !filepath.IsAbs(target) {
			target = filepath.Join(root, target)
		}
		return func(p string) bool { return samePath(p, target) }
	case brabo.Terminal:
		// Only the paths the approved line visibly writes: a maintainer who
		// approved `echo … >> .git/config && make` approved that write, not
		// what make changes elsewhere.
		var approved []string
		for _, seg := range a.Decision.Segments {
			for _, rel := range seg.ProtectedWrites {
				approved = append(approved, filepath.Join(root, filepath.FromSlash(rel)))
			}
		}
		if len(approved) == 0 {
			return none
		}
		return func(p string) bool {
			for _, w := range approved {
				if writesPath(w, p) {
					return true
				}
			}
			return false
		}
	}
	return none
}

// writesPath reports whether a visible write of w accounts for a change of
// p: p is w, lies in w (a folder written whole), or is a folder w lies in
// that the write made (a new parent).
func writesPath(w, p string) bool {
	if samePath(w, p) {
		return true
	}
	sep := string(filepath.Separator)
	if strings.HasPrefix(p, w+sep) {
		return true
	}
	if strings.HasPrefix(w, p+sep) {
		info, err := os.Lstat(p)
		return err == nil && info.IsDir()
	}
	return false
}
