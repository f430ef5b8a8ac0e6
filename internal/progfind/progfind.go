// Package progfind resolves the program names of a command line in the
// environment the command will run in, for policy.Input.Programs: Decide
// is pure and compares what the names resolve to; this package is where
// the disk is read (DESIGN §10, "Program identity").
package progfind

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo/policy"
)

// StandardPATH is the PATH a sandboxed command runs with when the caller
// knows no other.
const StandardPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Env is where a command will run.
type Env struct {
	// PATH is the command's search path ("" is StandardPATH).
	PATH string
	// Cwd is the absolute directory the command starts in: relative
	// program paths and empty or relative PATH entries are taken from it.
	Cwd string
	// Writable are the folders the agent can write: the project, its
	// caches, the temp folders. A program in one, or a name that an entry
	// in one could shadow, is Writable.
	Writable []string
}

// Resolve returns what each name resolves to in env. A name with a "/" is
// a path, made absolute from env.Cwd; a bare name is looked up in PATH as
// bash does (the first entry holding an executable file). git also gets
// its exec-path, the folder of its helpers.
func Resolve(names []string, env Env) map[string]policy.Program {
	if env.PATH == "" {
		env.PATH = StandardPATH
	}
	out := make(map[string]policy.Program, len(names))
	for _, n := range names {
		if n == "" {
			continue
		}
		var p policy.Program
		if strings.Contains(n, "/") {
			p = env.file(env.abs(n))
		} else {
			p = env.lookPath(n)
		}
		if n == "git" && p.Real != "" {
			p.ExecPath = execPath(p.Real)
		}
		out[n] = p
	}
	return out
}

func (e Env) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(e.Cwd, p)
}

// file describes one absolute path.
func (e Env) file(abs string) policy.Program {
	p := policy.Program{Path: abs, Writable: e.writable(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		p.Real = real
		p.Writable = p.Writable || e.writable(real)
	}
	return p
}

// lookPath finds a bare name as bash does; an entry before the match that
// the agent can write could shadow it, so the result is Writable then,
// and when nothing matches.
func (e Env) lookPath(name string) policy.Program {
	shadow := false
	for _, dir := range filepath.SplitList(e.PATH) {
		if dir == "" {
			dir = "."
		}
		dir = e.abs(dir)
		cand := filepath.Join(dir, name)
		if executable(cand) {
			p := e.file(cand)
			p.Writable = p.Writable || shadow
			return p
		}
		shadow = shadow || e.writable(dir)
	}
	return policy.Program{Writable: shadow}
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// writable reports whether p lies in a folder the agent can write.
func (e Env) writable(p string) bool {
	for _, w := range e.Writable {
		w = filepath.Clean(w)
		if w == "/" || w == "." || w == "" {
			continue
		}
		if p == w || strings.HasPrefix(p, w+"/") {
			return true
		}
	}
	return false
}

// execPath finds git's helper folder next to its binary (prefix/bin/git →
// prefix/lib/git-core or prefix/libexec/git-core), without running git.
func execPath(real string) string {
	prefix := filepath.Dir(filepath.Dir(real))
	for _, c := range []string{"lib/git-core", "libexec/git-core"} {
		d := filepath.Join(prefix, c)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}

// AgentWritable is the one list of the folders an agent's command can
// write, for SafePATH and Env.Writable: the project folder root, the temp
// folders, and what the caller adds (the project's cache folder where the
// executor confines a command, brabo's own paths where the server knows
// them). The executor hands a command the PATH made from it, and the
// pipeline and brabo check resolve program names with it.
func AgentWritable(root string, more ...string) []string {
	out := []string{root, os.TempDir(), "/tmp"}
	for _, m := range more {
		if m != "" {
			out = append(out, m)
		}
	}
	return out
}

// Resolver returns what policy.Situation.Resolve calls: the names resolved
// in the PATH a command runs with (SafePATH of pathVar, which is what the
// executor hands it), with writable as what the agent can write.
func Resolver(pathVar string, writable []string) func(names []string, cwd string) map[string]policy.Program {
	return func(names []string, cwd string) map[string]policy.Program {
		return Resolve(names, Env{PATH: SafePATH(pathVar, writable), Cwd: cwd, Writable: writable})
	}
}

// SafePATH is path without the entries a command's agent could fill with
// a program of its own: empty and relative entries (they name the
// command's cwd) and every entry inside writable (the project, its cache,
// the temp folders). The executor hands a command this PATH, and the
// pipeline resolves its names in the same one, so a name resolves where
// it runs and nothing the agent writes can shadow it.
func SafePATH(path string, writable []string) string {
	e := Env{Writable: writable}
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		dir = filepath.Clean(dir)
		if e.writable(dir) {
			continue
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil && e.writable(real) {
			continue
		}
		keep = append(keep, dir)
	}
	if len(keep) == 0 {
		return StandardPATH
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}
