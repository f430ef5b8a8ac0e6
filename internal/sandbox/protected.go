package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// protectedNames are the entries of a scope root that are bound read-only
// over it, lower-case (matched whatever their case, as the policy's
// table, policy.ProtectedTable, matches them): the project's permissions,
// git's repository, the hook managers' files and the agents'
// configuration and instructions. A name ending in "/" holds protected
// entries below it, listed in protectedBelow.
var protectedNames = map[string]bool{
	"permissions.json": true, ".git": true, ".gitmodules": true, ".githooks": true, ".husky": true,
	".pre-commit-config.yaml": true, "lefthook.yml": true, "lefthook.yaml": true, ".lefthook.yml": true,
	"lefthook-local.yml": true, ".codex": true, ".gemini": true, ".mcp.json": true,
	"claude.md": true, "agents.md": true, "gemini.md": true, ".cursorrules": true,
	".claude/": true, ".cursor/": true,
}

// protectedBelow are the protected entries of the folders above, lower-case;
// a trailing "*" matches any end.
var protectedBelow = map[string][]string{
	".claude": {"settings*", "agents", "skills", "commands", "hooks"},
	".cursor": {"hooks.json", "rules"},
}

// ProtectedPath is a path a command under a scope root gets read-only
// (unless Spec.MayWrite says otherwise).
type ProtectedPath struct {
	// Path is absolute, symlinks resolved.
	Path string
	// Why names it: "permissions.json", ".git", "the git folder .git names".
	Why string
}

// Protected lists the protected paths of the scope root root (resolved):
// its protected entries (protectedNames), each with its symlinks
// resolved — one whose target is outside root binds nothing, so a
// symlink never brings a path outside the scope into the sandbox —, and,
// when .git is a gitfile (a worktree), the git folder it names and that
// folder's commondir, which are outside root by design: they are bound
// read-only so that git works, and only when they are git folders (they
// hold HEAD).
func Protected(root string) ([]ProtectedPath, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, &Error{Reason: "listing the scope root", Err: err}
	}
	var out []ProtectedPath
	addIn := func(p, why string) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil || !within(r, root) {
			return // dangling, or a way out of the scope: nothing to bind
		}
		out = append(out, ProtectedPath{Path: r, Why: why})
	}
	for _, e := range ents {
		name := strings.ToLower(e.Name())
		p := filepath.Join(root, e.Name())
		switch {
		case protectedNames[name]:
			addIn(p, e.Name())
			if name == ".git" && e.Type().IsRegular() {
				out = append(out, gitfileDirs(root, p)...)
			}
		case protectedNames[name+"/"]:
			sub, err := os.ReadDir(p)
			if err != nil {
				continue
			}
			for _, se := range sub {
				for _, pat := range protectedBelow[name] {
					if ok, _ := filepath.Match(pat, strings.ToLower(se.Name())); ok {
						addIn(filepath.Join(p, se.Name()), e.Name()+"/"+se.Name())
					}
				}
			}
		}
	}
	return out, nil
}

// gitfileDirs are the git folder a gitfile names ("gitdir: X", relative
// to the root) and its commondir, resolved, when they are git folders.
func gitfileDirs(root, gitfile string) []ProtectedPath {
	b, err := os.ReadFile(gitfile)
	if err != nil {
		return nil
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	if !ok {
		return nil
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	gd, ok := gitFolder(dir)
	if !ok {
		return nil
	}
	var out []ProtectedPath
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gd, common)
		}
		// The common folder first: the worktree's own (usually
		// <repo>/.git/worktrees/<name>, inside it) is bound over it.
		if cd, ok := gitFolder(common); ok {
			out = append(out, ProtectedPath{Path: cd, Why: fmt.Sprintf("the common git folder of %s", gd)})
		}
	}
	return append(out, ProtectedPath{Path: gd, Why: "the git folder .git names"})
}

// gitFolder resolves dir and reports whether it is a git folder (it holds
// HEAD).
func gitFolder(dir string) (string, bool) {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(filepath.Join(r, "HEAD")); err != nil || fi.IsDir() {
		return "", false
	}
	return r, true
}
