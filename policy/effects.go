package policy

import "strings"

// toolGlobals lists, per tool with external-effect subcommands, the global
// options that take a value as the next word; every other word starting
// with '-' before the subcommand is skipped alone (DESIGN §4.6).
var toolGlobals = map[string]map[string]bool{
	"git": set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
		"--super-prefix", "--list-cmds", "--attr-source"),
	"gh":   set("-R", "--repo", "--hostname"),
	"glab": set("-R", "--repo", "-g", "--group"),
	"kubectl": set("-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user",
		"-s", "--server", "--token", "--as", "--as-group", "--certificate-authority",
		"--client-certificate", "--client-key", "--request-timeout", "--cache-dir", "-v"),
	"helm": set("-n", "--namespace", "--kube-context", "--kubeconfig", "--registry-config",
		"--repository-config", "--repository-cache", "--kube-apiserver", "--kube-as-user",
		"--kube-as-group", "--kube-token", "--kube-ca-file", "--burst-limit"),
	"terraform": set(),
	"docker": set("-H", "--host", "--context", "-c", "--config", "-l", "--log-level",
		"--tlscacert", "--tlscert", "--tlskey"),
	"npm":   set("-w", "--workspace", "--prefix", "-C", "--userconfig", "--loglevel"),
	"pnpm":  set("-w", "--workspace", "--prefix", "-C", "--dir", "--filter", "-F", "--loglevel"),
	"yarn":  set("-w", "--workspace", "--cwd", "--prefix"),
	"cargo": set("-Z", "--config", "--manifest-path", "-C", "--color"),
	// Infrastructure, container registries, package publishing and
	// release tools.
	"tofu":       set(),
	"pulumi":     set("-C", "--cwd", "-s", "--stack", "--color", "-v", "--verbose"),
	"podman":     set("--url", "--connection", "-c", "--root", "--runroot", "--storage-driver", "--log-level", "--identity", "--cgroup-manager"),
	"skopeo":     set("--override-arch", "--override-os", "--override-variant", "--registries-conf", "--policy", "--tmpdir", "--command-timeout"),
	"buildah":    set("--root", "--runroot", "--storage-driver", "--log-level", "--registries-conf"),
	"poetry":     set("-C", "--directory", "-P", "--project"),
	"twine":      set(),
	"gem":        set(),
	"goreleaser": set(),
}

// effect is one external-effect command: the tool, its subcommand words,
// and, for git and the providers, the typed action to use instead.
type effect struct {
	words []string
	typed string
	// when, if set, must also hold of the words after the subcommand.
	when func(rest []string) bool
}

var effects = []effect{
	{words: []string{"git", "push"}, typed: "git_push"},
	{words: []string{"git", "send-pack"}, typed: "git_push"},
	{words: []string{"git", "remote", "add"}},
	{words: []string{"git", "remote", "set-url"}},
	{words: []string{"git", "merge"}, typed: "git_merge"},
	{words: []string{"git", "svn", "dcommit"}, typed: "git_push"},
	{words: []string{"git", "p4", "submit"}, typed: "git_push"},
	{words: []string{"git", "send-email"}},
	{words: []string{"git", "imap-send"}},
	{words: []string{"git", "lfs", "push"}, typed: "git_push"},
	{words: []string{"gh", "pr", "create"}, typed: "pr_open"},
	{words: []string{"gh", "pr", "merge"}, typed: "git_merge"},
	{words: []string{"gh", "release", "create"}},
	{words: []string{"gh", "workflow", "run"}},
	{words: []string{"gh", "api"}, when: writingAPICall},
	{words: []string{"glab", "mr", "create"}, typed: "pr_open"},
	{words: []string{"glab", "mr", "merge"}, typed: "git_merge"},
	{words: []string{"glab", "release", "create"}},
	{words: []string{"glab", "api"}, when: writingAPICall},
	{words: []string{"docker", "push"}},
	{words: []string{"docker", "image", "push"}},
	{words: []string{"docker", "manifest", "push"}},
	{words: []string{"docker", "buildx", "build"}, when: pushingBuild},
	{words: []string{"npm", "publish"}},
	{words: []string{"npm", "unpublish"}},
	{words: []string{"npm", "deprecate"}},
	{words: []string{"pnpm", "publish"}},
	{words: []string{"yarn", "publish"}},
	{words: []string{"yarn", "npm", "publish"}},
	{words: []string{"cargo", "publish"}},
	{words: []string{"cargo", "yank"}},
	{words: []string{"cargo", "owner"}},
	{words: []string{"terraform", "state", "rm"}},
	{words: []string{"terraform", "state", "mv"}},
	{words: []string{"terraform", "state", "push"}},
	{words: []string{"tofu", "state", "rm"}},
	{words: []string{"tofu", "state", "mv"}},
	{words: []string{"tofu", "state", "push"}},
	{words: []string{"podman", "push"}},
	{words: []string{"podman", "image", "push"}},
	{words: []string{"podman", "manifest", "push"}},
	{words: []string{"skopeo", "copy"}},
	{words: []string{"skopeo", "sync"}},
	{words: []string{"skopeo", "delete"}},
	{words: []string{"buildah", "push"}},
	{words: []string{"buildah", "manifest", "push"}},
	{words: []string{"poetry", "publish"}},
	{words: []string{"twine", "upload"}},
	{words: []string{"gem", "push"}},
	{words: []string{"gem", "yank"}},
	{words: []string{"gem", "owner"}},
	{words: []string{"gh", "release", "upload"}},
	{words: []string{"gh", "release", "edit"}},
	{words: []string{"gh", "release", "delete"}},
	{words: []string{"goreleaser", "release"}},
	{words: []string{"goreleaser", "publish"}},
	{words: []string{"goreleaser", "announce"}},
}

func init() {
	for _, sub := range []string{"apply", "create", "delete", "patch", "replace", "edit", "scale",
		"set", "rollout", "run", "exec", "label", "annotate", "drain", "cordon", "uncordon",
		"taint", "expose", "autoscale", "cp"} {
		effects = append(effects, effect{words: []string{"kubectl", sub}})
	}
	for _, sub := range []string{"install", "upgrade", "uninstall", "delete", "rollback", "push"} {
		effects = append(effects, effect{words: []string{"helm", sub}})
	}
	for _, sub := range []string{"apply", "destroy", "import", "taint", "untaint", "force-unlock"} {
		effects = append(effects, effect{words: []string{"terraform", sub}}, effect{words: []string{"tofu", sub}})
	}
	for _, sub := range []string{"up", "update", "destroy", "refresh", "import", "watch", "cancel"} {
		effects = append(effects, effect{words: []string{"pulumi", sub}})
	}
}

// privileged are the verbs that gain privilege, matched by basename.
var privileged = set("sudo", "doas", "su", "pkexec", "run0")

// writingAPICall reports whether a `gh api` / `glab api` call writes: a
// method other than GET, or fields (which make the call a POST).
func writingAPICall(rest []string) bool {
	for i, t := range rest {
		switch {
		case t == "-X" || t == "--method":
			if i+1 >= len(rest) || !strings.EqualFold(rest[i+1], "GET") {
				return true
			}
		case strings.HasPrefix(t, "--method="):
			if !strings.EqualFold(strings.TrimPrefix(t, "--method="), "GET") {
				return true
			}
		case strings.HasPrefix(t, "-X") && len(t) > 2:
			if !strings.EqualFold(t[2:], "GET") {
				return true
			}
		case t == "-f" || t == "-F" || t == "--field" || t == "--raw-field" || t == "--input",
			strings.HasPrefix(t, "--field="), strings.HasPrefix(t, "--raw-field="),
			strings.HasPrefix(t, "--input="), strings.HasPrefix(t, "-f") && len(t) > 2,
			strings.HasPrefix(t, "-F") && len(t) > 2:
			return true
		}
	}
	return false
}

func pushingBuild(rest []string) bool {
	for i, t := range rest {
		if t == "--push" || strings.HasPrefix(t, "--push=") {
			return true
		}
		out := ""
		if t == "--output" || t == "-o" {
			if i+1 < len(rest) {
				out = rest[i+1]
			}
		} else if strings.HasPrefix(t, "--output=") {
			out = strings.TrimPrefix(t, "--output=")
		}
		if strings.Contains(out, "type=registry") || strings.Contains(out, "push=true") {
			return true
		}
	}
	return false
}

// subcommandStarts returns every index of tokens at which a tool's
// subcommand may start once its leading options are skipped. An option
// brabo does not know may or may not take the next word as its value, so
// both readings are kept (npm --registry URL publish: URL, then publish):
// the checks that must not miss a subcommand (deny, ask, the external
// effect cap) look at all of them. The last index is the only reading left
// when the options end: the first word that no option can have taken.
func subcommandStarts(tokens []string) []int {
	var out []int
	if len(tokens) == 0 {
		return nil
	}
	known := toolGlobals[base(tokens[0])]
	i := 1
	if i < len(tokens) && base(tokens[0]) == "cargo" && strings.HasPrefix(tokens[i], "+") {
		i++ // cargo +toolchain
	}
	for i < len(tokens) {
		t := tokens[i]
		if t == "--" {
			if i+1 < len(tokens) {
				out = append(out, i+1)
			}
			return out
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			return append(out, i)
		}
		// An option. A known one that takes a value takes the next word;
		// for any other, the next word, if it is not an option itself, may
		// be its value or the subcommand.
		if known[t] {
			i += 2
			continue
		}
		if i+1 < len(tokens) && !strings.HasPrefix(tokens[i+1], "-") && !strings.Contains(t, "=") {
			out = append(out, i+1)
			i += 2
			continue
		}
		i++
	}
	return out
}

// externalEffect returns the effect the tokens of one segment would have
// outside the machine, or nil. The verb is compared by basename, every
// place the subcommand may start is tried (subcommandStarts), and runners
// of package binaries (npx, pnpm exec, …) are looked through.
func externalEffect(tokens []string) *effect {
	if len(tokens) == 0 {
		return nil
	}
	tool := base(tokens[0])
	if inner := packageRunnerProgram(tool, tokens); inner != nil {
		if e := externalEffect(inner); e != nil {
			return e
		}
	}
	if _, ok := toolGlobals[tool]; !ok {
		return nil
	}
	for _, at := range subcommandStarts(tokens) {
		if e := effectAt(tool, tokens[at:]); e != nil {
			return e
		}
	}
	return nil
}

// effectAt matches the words from a subcommand on against the effects of
// tool.
func effectAt(tool string, rest []string) *effect {
	for k := range effects {
		e := &effects[k]
		if e.words[0] != tool || len(rest) == 0 || rest[0] != e.words[1] {
			continue
		}
		after := rest[1:]
		if len(e.words) == 3 {
			j := firstNonFlag(after)
			if j < 0 || after[j] != e.words[2] {
				continue
			}
			after = after[j+1:]
		}
		if e.when == nil || e.when(after) {
			return e
		}
	}
	return nil
}

// embeddedEffect finds an external-effect or privileged command written
// inside the words of a program brabo does not know (flock f git push,
// some-runner sudo x): such a program may run them, and the cap's promise
// of a human stop must hold for what it cannot see run.
func embeddedEffect(tokens []string) (string, bool) {
	if len(tokens) < 2 {
		return "", false
	}
	if _, known := programs[base(tokens[0])]; known {
		return "", false
	}
	if _, wrapper := wrappers[base(tokens[0])]; wrapper || isShell(base(tokens[0])) {
		return "", false // their program is a segment of its own
	}
	for i := 1; i < len(tokens); i++ {
		if privileged[base(tokens[i])] {
			return strings.Join(tokens[i:], " "), true
		}
		if _, ok := toolGlobals[base(tokens[i])]; ok {
			if e := externalEffect(tokens[i:]); e != nil {
				return strings.Join(tokens[i:], " "), true
			}
		}
	}
	return "", false
}

func firstNonFlag(words []string) int {
	for i, w := range words {
		if !strings.HasPrefix(w, "-") {
			return i
		}
	}
	return -1
}

// packageRunnerProgram returns the program a package runner would run
// (npx x, pnpm exec x, pnpm dlx x, npm exec x, yarn dlx x, yarn exec x,
// bunx x), or nil when tokens are not such a call.
func packageRunnerProgram(tool string, tokens []string) []string {
	rest := tokens[1:]
	switch tool {
	case "npx", "bunx":
	case "pnpm", "npm", "yarn":
		found := false
		for _, at := range subcommandStarts(tokens) {
			if sub := tokens[at]; sub == "exec" || sub == "dlx" || sub == "x" {
				rest, found = tokens[at+1:], true
				break
			}
		}
		if !found {
			return nil
		}
	default:
		return nil
	}
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		if t == "--" {
			rest = rest[i+1:]
			break
		}
		if !strings.HasPrefix(t, "-") {
			rest = rest[i:]
			break
		}
		if t == "-p" || t == "--package" {
			i++
		}
		if i == len(rest)-1 {
			return nil
		}
	}
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return nil
	}
	return rest
}

// externalToolOpaque reports why a segment of a tool with external-effect
// subcommands cannot be judged: its subcommand position holds an expansion,
// or git is given configuration that can run anything.
func externalToolOpaque(s *segment) string {
	return toolOpaque(s.words)
}

// toolOpaque is externalToolOpaque on the words of a program, verb first.
func toolOpaque(words []word) string {
	tool := base(words[0].text)
	if tool == "npx" || tool == "bunx" {
		return runnerOpaque(tool, words[1:])
	}
	if _, ok := toolGlobals[tool]; !ok {
		return ""
	}
	for i := 1; i < len(words); i++ {
		t := words[i]
		if !t.static {
			return tool + ": the subcommand position holds an expansion: " + t.text
		}
		if tool == "git" && (t.text == "-c" || strings.HasPrefix(t.text, "-c") ||
			strings.HasPrefix(t.text, "--config-env") || strings.HasPrefix(t.text, "--exec-path=")) {
			return "git " + t.text + ": configuration and aliases given on the command line can run anything"
		}
		if tool == "cargo" && i == 1 && strings.HasPrefix(t.text, "+") {
			continue // +toolchain
		}
		if !strings.HasPrefix(t.text, "-") {
			// the subcommand
			if (tool == "npm" || tool == "pnpm" || tool == "yarn") && (t.text == "exec" || t.text == "dlx" || t.text == "x") {
				return runnerOpaque(tool+" "+t.text, words[i+1:])
			}
			if tool == "git" {
				if why := gitRunsCode(t.text, words[i+1:]); why != "" {
					return why
				}
			}
			return effectPositionOpaque(tool, t.text, words[i+1:])
		}
		if toolGlobals[tool][t.text] {
			i++ // its value, whatever it is, is not the subcommand
		}
	}
	return ""
}

// gitCommands are git's own subcommands. Any other word in the subcommand
// position is an alias (config the line may not show, which may run
// anything with "!") or a git-<name> program on PATH.
var gitCommands = set("add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch",
	"bugreport", "bundle", "cat-file", "check-attr", "check-ignore", "check-mailmap", "check-ref-format",
	"checkout", "checkout-index", "cherry", "cherry-pick", "clean", "clone", "column", "commit",
	"commit-graph", "commit-tree", "config", "count-objects", "credential", "describe", "diagnose",
	"diff", "diff-files", "diff-index", "diff-tree", "difftool", "fast-export", "fast-import", "fetch",
	"fetch-pack", "filter-branch", "fmt-merge-msg", "for-each-ref", "for-each-repo", "format-patch",
	"fsck", "gc", "get-tar-commit-id", "grep", "hash-object", "help", "hook", "imap-send", "index-pack",
	"init", "instaweb", "interpret-trailers", "lfs", "log", "ls-files", "ls-remote", "ls-tree", "mailinfo",
	"mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index", "merge-tree",
	"mergetool", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "p4", "pack-objects",
	"pack-refs", "patch-id", "prune", "prune-packed", "pull", "push", "range-diff", "read-tree", "rebase",
	"reflog", "remote", "repack", "replace", "request-pull", "rerere", "reset", "restore", "rev-list",
	"rev-parse", "revert", "rm", "send-email", "send-pack", "shortlog", "show", "show-branch",
	"show-index", "show-ref", "sparse-checkout", "stash", "status", "stripspace", "submodule", "svn",
	"switch", "symbolic-ref", "tag", "unpack-file", "unpack-objects", "update-index", "update-ref",
	"update-server-info", "var", "verify-commit", "verify-pack", "verify-tag", "version", "whatchanged",
	"worktree", "write-tree", "daemon")

// gitRunsCode says why a git subcommand runs a program the line names as a
// string, or one the configuration names: the line does not show what runs.
func gitRunsCode(sub string, rest []word) string {
	if !gitCommands[sub] {
		return "git " + sub + " is not a git command: an alias or a git-" + sub + " program runs what the line does not show"
	}
	switch sub {
	case "filter-branch", "mergetool", "daemon", "instaweb":
		return "git " + sub + " runs programs the line does not show"
	}
	for i, w := range rest {
		t := w.text
		name, _, _ := strings.Cut(t, "=")
		switch {
		case sub == "bisect" && i == 0 && t == "run",
			sub == "submodule" && t == "foreach",
			sub == "hook" && i == 0 && t == "run",
			sub == "rebase" && (t == "-x" || name == "--exec" || strings.HasPrefix(t, "-x")),
			sub == "difftool" && (t == "-x" || name == "--extcmd" || name == "--tool" || t == "-t"),
			name == "--upload-pack" || name == "--receive-pack" || name == "--exec" || name == "--template" ||
				(sub == "clone" || sub == "fetch" || sub == "pull" || sub == "ls-remote") && (t == "-u" || name == "--config" || t == "-c"):
			return "git " + sub + " " + t + " runs a program the line names as a string"
		}
	}
	return ""
}

// effectPositionOpaque reports why the words after a tool's subcommand
// hide whether the segment has an external effect: where a second word
// decides it (git remote add, gh pr create), the first word that is not a
// flag is an expansion; where the arguments decide it (gh api -X POST,
// docker buildx build --push), any of them is. An expansion anywhere else
// (git log $REF) is an ordinary argument.
func effectPositionOpaque(tool, sub string, rest []word) string {
	for k := range effects {
		e := &effects[k]
		if e.words[0] != tool || e.words[1] != sub {
			continue
		}
		if len(e.words) == 3 {
			for _, w := range rest {
				if !w.static {
					return tool + ": the subcommand position holds an expansion: " + w.text
				}
				if !strings.HasPrefix(w.text, "-") {
					break
				}
			}
		}
		if e.when != nil {
			for _, w := range rest {
				if !w.static {
					return tool + " " + sub + ": an argument that decides its effect is an expansion: " + w.text
				}
			}
		}
	}
	return ""
}

// runnerOpaque reports why the program a package runner (npx, pnpm exec,
// npm exec, yarn dlx, …) runs cannot be known: it is an expansion, or the
// runner is told to run a string in a shell (npx -c 'git push').
func runnerOpaque(runner string, rest []word) string {
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		if !t.static {
			return runner + ": the program it runs is an expansion: " + t.text
		}
		switch {
		case t.text == "--":
			if i+1 < len(rest) {
				return toolOpaque(rest[i+1:])
			}
			return ""
		case t.text == "-c" || t.text == "--call" || strings.HasPrefix(t.text, "--call=") ||
			t.text == "--shell-mode" || t.text == "-s" || t.text == "--shell":
			return runner + " " + t.text + ": runs a string in a shell"
		case t.text == "-p" || t.text == "--package":
			i++
		case strings.HasPrefix(t.text, "-"):
		default:
			return toolOpaque(rest[i:])
		}
	}
	return ""
}

// isPrivileged reports whether the verb gains privilege (by basename).
func isPrivileged(tokens []string) bool {
	return len(tokens) > 0 && privileged[base(tokens[0])]
}

// capPrefixes lists every external-effect and privileged command as tokens,
// for always-allow: a recorded unit must never be a prefix of one.
func capPrefixes() [][]string {
	out := make([][]string, 0, len(effects)+len(privileged))
	for _, e := range effects {
		out = append(out, e.words)
	}
	for p := range privileged {
		out = append(out, []string{p})
	}
	return out
}
