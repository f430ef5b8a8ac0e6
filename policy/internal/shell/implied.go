package shell

// The files a program writes without naming them (DESIGN §9, "Protected
// paths"), moved from args.go.

import (
	"path"
	"strings"
)

// impliedWrites are the protected files a program writes without naming
// them: git's config and hooks, the hook managers' files, the user's git
// config (DESIGN §9, "Protected paths"). They join the segment's paths as
// written, so the protected rule sees them like a named target.
func impliedWrites(prog string, tokens []string, args []argument) []pathWord {
	w := func(ps ...string) []pathWord {
		out := make([]pathWord, len(ps))
		for i, p := range ps {
			out[i] = pathWord{Text: p, Kind: ArgWrite}
		}
		return out
	}
	if inner := packageRunnerProgram(prog, tokens); inner != nil {
		prog, tokens = Base(inner[0]), inner
	}
	var out []pathWord
	switch prog {
	case "cp", "mv", "install", "ln", "rsync":
		out = intoDirectory(args)
	}
	switch prog {
	case "pre-commit":
		if len(tokens) > 1 && strings.HasPrefix(tokens[1], "install") {
			return append(out, w(".git/hooks/")...)
		}
	case "husky":
		if len(tokens) == 1 || tokens[1] == "install" || tokens[1] == "init" || tokens[1] == "add" || tokens[1] == "set" {
			return append(out, w(".husky/", ".git/config")...)
		}
	case "lefthook":
		if len(tokens) > 1 && (tokens[1] == "install" || tokens[1] == "add") {
			return append(out, w(".git/hooks/")...)
		}
	case "cp":
		for _, t := range tokens[1:] {
			if t == "-s" || t == "-l" || t == "-P" || t == "--link" || t == "--symbolic-link" || t == "--no-dereference" ||
				strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t, "slPd") {
				for _, a := range args {
					if !a.option && (a.w.Static || globOnly(a.w)) && a.kind == argPath {
						out = append(out, pathWord{Text: a.w.Text, Kind: ArgWrite})
					}
				}
				return out
			}
		}
	case "dd":
		for _, t := range tokens[1:] {
			if v, ok := strings.CutPrefix(t, "of="); ok {
				out = append(out, pathWord{Text: v, Kind: ArgWrite})
			}
		}
		return out
	case "git":
		return gitImpliedWrites(args)
	}
	return out
}

// intoDirectory returns, for a copy or a move, the file each source
// becomes when the destination is a folder (cp x/permissions.json . writes
// ./permissions.json): whether it is one, the line does not say, so both
// readings count.
func intoDirectory(args []argument) []pathWord {
	dest := ""
	var sources []string
	for _, a := range args {
		switch {
		case a.option && a.kind == ArgWrite && a.value != "":
			dest = a.value // -t DIR glued, --target-directory=DIR
		case !a.option && a.kind == ArgWrite && !a.optionPlace:
			dest = a.w.Text // the value of -t DIR
		case !a.option && a.w.Static:
			sources = append(sources, a.w.Text)
		}
	}
	if dest == "" && len(sources) > 1 {
		dest, sources = sources[len(sources)-1], sources[:len(sources)-1]
	}
	if dest == "" {
		return nil
	}
	out := make([]pathWord, 0, len(sources))
	for _, src := range sources {
		out = append(out, pathWord{Text: path.Join(dest, path.Base(src)), Kind: ArgWrite})
	}
	return out
}

// gitImpliedWrites are the files a git subcommand writes without naming
// them: its config for config, remote and submodule; .git for worktree,
// init and lfs install; the user's config for config --global.
func gitImpliedWrites(args []argument) []pathWord {
	sub := -1
	for i, a := range args {
		if a.subcommand {
			sub = i
			break
		}
	}
	if sub < 0 {
		return nil
	}
	rest := args[sub+1:]
	var ops []string
	var opts []string
	for _, a := range rest {
		if a.option {
			opts = append(opts, a.w.Text)
		} else {
			ops = append(ops, a.w.Text)
		}
	}
	has := func(names ...string) bool {
		for _, o := range opts {
			name, _, _ := strings.Cut(o, "=")
			if ContainsString(names, name) {
				return true
			}
		}
		return false
	}
	write := func(ps ...string) []pathWord {
		out := make([]pathWord, len(ps))
		for i, p := range ps {
			out[i] = pathWord{Text: p, Kind: ArgWrite}
		}
		return out
	}
	switch args[sub].w.Text {
	case "config":
		sets := len(ops) >= 2 || has("--unset", "--unset-all", "--add", "--replace-all", "--rename-section",
			"--remove-section", "-e", "--edit") || len(ops) > 0 && ContainsString([]string{"set", "unset",
			"rename-section", "remove-section", "edit"}, ops[0])
		if len(ops) > 0 && (ops[0] == "get" || ops[0] == "list") || has("--get", "--get-all", "--get-regexp",
			"--get-urlmatch", "--list", "-l", "--show-origin", "--show-scope", "--get-color", "--get-colorbool") {
			sets = false
		}
		if !sets {
			return nil
		}
		switch {
		case has("--global"):
			return write("~/.gitconfig")
		case has("--system"):
			return write("/etc/gitconfig")
		case has("--worktree"):
			return write(".git/config.worktree")
		}
		return write(".git/config")
	case "remote":
		if len(ops) > 0 && ContainsString([]string{"add", "set-url", "rename", "remove", "rm", "set-head",
			"set-branches", "prune", "update"}, ops[0]) {
			return write(".git/config")
		}
	case "submodule":
		if len(ops) == 0 || ops[0] != "status" && ops[0] != "summary" {
			return write(".git/config", ".gitmodules")
		}
	case "worktree":
		if len(ops) > 0 && ops[0] != "list" {
			return write(".git/worktrees/")
		}
	case "clean":
		if len(ops) == 0 {
			// Every untracked file under the folder it runs in: the
			// agents' local settings and instructions among them.
			return write(".")
		}
	case "init", "clone":
		return write(".git/")
	case "lfs":
		if len(ops) > 0 && (ops[0] == "install" || ops[0] == "uninstall" || ops[0] == "update") {
			return write(".git/hooks/", "~/.gitconfig")
		}
	}
	return nil
}
