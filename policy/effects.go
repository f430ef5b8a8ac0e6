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
		effects = append(effects, effect{words: []string{"terraform", sub}})
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

// subcommandWords returns the words after a tool's global options: the
// subcommand first. It also reports the index in tokens where they start.
func subcommandWords(tool string, tokens []string) ([]string, int) {
	globals := toolGlobals[tool]
	i := 1
	if tool == "cargo" && i < len(tokens) && strings.HasPrefix(tokens[i], "+") {
		i++ // +toolchain
	}
	for i < len(tokens) {
		t := tokens[i]
		if t == "--" {
			i++
			break
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		if globals[t] {
			i++
		}
		i++
	}
	if i > len(tokens) {
		i = len(tokens)
	}
	return tokens[i:], i
}

// externalEffect returns the effect the tokens of one segment would have
// outside the machine, or nil. The verb is compared by basename, and
// runners of package binaries (npx, pnpm exec, …) are looked through.
func externalEffect(tokens []string) *effect {
	if len(tokens) == 0 {
		return nil
	}
	tool := base(tokens[0])
	if inner := packageRunnerProgram(tool, tokens); inner != nil {
		return externalEffect(inner)
	}
	if _, ok := toolGlobals[tool]; !ok {
		return nil
	}
	rest, _ := subcommandWords(tool, tokens)
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
		sub, _ := subcommandWords(tool, tokens)
		if len(sub) == 0 || (sub[0] != "exec" && sub[0] != "dlx" && sub[0] != "x") {
			return nil
		}
		rest = sub[1:]
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
			return effectPositionOpaque(tool, t.text, words[i+1:])
		}
		if toolGlobals[tool][t.text] {
			i++ // its value, whatever it is, is not the subcommand
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
