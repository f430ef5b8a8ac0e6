package policy

// Program identity. A rule names a program; the line
// names a file. Each row gives Decide what the caller resolved the names
// to (Input.Programs) or nothing (an old caller), and checks that a rule
// or a cap matches the program that runs: git's helpers are git, a
// program the agent can write matches no rule, a path that is not the
// program the rule names matches nothing.

import (
	"strings"
	"testing"
)

// hostGit is how the pipeline resolves git on a Debian host.
var hostGit = map[string]Program{
	"git":                          {Path: "/usr/bin/git", Real: "/usr/bin/git", ExecPath: "/usr/lib/git-core"},
	"/usr/lib/git-core/git-push":   {Path: "/usr/lib/git-core/git-push", Real: "/usr/bin/git"},
	"/usr/lib/git-core/git-status": {Path: "/usr/lib/git-core/git-status", Real: "/usr/bin/git"},
	"/usr/lib/git-core/git-reset":  {Path: "/usr/lib/git-core/git-reset", Real: "/usr/bin/git"},
	"/usr/bin/git":                 {Path: "/usr/bin/git", Real: "/usr/bin/git"},
	"/bin/git":                     {Path: "/bin/git", Real: "/usr/bin/git"},
	"/opt/other/git":               {Path: "/opt/other/git", Real: "/opt/other/git"},
	"/opt/other/git-status":        {Path: "/opt/other/git-status", Real: "/opt/other/git-status"},
	"/usr/bin/env":                 {Path: "/usr/bin/env", Real: "/usr/bin/env"},
	"env":                          {Path: "/usr/bin/env", Real: "/usr/bin/env"},
}

func TestClassProgramIdentity(t *testing.T) {
	writable := map[string]Program{
		"tool": {Path: "<root>/node_modules/.bin/tool", Writable: true},
		"git":  {Path: "<root>/bin/git", Writable: true},
		"echo": {Path: "<root>/bin/echo", Writable: true},
		"[":    {Path: "<root>/bin/[", Writable: true},
	}
	rows := []row{
		// git's helpers are git with that subcommand: the caps see them.
		{name: "identity: git's push helper by its path meets the push cap in auto mode", auto: true,
			cmd: "/usr/lib/git-core/git-push origin main", want: RA, reason: "cap: external-effect git push"},
		{name: "identity: git's push helper meets the push cap in auto mode with Programs", auto: true, programs: hostGit,
			cmd: "/usr/lib/git-core/git-push origin main", want: RA, reason: "cap: external-effect git push"},
		{name: "identity: git's push helper by name meets the push cap", auto: true,
			cmd: "git-push origin main", want: RA, reason: "cap: external-effect git push"},
		{name: "identity: git's push helper under env meets the push cap", auto: true,
			cmd: "env /usr/lib/git-core/git-push origin main", want: RA, reason: "cap: external-effect git push"},
		{name: "identity: a helper of another folder's git meets the push cap too", auto: true,
			cmd: "/opt/x/libexec/git-core/git-send-pack ../elsewhere main", want: RA, reason: "cap: external-effect git send-pack"},
		{name: "identity: git's reset helper meets a Terminal(git reset --hard) deny", allow: []string{"Terminal(git)"},
			deny: []string{"Terminal(git reset --hard)"}, cmd: "/usr/lib/git-core/git-reset --hard HEAD~3", want: D,
			reason: "permissions.json deny: Terminal(git reset --hard)"},
		{name: "identity: git's reset helper by name meets a Terminal(git reset --hard) deny", auto: true,
			deny: []string{"Terminal(git reset --hard)"}, cmd: "git-reset --hard", want: D,
			reason: "permissions.json deny: Terminal(git reset --hard)"},
		{name: "identity: git's clone helper with -u runs a program the line names", auto: true,
			cmd: "/usr/lib/git-core/git-clone -u 'sh -c id' ../x y", want: RA, reason: "cap: opaque segment"},
		{name: "identity: a script named git-x.sh is a script, not a helper", auto: true,
			cmd: "./scripts/git-sync.sh", want: A, reason: "agent_autonomy: auto_approve (wildcard)"},
		{name: "identity: a function named like a helper is the function", allow: []string{"Terminal(git status)"},
			cmd: "git-status() { rm -rf .; }; git-status", want: RA},
		// A helper is allowed only when it is git's own.
		{name: "identity: git's status helper in git's exec-path is allowed by Terminal(git status)", programs: hostGit,
			allow: []string{"Terminal(git status)"}, cmd: "/usr/lib/git-core/git-status --short", want: A,
			reason: "permissions.json allow: Terminal(git status)", tokens: []string{"git status --short"}},
		{name: "identity: without Programs a helper's path matches no allow pattern",
			allow: []string{"Terminal(git status)"}, cmd: "/usr/lib/git-core/git-status", want: RA, segs: "none",
			rules: []string{"the program /usr/lib/git-core/git-status is not known to be a helper"}},
		{name: "identity: a git-status outside git's exec-path matches no allow pattern", programs: hostGit,
			allow: []string{"Terminal(git status)"}, cmd: "/opt/other/git-status", want: RA, segs: "none"},
		// A program the agent can write matches no rule.
		{name: "identity: ./gradlew inside the project matches no rule", allow: []string{"Terminal(./gradlew build)"},
			cmd: "./gradlew build", want: RA, segs: "none", rules: []string{"the program ./gradlew is inside the project folder"}},
		{name: "identity: bin/tool inside the project matches no rule", allow: []string{"Terminal(bin/tool)"},
			cmd: "bin/tool", want: RA, segs: "none"},
		{name: "identity: ../bin/tool after a cd inside the project matches no rule", allow: []string{"Terminal(../bin/tool)", "Terminal(cd)"},
			cmd: "cd src && ../bin/tool", want: RA, segs: "cd none"},
		{name: "identity: the project's own path to a program matches no rule", allow: []string{"Terminal(<root>/tool)"},
			cmd: "<root>/tool", want: RA, segs: "none"},
		{name: "identity: a name found in a PATH entry the agent writes matches no rule", programs: writable,
			allow: []string{"Terminal(tool)"}, cmd: "tool --version", want: RA, segs: "none",
			rules: []string{"tool is <root>/node_modules/.bin/tool, in a folder the agent can write"}},
		{name: "identity: git found in a folder the agent writes matches no rule", programs: writable,
			allow: []string{"Terminal(git status)"}, cmd: "git status", want: RA, segs: "none"},
		{name: "identity: git found in a folder the agent writes still meets a deny", programs: writable,
			deny: []string{"Terminal(git status)"}, cmd: "git status", want: D},
		{name: "identity: a builtin runs whatever PATH holds", programs: writable, auto: false,
			allow: []string{"Terminal(echo)", "Terminal([)"}, cmd: "[ -f x ] && echo hi", want: A},
		// A path that is the program PATH finds is that program; another is not.
		{name: "identity: /usr/bin/git is the git PATH finds, allowed by Terminal(git status)", programs: hostGit,
			allow: []string{"Terminal(git status)"}, cmd: "/usr/bin/git status", want: A},
		{name: "identity: /bin/git links to the git PATH finds, allowed by Terminal(git status)", programs: hostGit,
			allow: []string{"Terminal(git status)"}, cmd: "/bin/git status", want: A},
		{name: "identity: another folder's git is not the git a rule names", programs: hostGit,
			allow: []string{"Terminal(git status)"}, cmd: "/opt/other/git status", want: RA, segs: "none"},
		{name: "identity: without Programs a path is not its basename for allow", allow: []string{"Terminal(git status)"},
			cmd: "/usr/bin/git status", want: RA, segs: "none"},
		{name: "identity: a program path written in a rule still matches as written (the scope then asks)", programs: hostGit,
			allow: []string{"Terminal(/opt/other/git status)"}, cmd: "/opt/other/git status", want: RA, segs: "allow",
			reason: "scope: outside the project folder: /opt/other/git"},
		{name: "identity: a program path written in a rule matches as written in auto mode", programs: hostGit, auto: true,
			deny: []string{"Terminal(git status)"}, cmd: "/opt/other/git status", want: D},
	}
	runRowsLoose(t, rows)
}

// TestClassDeveloperCapsAsk: the seed page says terminal needs only a
// developer and caps ask ("an ask written in the file asks"): a
// developer's terminal git push, sudo, git remote add and an ask-listed
// pnpm publish are require_approval with a maintainer to approve, never an
// IAM deny.
func TestClassDeveloperCapsAsk(t *testing.T) {
	root := newProject(t)
	rules, err := NewRules("", append(SeedAllow(), "Terminal(git push)", "Terminal(sudo)"), nil, []string{"Terminal(pnpm publish)"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd    string
		auto   bool
		reason string
	}{
		{"git push origin main", true, "cap: external-effect git push"},
		{"git push origin main", false, "cap: external-effect git push"},
		{"sudo apt-get install x", true, "cap: privileged command sudo"},
		{"sudo ls", false, "cap: privileged command sudo"},
		{"git remote add origin https://example.com/x.git", true, "cap: external-effect git remote add"},
		{"git remote add origin https://example.com/x.git", false, "default: no rule approves it"},
		{"pnpm publish", false, "permissions.json ask: Terminal(pnpm publish)"},
		{"pnpm publish --access public", true, "permissions.json ask: Terminal(pnpm publish)"},
		{"git-push origin main", true, "cap: external-effect git push"},
	} {
		in := Input{Type: "terminal", Command: c.cmd, Role: "developer", Rules: rules, Scope: Scope{Root: root}}
		if c.auto {
			in.Autonomy.Wildcard = "auto_approve"
		}
		d := Decide(in)
		if d.Policy != RA || d.RequiredRole != "maintainer" || !strings.HasPrefix(d.Reason, c.reason) {
			t.Errorf("%q (auto %v) by a developer: %s (%s), role %s; want require_approval (%s…), maintainer",
				c.cmd, c.auto, d.Policy, d.Reason, d.RequiredRole, c.reason)
		}
	}
}
