package policy

import (
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"strings"
)

// builtinDeny are denied even with an empty file (DESIGN §4.5): a floor,
// not a security list.
var builtinDeny = []string{"Terminal(rm -rf /)", "Terminal(rm -rf /*)", "Terminal(rm -fr /)"}

// seededReadOnly are the seeded patterns that promise reads; a segment that
// carries a mutating or code-running form does not match them (DESIGN §4.3).
var seededReadOnly = []string{
	"ls", "pwd", "find", "cat", "head", "tail", "grep", "wc", "echo",
	"git status", "git diff", "git log",
	"git branch -a", "git branch -r", "git branch -v", "git branch --list", "git branch --show-current",
	"git remote -v", "git remote show", "git worktree list", "git config --get",
	"git show", "git for-each-ref", "git ls-tree", "git rev-parse",
}

var seededBuild = []string{
	"pnpm install", "pnpm test", "npm run", "npm test", "npx vitest", "mix test", "pytest",
	"go test", "go build", "go vet", "cargo test", "cargo build", "make test",
}

// BuiltinDeny returns the patterns denied whatever the file says.
func BuiltinDeny() []string { return append([]string(nil), builtinDeny...) }

// SeedAllow returns the patterns activating execution writes into a
// project's allow list (DESIGN §4.5): reading the worktree, reading git
// history, remotes and config (anchored where a mutating sibling exists),
// and building and testing.
func SeedAllow() []string {
	out := make([]string, 0, len(seededReadOnly)+len(seededBuild))
	for _, c := range seededReadOnly {
		out = append(out, "Terminal("+c+")")
	}
	for _, c := range seededBuild {
		out = append(out, "Terminal("+c+")")
	}
	return out
}

var builtinRules = func() *Rules {
	r, err := NewRules("built-in", nil, builtinDeny, nil)
	if err != nil {
		panic(err)
	}
	return r
}()

var readOnlyContents = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range seededReadOnly {
		toks, err := patternTokens(c)
		if err != nil {
			panic(err)
		}
		m[tokenKey(toks)] = true
	}
	return m
}()

func tokenKey(toks []patternToken) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
		if t.wildcard {
			b.WriteByte('*')
		}
		b.WriteByte(0)
	}
	return b.String()
}

// isSeededReadOnly reports whether a pattern has the content of a seeded
// read-only pattern, wherever it was written from.
func isSeededReadOnly(toks []patternToken) bool { return readOnlyContents[tokenKey(toks)] }

// gitCodeRunning are git options that execute code or write files.
// -c runs code only before the subcommand (git -c k=v); after it, it is
// the subcommand's own option (git log -c, a combined diff).
var gitCodeRunning = []string{"-c", "--upload-pack", "--exec", "--config-env", "--output",
	"--ext-diff", "--exec-path", "--open-files-in-pager", "--textconv"}

var gitMutating = map[string][]string{
	"remote":   {"add", "remove", "rm", "rename", "set-url", "set-head", "set-branches", "prune", "update"},
	"worktree": {"add", "remove", "prune", "move", "lock", "unlock", "repair"},
	"config": {"--unset", "--unset-all", "--add", "--replace-all", "--rename-section",
		"--remove-section", "-e", "--edit", "set", "unset", "rename-section", "remove-section", "edit"},
}

// readOnlyViolation returns the form of s that a seeded read-only pattern
// does not cover, or "" when s only reads.
func readOnlyViolation(s *shell.Segment) string {
	switch s.Verb() {
	case "git":
		return gitReadOnlyViolation(s)
	case "find":
		for _, w := range s.Words[1:] {
			if !w.Static {
				return "an expansion after find: " + w.Text
			}
			switch {
			case w.Text == "-exec", w.Text == "-execdir", w.Text == "-ok", w.Text == "-okdir",
				w.Text == "-delete", w.Text == "-fls", strings.HasPrefix(w.Text, "-fprint"):
				return "find " + w.Text + " runs or writes"
			}
		}
	}
	return ""
}

func gitReadOnlyViolation(s *shell.Segment) string {
	if s.ProgEnv != "" {
		return "git with " + s.ProgEnv + " set by the line (GIT_* variables can run code)"
	}
	sub := ""
	positional := 0
	list := false
	words := s.Words[1:]
	if at := harmlessGlobals(s.Tokens()); at > 1 {
		words = s.Words[at:] // git --no-pager log, git -C src status
	}
	for i, w := range words {
		if !w.Static {
			return "an expansion after git: " + w.Text
		}
		t := w.Text
		for _, opt := range gitCodeRunning {
			if opt == "-c" {
				if i == 0 && strings.HasPrefix(t, "-c") {
					return "git " + t + " runs code or writes files"
				}
				continue
			}
			if t == opt || strings.HasPrefix(t, opt+"=") {
				return "git " + t + " runs code or writes files"
			}
		}
		if i == 0 {
			sub = t
			continue
		}
		for _, m := range gitMutating[sub] {
			if t == m || strings.HasPrefix(t, m+"=") {
				return "git " + sub + " " + t + " changes the repository"
			}
		}
		if sub != "branch" {
			continue
		}
		switch {
		case t == "--list" || t == "-l" || t == "-a" || t == "-r" || t == "--all" || t == "--remotes":
			list = true
		case strings.HasPrefix(t, "--"):
			name, _, _ := strings.Cut(t, "=")
			switch name {
			case "--delete", "--move", "--copy", "--force", "--set-upstream-to", "--unset-upstream",
				"--edit-description", "--track", "--no-track", "--create-reflog", "--recurse-submodules":
				return "git branch " + t + " changes the repository"
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			if strings.ContainsAny(t[1:], "dDmMcCfut") {
				return "git branch " + t + " changes the repository"
			}
			if strings.ContainsAny(t[1:], "ar") {
				list = true
			}
		default:
			positional++
		}
	}
	if sub == "branch" && positional > 0 && !list {
		return "git branch with a name creates a branch"
	}
	return ""
}

// SeedReadOnly returns the seeded patterns that only read (the worktree,
// git history, remotes and config): the starting allow list brabo init
// writes, which runs nothing the agent wrote.
func SeedReadOnly() []string {
	out := make([]string, 0, len(seededReadOnly))
	for _, c := range seededReadOnly {
		out = append(out, "Terminal("+c+")")
	}
	return out
}
