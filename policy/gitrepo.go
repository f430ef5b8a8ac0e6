package policy

import "strings"

// git's repository operands: a remote, a clone's
// source, a fetch's repository or an option's repository can be a folder
// on this machine, and git runs git-upload-pack in it (git remote show
// ../outside/remote.git). In those places a local path is checked by the
// path scope like any other; a remote's name or a network URL is not a
// path.

// gitRepoSubs are the subcommands whose operands may name a repository.
var gitRepoSubs = set("fetch", "pull", "push", "ls-remote", "clone", "remote", "submodule", "archive", "bundle", "request-pull")

// gitRepoOptions take a repository or a git folder as their value.
var gitRepoOptions = set("--reference", "--reference-if-able", "--separate-git-dir", "--remote", "--git-dir",
	"--work-tree", "--shared-repository-from")

// gitRepoPaths returns the local paths a git segment's repository
// operands and options name.
func gitRepoPaths(args []argument) []pathWord {
	var out []pathWord
	sub := ""
	for i := range args {
		a := &args[i]
		if a.subcommand {
			sub = a.w.text
			continue
		}
		if !a.w.static {
			continue
		}
		t := a.w.text
		if a.option {
			name, v, glued := strings.Cut(t, "=")
			if glued && gitRepoOptions[name] {
				if p, ok := localRepo(v); ok {
					out = append(out, pathWord{text: p, kind: argPath})
				}
			} else if gitRepoOptions[name] && i+1 < len(args) && args[i+1].w.static {
				if p, ok := localRepo(args[i+1].w.text); ok {
					out = append(out, pathWord{text: p, kind: argPath})
				}
			}
			continue
		}
		if sub == "" || !gitRepoSubs[sub] {
			continue
		}
		if p, ok := localRepo(t); ok {
			out = append(out, pathWord{text: p, kind: argPath})
		}
	}
	return out
}

// localRepo returns the path a repository word names on this machine, or
// false for a remote's name and a network URL: an absolute path, one
// starting with . or ~, a file:// URL, or a word with a / and no : that
// git would read as a folder.
func localRepo(t string) (string, bool) {
	if rest, ok := strings.CutPrefix(t, "file://"); ok {
		if rest == "" {
			return "/", true
		}
		if !strings.HasPrefix(rest, "/") {
			// file://host/path: the host is ignored for a local path.
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				rest = rest[i:]
			} else {
				rest = "/"
			}
		}
		return rest, true
	}
	switch {
	case t == "":
		return "", false
	case strings.HasPrefix(t, "/"), strings.HasPrefix(t, "."), strings.HasPrefix(t, "~"):
		return t, true
	case strings.Contains(t, "://"):
		return "", false
	case strings.Contains(t, ":"):
		// host:path is ssh; a : after the first / is a local path.
		if slash := strings.IndexByte(t, '/'); slash >= 0 && slash < strings.IndexByte(t, ':') {
			return t, true
		}
		return "", false
	case strings.Contains(t, "/"):
		return t, true
	}
	return "", false
}
