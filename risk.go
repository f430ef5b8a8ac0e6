package brabo

import (
	"path"
	"strings"
)

// Risk is one reason a card is marked as risky: something a human must
// not approve by habit (issue 28, "risk you cannot miss"). The web queue
// shows the reasons in a banner at the top of the card, sorts such cards
// first, and its one-key approve asks for a second key.
type Risk struct {
	// Kind is stable, for a page's class and a test: cap, force,
	// protected-branch, external, protected-write, runs, pipe-shell,
	// privilege.
	Kind string `json:"kind"`
	// Text says it in plain words ("a force push: rewrites the remote's
	// branch main").
	Text string `json:"text"`
}

// protectedBranchNames are the protected branches of DESIGN §4.6, as
// policy.ProtectedBranches names them (a test keeps the two alike: the
// root package cannot import policy).
var protectedBranchNames = []string{"dev", "qa", "rc", "main"}

// protectedBranch reports whether a branch or a refspec's destination
// names a protected branch ("main", "refs/heads/main", "HEAD:main").
func protectedBranch(ref string) (string, bool) {
	if _, dst, ok := strings.Cut(ref, ":"); ok {
		ref = dst
	}
	ref = strings.TrimPrefix(strings.TrimPrefix(ref, "+"), "refs/heads/")
	for _, b := range protectedBranchNames {
		if ref == b {
			return b, true
		}
	}
	return "", false
}

// RunsFile reports whether a write to path changes what a build, a CI job
// or a shell runs: a Makefile, package.json (its scripts), a CI file, a
// shell script, a git hook. The path is relative to the project folder.
func RunsFile(p string) bool {
	p = strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(p, `\`, "/")), "/")
	base := path.Base(p)
	switch strings.ToLower(base) {
	case "makefile", "gnumakefile", "package.json", "justfile", "taskfile.yml", "taskfile.yaml", "rakefile",
		"dockerfile", "containerfile", ".gitlab-ci.yml", ".travis.yml", "jenkinsfile", "azure-pipelines.yml",
		"bitbucket-pipelines.yml", ".bashrc", ".profile", ".zshrc", ".envrc", "build.gradle", "pom.xml", "setup.py", "noxfile.py", "tox.ini":
		return true
	}
	switch strings.ToLower(path.Ext(base)) {
	case ".sh", ".bash", ".zsh", ".mk", ".ps1", ".bat", ".cmd":
		return true
	}
	for _, dir := range []string{".github/workflows/", ".github/actions/", ".circleci/", ".git/hooks/", ".husky/", ".buildkite/", "scripts/", "bin/"} {
		if strings.HasPrefix(p, dir) || strings.Contains(p, "/"+dir) {
			return true
		}
	}
	return false
}

// Risks lists why an action's card is marked as risky, in the order a
// card says them; nil for an ordinary card. It reads only what the action
// holds (its type, payload, decision and preview), so the queue, the
// action's page and a test all give the same answer:
//   - a cap held it (its reason is a "cap: …" of DESIGN §4.6);
//   - a force push, or a push to a protected branch (dev, qa, rc, main);
//   - an external effect: a typed git_push, pr_open or git_merge, or a
//     command the rules raised to a maintainer's approval (it leaves the
//     machine, gains privilege or runs what brabo cannot see);
//   - a protected write (write_file of a protected file, or a command that
//     writes one);
//   - a write to a file that runs (RunsFile).
func Risks(a *ProposedAction) []Risk {
	if a == nil {
		return nil
	}
	var out []Risk
	add := func(kind, text string) {
		for _, r := range out {
			if r.Kind == kind {
				return
			}
		}
		out = append(out, Risk{Kind: kind, Text: text})
	}
	reason := a.Decision.Reason
	if reason == "" {
		reason = a.Reason
	}
	if c, ok := strings.CutPrefix(reason, "cap: "); ok {
		add("cap", "held by a cap: "+c)
	}
	var flags []Flag
	if a.Preview != nil {
		flags = a.Preview.Flags
	}
	for _, s := range a.Decision.Segments {
		flags = append(flags, s.Flags...)
	}
	for _, f := range flags {
		if f.Kind == FlagForce {
			add("force", "a force push: it rewrites the remote's history"+whatOf(f))
		}
	}
	if a.Preview != nil && a.Preview.Push != nil && a.Preview.Push.Force {
		add("force", "not a fast-forward: the remote's branch has commits this one lacks")
	}
	switch a.Type {
	case GitPush:
		if b, ok := protectedBranch(a.Payload.Branch); ok {
			add("protected-branch", "a push to the protected branch "+b)
		}
		add("external", "an external effect: it changes the remote")
	case PrOpen:
		add("external", "an external effect: it opens a pull request on the forge")
	case GitMerge:
		if b, ok := protectedBranch(a.Payload.TargetBranch); ok {
			add("protected-branch", "a merge into the protected branch "+b)
		}
		add("external", "an external effect: it merges a pull request")
	case Terminal:
		for _, s := range a.Decision.Segments {
			if b, ok := pushesProtected(s.Tokens); ok {
				add("protected-branch", "a push to the protected branch "+b)
			}
		}
	}
	for _, s := range a.Decision.Segments {
		if len(s.ProtectedWrites) > 0 {
			add("protected-write", "a protected write: "+s.ProtectedWrites[0])
		}
		for _, f := range s.Flags {
			if f.Kind == FlagPrivilege {
				add("privilege", "a privilege gain"+whatOf(f))
			}
		}
	}
	if a.Type == WriteFile {
		for _, f := range flags {
			if f.Kind == FlagProtected {
				add("protected-write", "a protected write: "+a.Payload.Path)
			}
		}
		if RunsFile(a.Payload.Path) {
			add("runs", "a write to a file that runs: "+a.Payload.Path)
		}
		// What the content is, read whole (the card's write flags): a
		// download handed to a shell anywhere in it, a script.
		for _, f := range flags {
			switch f.Kind {
			case FlagPipeShell:
				add("pipe-shell", "a download piped into a shell"+whatOf(f))
			case FlagExecutable, FlagRunsFile:
				add("runs", "a write to a file that runs"+whatOf(f))
			}
		}
	}
	if a.Type == Terminal && EffectiveRole(a.Type, a.Decision) != a.Type.MinRole() {
		add("external", "a maintainer approves it: it leaves the machine, gains privilege, writes a protected file or runs what brabo cannot read")
	}
	return out
}

func whatOf(f Flag) string {
	if f.What == "" {
		return ""
	}
	return " (" + f.What + ")"
}

// pushesProtected reports whether a command segment is a git push naming
// a protected branch among its arguments.
func pushesProtected(toks []string) (string, bool) {
	if len(toks) < 2 || path.Base(toks[0]) != "git" {
		return "", false
	}
	push := -1
	for i := 1; i < len(toks); i++ {
		if toks[i] == "push" {
			push = i
			break
		}
		if !strings.HasPrefix(toks[i], "-") && (i == 1 || (toks[i-1] != "-C" && toks[i-1] != "-c")) {
			return "", false // another subcommand
		}
	}
	if push < 0 {
		return "", false
	}
	for _, t := range toks[push+1:] {
		if strings.HasPrefix(t, "-") {
			continue
		}
		if b, ok := protectedBranch(t); ok {
			return b, true
		}
	}
	return "", false
}
