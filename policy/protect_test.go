package policy

// The protected-path rule (DESIGN §9): a visible write to a protected path
// is never auto-approved, in any mode, and needs a maintainer; a read of a
// read-protected path asks. Every row runs with a file that allows the
// writer and in auto mode, so that only the rule stands in the way.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

var protectAllow = []string{"Terminal(echo)", "Terminal(cat)", "Terminal(tee)", "Terminal(cp)", "Terminal(mv)",
	"Terminal(sed)", "Terminal(dd)", "Terminal(truncate)", "Terminal(touch)", "Terminal(chmod)", "Terminal(rm)",
	"Terminal(ln)", "Terminal(git)", "Terminal(npx)", "Terminal(pre-commit)", "Terminal(printf)", "Terminal(install)",
	"Terminal(rsync)", "Terminal(tar)", "Terminal(unzip)", "Terminal(patch)", "Terminal(mkdir)", "WriteFile()"}

func protectInput(root, cmd string, auto bool) Input {
	rules, err := NewRules("", protectAllow, nil, nil)
	if err != nil {
		panic(err)
	}
	in := Input{Type: brabo.Terminal, Command: cmd, Role: brabo.Owner, Rules: rules,
		Scope:   Scope{Root: root, Mode: brabo.ModeLocal, ID: "acme"},
		Protect: Protect{Home: "/home/alice", ServerPaths: []string{"/var/lib/brabo", "/home/alice/.config/brabo/token"}}}
	if auto {
		in.Autonomy.Wildcard = brabo.AutoApprove
	}
	return in
}

func TestProtectedWritesNeedAMaintainer(t *testing.T) {
	root := newProject(t)
	for _, cmd := range []string{
		// permissions.json, every writer and spelling
		"echo '{\"allow\":[\"Terminal(bash)\"]}' > permissions.json",
		"echo x >> ./permissions.json",
		"echo x > src/../permissions.json",
		"echo x > $PWD/permissions.json",
		"echo x > /proc/self/cwd/permissions.json",
		"cd /home/alice && echo x >> /proc/self/cwd/.gitconfig",
		// bash opens /proc/self/cwd/.. through the cwd: the dots are not
		// folded into /proc/self first
		"cd /home/alice && echo x >> /proc/self/cwd/../alice/.gitconfig",
		"cd src && echo x > /proc/self/cwd/../permissions.json",
		// a glob that could name a protected file
		"cp x .gi?/config",
		"echo x > .g*/hooks/pre-commit",
		"tee ~/.bashr?",
		"echo x > <root>/permissions.json",
		"cd src && echo x > ../permissions.json",
		"cat > permissions.json",
		"tee permissions.json",
		"tee -a src/x permissions.json",
		"cp x permissions.json",
		"cp -t . sub/permissions.json",
		"cp sub/permissions.json .",
		"mv x/permissions.json ./",
		"mv x permissions.json",
		"mv permissions.json x",
		"install -m 644 x permissions.json",
		"sed -i s/a/b/ permissions.json",
		"dd of=permissions.json",
		"truncate -s 0 permissions.json",
		"touch permissions.json",
		"chmod 666 permissions.json",
		"rm permissions.json",
		"rsync x permissions.json",
		"patch permissions.json fix.diff",
		"echo x > .brabo/worktrees/dev-a/permissions.json",
		"echo x > ../other-project/permissions.json",
		// .git, in any case, and as a gitfile
		"echo '[core] fsmonitor = x' >> .git/config",
		"echo x >> .GIT/config",
		"echo x > .git/hooks/pre-commit",
		"echo 'gitdir: evil' > .git",
		"mkdir -p x/objects x/refs && echo ref > x/HEAD",
		"ln -s .git/config c",
		"cp -s .git/config c",
		"rm -rf .git",
		"tar -x -f a.tar -C .git",
		"unzip a.zip -d .git/hooks",
		// git writing its config without naming it
		"git config core.fsmonitor ./x.sh",
		"git config --global core.pager ./x.sh",
		"git config --unset core.hooksPath",
		"git remote add evil https://evil.example",
		"git submodule add https://x.example/r r",
		"git worktree add ../w",
		"git lfs install",
		// hook managers
		"npx husky",
		"pre-commit install",
		"echo x > .husky/pre-commit",
		"echo x > .pre-commit-config.yaml",
		"echo x > lefthook.yml",
		"echo x > .githooks/pre-push",
		// the agents' configuration and instructions
		"echo '{}' > .claude/settings.json",
		"echo '{}' > .claude/settings.local.json",
		"echo x > .claude/hooks/h.sh",
		"echo x > .codex/config.toml",
		"echo x > .gemini/settings.json",
		"echo x > .cursor/hooks.json",
		"echo x > .mcp.json",
		"echo x >> CLAUDE.md",
		"echo x >> src/AGENTS.md",
		"echo x > .cursor/rules/r.mdc",
		// the user's start-up files and brabo's own
		"echo x >> ~/.gitconfig",
		"echo x >> $HOME/.bashrc",
		"echo x >> /home/alice/.profile",
		"echo x > ~/.claude/settings.json",
		"echo x > ~/.config/git/config",
		"echo x > /var/lib/brabo/brabo.db",
		"cd /var/lib/brabo && rm brabo.db",
	} {
		cmd := withRoot(cmd, root)
		for _, auto := range []bool{false, true} {
			d := Decide(protectInput(root, cmd, auto))
			if d.Policy == brabo.AutoApprove {
				t.Errorf("auto %v: %q was auto-approved (%s)", auto, cmd, d.Reason)
			}
			if d.RequiredRole != brabo.Maintainer {
				t.Errorf("auto %v: %q needs %q to approve, want maintainer (%s)", auto, cmd, d.RequiredRole, d.Reason)
			}
		}
		if d := Decide(protectInput(root, cmd, true)); d.Policy == brabo.RequireApproval &&
			!strings.HasPrefix(d.Reason, "protected: ") && !strings.HasPrefix(d.Reason, "cap: ") {
			t.Errorf("auto mode: %q asks for %q, want the protected rule's reason", cmd, d.Reason)
		}
	}
}

func TestProtectedReadsAndHarmlessWrites(t *testing.T) {
	root := newProject(t)
	for _, c := range []struct {
		cmd  string
		want brabo.Policy
		role brabo.Role
	}{
		{"cat .git/config", brabo.AutoApprove, brabo.Developer},
		{"cat permissions.json", brabo.AutoApprove, brabo.Developer},
		{"echo x > src/permissions.json", brabo.AutoApprove, brabo.Developer},
		{"echo x > src/head.txt", brabo.AutoApprove, brabo.Developer},
		{"git status", brabo.AutoApprove, brabo.Developer},
		{"git config --get user.name", brabo.AutoApprove, brabo.Developer},
		{"git config user.name", brabo.AutoApprove, brabo.Developer},
		{"cat /var/lib/brabo/brabo.db", brabo.RequireApproval, brabo.Developer},
		{"cat ~/.config/brabo/token", brabo.RequireApproval, brabo.Developer},
	} {
		d := Decide(protectInput(root, c.cmd, true))
		if d.Policy != c.want || d.RequiredRole != c.role {
			t.Errorf("%q: %s (%s), role %s; want %s, %s", c.cmd, d.Policy, d.Reason, d.RequiredRole, c.want, c.role)
		}
	}
}

// The hook tokens brabo install writes are read-protected by the table's
// home row, whatever the server's own paths are.
func TestTheHookTokenFolderIsReadProtectedByItsRow(t *testing.T) {
	root := newProject(t)
	for _, cmd := range []string{"cat ~/.config/brabo/hooks/claude.token", "cat /home/alice/.config/brabo/hooks/x",
		"cat $HOME/.config/brabo/hooks/x", "cat ~/.CONFIG/brabo/hooks/x"} {
		in := protectInput(root, cmd, true)
		in.Protect.ServerPaths = nil
		if d := Decide(in); d.Policy == brabo.AutoApprove || !strings.Contains(d.Reason, "protected") {
			t.Errorf("%q: %s (%s); want the protected rule to ask", cmd, d.Policy, d.Reason)
		}
	}
	in := protectInput(root, "", true)
	in.Protect.ServerPaths = nil
	in.Type, in.Path, in.Rules = brabo.ReadFile, "/home/alice/.config/brabo/hooks/x", readAllRules(t)
	if d := Decide(in); d.Policy == brabo.AutoApprove {
		t.Errorf("read_file of a hook token: %s (%s)", d.Policy, d.Reason)
	}
	in = protectInput(root, "cat ~/.config/other/x", true)
	in.Protect.ServerPaths = nil
	if d := Decide(in); strings.Contains(d.Reason, "protected") {
		t.Errorf("a read of another config folder: %s (%s); the row is brabo's folder only", d.Policy, d.Reason)
	}
}

func readAllRules(t *testing.T) *Rules {
	t.Helper()
	rules, err := NewRules("", []string{"ReadFile()"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

func TestProtectedWriteFile(t *testing.T) {
	root := newProject(t)
	for _, p := range []string{"permissions.json", ".git/config", ".git/hooks/post-checkout", ".GIT/config", ".git",
		"CLAUDE.md", "docs/AGENTS.md", ".claude/settings.json", ".husky/pre-commit", ".mcp.json",
		filepath.Join(root, "permissions.json"), "../other/permissions.json"} {
		in := protectInput(root, "", true)
		in.Type, in.Path = brabo.WriteFile, p
		d := Decide(in)
		if d.Policy == brabo.AutoApprove || d.RequiredRole != brabo.Maintainer {
			t.Errorf("write_file %q: %s (%s), role %s; want a maintainer to decide", p, d.Policy, d.Reason, d.RequiredRole)
		}
	}
	in := protectInput(root, "", true)
	in.Type, in.Path = brabo.WriteFile, "src/app/main.go"
	if d := Decide(in); d.Policy != brabo.AutoApprove || d.RequiredRole != brabo.Developer {
		t.Errorf("write_file of a plain file: %s (%s), role %s", d.Policy, d.Reason, d.RequiredRole)
	}
}

// The role an approval needs, computed once by Decide (DESIGN §9,
// "Effective role").
func TestRequiredRole(t *testing.T) {
	root := newProject(t)
	for _, c := range []struct {
		cmd       string
		principal brabo.Role
		policy    brabo.Policy
		role      brabo.Role
	}{
		{"ls", brabo.Developer, brabo.AutoApprove, brabo.Developer},
		{"git push origin main", brabo.Maintainer, brabo.RequireApproval, brabo.Maintainer},
		// A developer's capped segment asks, and a maintainer approves
		// (DESIGN §10): terminal needs only a developer.
		{"git push --force origin main", brabo.Developer, brabo.RequireApproval, brabo.Maintainer},
		{"ls && sudo ls", brabo.Developer, brabo.RequireApproval, brabo.Maintainer},
		{"flock f git push origin main", brabo.Developer, brabo.RequireApproval, brabo.Maintainer},
		{"git remote add origin https://example.com/x.git", brabo.Developer, brabo.RequireApproval, brabo.Maintainer},
		{"/usr/lib/git-core/git-push origin main", brabo.Developer, brabo.RequireApproval, brabo.Maintainer},
		{"$x", brabo.Developer, brabo.RequireApproval, brabo.Maintainer},
		{"echo x > .git/config", brabo.Developer, brabo.RequireApproval, brabo.Maintainer},
	} {
		in := protectInput(root, c.cmd, true)
		in.Role = c.principal
		d := Decide(in)
		if d.Policy != c.policy || d.RequiredRole != c.role {
			t.Errorf("%q by a %s: %s (%s), role %s; want %s, %s", c.cmd, c.principal, d.Policy, d.Reason, d.RequiredRole, c.policy, c.role)
		}
	}
	for _, typ := range brabo.ActionTypes() {
		d := Decide(Input{Type: typ, Role: brabo.Owner, Scope: Scope{Root: root}})
		if d.RequiredRole != typ.MinRole() && typ != brabo.Terminal {
			t.Errorf("%s: role %s, want the type's minimum %s", typ, d.RequiredRole, typ.MinRole())
		}
	}
}

// Each segment names the protected paths it visibly writes, relative to
// the project folder: what a maintainer's approval lets the action change
// (pipeline's integrity check restores every other protected path).
func TestProtectedWritesAreNamedPerSegment(t *testing.T) {
	root := newProject(t)
	for cmd, want := range map[string][][]string{
		"echo x >> .git/config":                                {{".git/config"}},
		"cd src && echo x > ../permissions.json":               {nil, {"permissions.json"}},
		"echo x > <root>/CLAUDE.md":                            {{"CLAUDE.md"}},
		"echo x > src/notes.txt":                               {nil},
		"echo x > .git/hooks/pre-commit; echo y > AGENTS.md":   {{".git/hooks/pre-commit"}, {"AGENTS.md"}},
		"echo x > .brabo/worktrees/dev-a/.git/config":          {{".brabo/worktrees/dev-a/.git/config"}},
		"echo x > /tmp/outside-the-project-folder/.git/config": {nil},
	} {
		cmd = strings.ReplaceAll(cmd, "<root>", root)
		d := Decide(protectInput(root, cmd, true))
		if len(d.Segments) != len(want) {
			t.Errorf("%s: %d segments, want %d", cmd, len(d.Segments), len(want))
			continue
		}
		for i, seg := range d.Segments {
			if strings.Join(seg.ProtectedWrites, ",") != strings.Join(want[i], ",") {
				t.Errorf("%s: segment %d writes %q, want %q", cmd, i, seg.ProtectedWrites, want[i])
			}
		}
	}
}
