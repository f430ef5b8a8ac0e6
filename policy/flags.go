package policy

// The flags of a card (DESIGN §6.4): what each segment of a command
// touches, in plain words, whatever its verdict. They explain; they never
// decide: a segment an allow pattern approves may still read the home
// folder, and its card says so.

import (
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"strings"

	"github.com/brabo-dev/brabo"
)

// networkVerbs are programs whose every run talks to the network.
var networkVerbs = shell.Set("curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat",
	"telnet", "ftp", "aria2c", "http", "https", "xh", "ssh-copy-id", "mosh", "lftp")

// networkSubcommands are the tool subcommands that talk to the network.
var networkSubcommands = map[string]map[string]bool{
	"git":     shell.Set("push", "pull", "fetch", "clone", "ls-remote", "remote", "submodule", "send-email", "request-pull"),
	"gh":      nil, // every gh command talks to the provider
	"glab":    nil,
	"docker":  shell.Set("pull", "push", "login", "search"),
	"podman":  shell.Set("pull", "push", "login", "search"),
	"npm":     shell.Set("install", "i", "ci", "add", "update", "publish", "unpublish", "login", "view", "info", "exec", "x"),
	"pnpm":    shell.Set("install", "i", "add", "update", "up", "publish", "dlx", "fetch"),
	"yarn":    shell.Set("install", "add", "upgrade", "up", "publish", "dlx", "npm"),
	"pip":     shell.Set("install", "download"),
	"pip3":    shell.Set("install", "download"),
	"uv":      shell.Set("pip", "add", "sync", "tool", "run"),
	"go":      shell.Set("get", "install"),
	"cargo":   shell.Set("install", "publish", "fetch", "update", "search", "login", "yank", "owner"),
	"apt":     shell.Set("install", "update", "upgrade", "download"),
	"apt-get": shell.Set("install", "update", "upgrade", "dist-upgrade", "download", "source"),
	"brew":    shell.Set("install", "update", "upgrade", "fetch"),
}

// npxLike are package runners: they fetch what they run when it is not
// installed.
var npxLike = shell.Set("npx", "bunx")

// deleteVerbs delete what their operands name.
var deleteVerbs = shell.Set("rm", "rmdir", "unlink", "shred", "srm")

// segmentFlags returns what one segment touches: a path outside the
// project or in the home folder, the network, a privilege gain, a
// deletion, a forced push. The protected files it reaches are added by
// protectedHits.
func segmentFlags(s *shell.Segment, toks []string, p Protect, root string) []brabo.Flag {
	var flags []brabo.Flag
	add := func(k brabo.FlagKind, what string) {
		flags = brabo.AddFlag(flags, brabo.Flag{Kind: k, What: clipFlag(what)})
	}
	if len(toks) == 0 {
		return nil
	}
	verb := shell.Base(toks[0])
	home := path.Clean(p.Home)
	// Where it runs, and the paths it names.
	if root != "" {
		for _, d := range s.Cwds.Dirs {
			if !shell.Within(d, root) {
				add(brabo.FlagOutside, "runs in "+d)
			}
		}
	}
	homeWord := func(t string) bool {
		if t == "~" || strings.HasPrefix(t, "~/") || strings.Contains(t, "$HOME") || strings.Contains(t, "${HOME") {
			return true
		}
		if p.Home == "" || home == "/" {
			return false
		}
		if v, ok := strings.CutPrefix(t, "-"); ok {
			if _, after, cut := strings.Cut(v, "="); cut {
				t = after
			}
		}
		return strings.HasPrefix(t, "/") && shell.Within(path.Clean(t), home) && (root == "" || !shell.Within(path.Clean(t), root))
	}
	for _, pw := range s.Paths {
		if pw.Implied {
			continue
		}
		switch {
		case homeWord(pw.Text):
			add(brabo.FlagHome, pw.Text)
		case root != "":
			if why := tokenOutside(pw.Text, pw.Kind, s.Cwds, root); why != "" {
				add(brabo.FlagOutside, pw.Text)
			}
		}
	}
	// A word the operand table does not place as a path may still name
	// the home folder (an unknown program's argument): say so.
	for _, t := range toks[1:] {
		if homeWord(t) {
			add(brabo.FlagHome, t)
		}
	}
	// The network.
	if e := shell.ExternalEffect(toks); e != nil {
		add(brabo.FlagNetwork, strings.Join(e.Words, " "))
	}
	switch {
	case networkVerbs[verb]:
		add(brabo.FlagNetwork, verb)
	case npxLike[verb]:
		add(brabo.FlagNetwork, verb+" (fetches what it runs)")
	default:
		if subs, ok := networkSubcommands[verb]; ok {
			if subs == nil {
				add(brabo.FlagNetwork, verb)
			}
			for _, at := range shell.SubcommandStarts(toks) {
				if subs[toks[at]] {
					add(brabo.FlagNetwork, verb+" "+toks[at])
					break
				}
			}
		}
	}
	// Privilege.
	if shell.IsPrivileged(toks) {
		add(brabo.FlagPrivilege, verb)
	}
	// Deletion, and git's forced push.
	switch {
	case deleteVerbs[verb]:
		what := verb
		for _, t := range toks[1:] {
			if t == "-r" || t == "-R" || t == "--recursive" || (strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t, "rR")) {
				what = verb + " -r (recursive)"
				break
			}
		}
		add(brabo.FlagDelete, what)
	case verb == "find":
		for _, t := range toks[1:] {
			if t == "-delete" {
				add(brabo.FlagDelete, "find -delete")
			}
		}
		for i, t := range toks[1:] {
			if (t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir") && i+2 < len(toks) && deleteVerbs[shell.Base(toks[i+2])] {
				add(brabo.FlagDelete, "find "+t+" "+shell.Base(toks[i+2]))
			}
		}
	case verb == "git":
		gitFlags(toks, add)
	}
	return flags
}

// gitFlags adds the deletions and the forced pushes of a git command.
func gitFlags(toks []string, add func(brabo.FlagKind, string)) {
	for _, at := range shell.SubcommandStarts(toks) {
		sub, rest := toks[at], toks[at+1:]
		has := func(opts ...string) bool {
			for _, t := range rest {
				for _, o := range opts {
					if t == o || (strings.HasPrefix(o, "--") && strings.HasPrefix(t, o+"=")) {
						return true
					}
				}
			}
			return false
		}
		switch sub {
		case "clean":
			add(brabo.FlagDelete, "git clean")
		case "reset":
			if has("--hard") {
				add(brabo.FlagDelete, "git reset --hard (drops uncommitted changes)")
			}
		case "branch":
			if has("-D", "-d", "--delete") {
				add(brabo.FlagDelete, "git branch --delete")
			}
		case "push":
			if has("-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror") {
				add(brabo.FlagForce, "git push --force")
			}
			for _, t := range rest {
				if strings.HasPrefix(t, "+") && len(t) > 1 {
					add(brabo.FlagForce, "git push "+t)
				}
				if strings.HasPrefix(t, ":") && len(t) > 1 {
					add(brabo.FlagDelete, "git push "+t+" (deletes the remote branch)")
				}
			}
			if has("-d", "--delete", "--prune") {
				add(brabo.FlagDelete, "git push --delete")
			}
		case "checkout", "restore":
			if has("-f", "--force") || (sub == "checkout" && has("--")) {
				add(brabo.FlagDelete, "git "+sub+" (drops uncommitted changes)")
			}
		case "stash":
			if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
				add(brabo.FlagDelete, "git stash "+rest[0])
			}
		default:
			continue
		}
		return
	}
}

// clipFlag keeps a flag's detail short: it names, the card shows the
// segment whole.
func clipFlag(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
