package pipeline

import (
	"os"
	"path/filepath"
	"strings"
)

// The whole of git's control files: what makes git run a
// program or read another repository, in every git folder a project's git
// uses — its .git, the folder a gitfile (.git as a file, "gitdir: …")
// points to, the common folder a commondir names, and the administrative
// folders of its worktrees (.git/worktrees/<name>). Each is taken before an
// action and compared after it, like every protected file.

// gitControlFiles and gitControlFolders are a git folder's control files,
// relative to it.
var (
	gitControlFiles   = []string{"config", "config.worktree", "commondir", "gitdir", "objects/info/alternates"}
	gitControlFolders = []string{"hooks", "info"}
)

// takeGitDirs takes the control files of the git folders base's .git
// leads to, other than base/.git itself (walkTree takes that one).
func (sn *snapshot) takeGitDirs(base string) {
	dotGit := filepath.Join(base, ".git")
	info, err := os.Lstat(dotGit)
	if err != nil {
		return
	}
	var dirs []string
	if info.Mode().IsRegular() {
		if target := gitfileTarget(dotGit); target != "" {
			dirs = append(dirs, target)
		}
	} else if info.IsDir() {
		dirs = append(dirs, worktreeAdmins(dotGit)...)
		if common := commonDir(dotGit); common != "" {
			dirs = append(dirs, common)
		}
	}
	for i := 0; i < len(dirs) && i < 64; i++ {
		dir := filepath.Clean(dirs[i])
		if sn.gitDirs[dir] || dir == dotGit {
			continue
		}
		sn.gitDirs[dir] = true
		sn.takeControl(dir)
		if common := commonDir(dir); common != "" {
			dirs = append(dirs, common)
		}
	}
}

// takeControl takes one git folder's control files.
func (sn *snapshot) takeControl(dir string) {
	for _, f := range gitControlFiles {
		sn.take(filepath.Join(dir, f))
	}
	for _, f := range gitControlFolders {
		sn.takeFolder(filepath.Join(dir, f))
	}
}

// covers reports whether a path lies in what the snapshot took: the
// project (its folder and worktrees) or one of the git folders it took.
func (sn *snapshot) covers(p string) bool {
	sep := string(filepath.Separator)
	if p == sn.root || strings.HasPrefix(p, sn.root+sep) {
		return true
	}
	for dir := range sn.gitDirs {
		if strings.HasPrefix(p, dir+sep) {
			return true
		}
	}
	return false
}

// gitfileTarget is the folder a gitfile names ("gitdir: <path>", relative
// to the gitfile's folder), "" when it names none.
func gitfileTarget(path string) string {
	data, err := readNoFollow(path, 4096)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if target = strings.TrimSpace(target); !ok || target == "" {
		return ""
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return filepath.Clean(target)
}

// commonDir is the folder a git folder's commondir file names (relative
// to the git folder), "" when it has none.
func commonDir(gitDir string) string {
	data, err := readNoFollow(filepath.Join(gitDir, "commondir"), 4096)
	if err != nil {
		return ""
	}
	target := strings.TrimSpace(string(data))
	if target == "" {
		return ""
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(gitDir, target)
	}
	return filepath.Clean(target)
}

// worktreeAdmins are the administrative folders of a repository's
// worktrees (.git/worktrees/<name>).
func worktreeAdmins(dotGit string) []string {
	entries, err := os.ReadDir(filepath.Join(dotGit, "worktrees"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(dotGit, "worktrees", e.Name()))
		}
	}
	return out
}

// worktreeAdminMoved reports whether p lies in an administrative folder of
// the project's worktrees (.git/worktrees/<name>) that exists in only one
// of the two snapshots: a worktree added or removed meanwhile (brabo's own
// bookkeeping, as for the worktree folders), not a change of one.
func (sn *snapshot) worktreeAdminMoved(now *snapshot, p string) bool {
	admins := filepath.Join(sn.root, ".git", "worktrees") + string(filepath.Separator)
	rest, ok := strings.CutPrefix(p, admins)
	if !ok {
		return false
	}
	name, _, _ := strings.Cut(rest, string(filepath.Separator))
	dir := filepath.Join(sn.root, ".git", "worktrees", name)
	return sn.gitDirs[dir] != now.gitDirs[dir]
}
