package policy

// A deletion or a move takes what a folder holds along.
// A write target that is the project folder, a folder above it, or a
// folder a protected path lies in is a protected write: never
// auto-approved, in any mode, and a maintainer decides.

import (
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

func TestClassAncestorOfProtected(t *testing.T) {
	root := newProject(t)
	for _, cmd := range []string{
		"rm -rf .claude",
		"rm -rf ./.claude/",
		"rm -r src/../.claude",
		"rm -rf .c*",
		"rm -rf .cursor",
		"rm -rf ../" + "<base>",
		"rm -rf <root>",
		"rm -rf .",
		"rm -rf ..",
		"cd src && rm -rf ../..",
		"rmdir .claude",
		"mv .claude x",
		"mv . ../elsewhere",
		"find . -delete",
		"find -delete",
		"find .claude -name '*.json' -delete",
		"find . -name 'settings*.json' -delete",
		"find . -name '*.json' -delete",
		"find . -iname '*.MD' -delete",
		"find . -name '*.o' -o -name x -delete",
		"find . ! -name '*.o' -delete",
		"git rm -r --cached .claude",
		"git clean -fdx",
		"git clean -fdx .claude",
		"rm -rf .brabo",
		"rm -rf .brabo/worktrees/dev-a",
		"rm -rf ~",
		"rm -rf ~/.config",
		"rm -rf /home/alice",
		"rm -rf /var/lib",
		"cp -r evil .claude",
		"tar -x -f a.tar -C .",
	} {
		cmd := strings.ReplaceAll(withRoot(cmd, root), "<base>", root[strings.LastIndexByte(root, '/')+1:])
		for _, auto := range []bool{false, true} {
			d := Decide(protectInput(root, cmd, auto))
			if d.Policy == brabo.AutoApprove || d.RequiredRole != brabo.Maintainer {
				t.Errorf("auto %v: %q: %s (%s), role %s; want a maintainer to decide", auto, cmd, d.Policy, d.Reason, d.RequiredRole)
			}
			if auto && d.Policy == brabo.RequireApproval && !strings.HasPrefix(d.Reason, "protected: ") &&
				!strings.HasPrefix(d.Reason, "cap: opaque") {
				t.Errorf("auto mode: %q asks for %q, want the protected rule's reason", cmd, d.Reason)
			}
		}
	}
	// Folders that hold no protected path the line shows stay plain writes.
	for _, cmd := range []string{"rm -rf src", "rm -rf build dist", "rm -rf .cache", "mv src/app lib/app",
		"find src -name '*.o' -delete", "find . -name '*.pyc' -delete", "rmdir docs", "git clean -fdx src", "rm -rf node_modules"} {
		if d := Decide(protectInput(root, cmd, true)); d.Policy != brabo.AutoApprove || d.RequiredRole != brabo.Developer {
			t.Errorf("%q: %s (%s), role %s; want an auto-approved plain write", cmd, d.Policy, d.Reason, d.RequiredRole)
		}
	}
}

// The configuration and instruction files of the agents
// people run and of the package managers and build tools the seeded
// runners read are protected (docs/shell-analysis.md gives each row's
// source).
func TestClassProtectedConfiguration(t *testing.T) {
	root := newProject(t)
	for _, cmd := range []string{
		"echo 'script-shell=./x.sh' > .npmrc && npm test",
		"echo 'node-options=--require ./x.js' >> packages/web/.npmrc",
		"echo 'yarnPath: ./x.cjs' > .yarnrc.yml",
		"echo 'yarn-path ./x.js' > .yarnrc",
		"echo 'module.exports = {}' > .pnpmfile.cjs",
		"echo x > .pnpmfile.mjs",
		"echo '[global]' > .venv/pip.conf",
		"echo '[target.x86_64-unknown-linux-gnu] runner = \"./x\"' > .cargo/config.toml",
		"echo x > .cargo/config",
		"echo x > .mvn/extensions.xml",
		"echo x > .mvn/jvm.config",
		"echo 'eval x' > .envrc",
		"echo '{}' > .vscode/mcp.json",
		"echo '{}' > .vscode/settings.json",
		"echo '{}' > .vscode/tasks.json",
		"echo '{}' > .cursor/mcp.json",
		"echo '{}' > .cursor/cli.json",
		"echo x > .cursor/environment.json",
		"echo x > .aider.conf.yml",
		"echo x >> CLAUDE.local.md",
		"echo x > .claude/rules/r.md",
		"echo x >> AGENTS.override.md",
		"echo x >> src/AGENTS.override.md",
		"echo x >> GEMINI.md",
		"echo x > .gemini/settings.json",
		"echo x > .codex/config.toml",
		"echo x > .windsurfrules",
		"echo x > .clinerules",
		"echo x > .github/copilot-instructions.md",
		"echo x > .github/instructions/go.instructions.md",
		"echo x >> ~/.npmrc",
		"echo x >> ~/.yarnrc.yml",
		"echo x > ~/.config/pip/pip.conf",
		"echo x > ~/.pip/pip.conf",
		"echo x > ~/.config/pnpm/rc",
		"echo x > ~/.cargo/config.toml",
		"echo x > ~/.gradle/init.d/x.gradle",
		"echo x > ~/.m2/settings.xml",
		"echo x > ~/.cursor/mcp.json",
		"echo x > ~/.copilot/config.json",
		"echo x >> ~/.zlogin",
		"echo x >> ~/.bash_logout",
		"rm -rf .vscode",
		"rm -rf .cargo",
		"rm -rf .github",
	} {
		for _, auto := range []bool{false, true} {
			in := protectInput(root, cmd, auto)
			in.Rules = mustRules(t, append(SeedAllow(), protectAllow...)...)
			d := Decide(in)
			// Outside auto mode a home path meets the scope first.
			if d.Policy == brabo.AutoApprove || d.RequiredRole != brabo.Maintainer || auto && !strings.HasPrefix(d.Reason, "protected: ") {
				t.Errorf("auto %v: %q: %s (%s), role %s; want the protected rule, a maintainer", auto, cmd, d.Policy, d.Reason, d.RequiredRole)
			}
		}
	}
	for _, cmd := range []string{"echo x > src/npmrc.txt", "echo x > docs/pip.md", "echo x > .vscode-test.log",
		"echo x > .github/workflows-notes.md", "cat .npmrc", "cat .cursor/mcp.json", "echo x > Makefile", "echo x > conftest.py"} {
		in := protectInput(root, cmd, true)
		if d := Decide(in); d.Policy != brabo.AutoApprove {
			t.Errorf("%q: %s (%s); want a plain write or read, auto-approved", cmd, d.Policy, d.Reason)
		}
	}
}

func mustRules(t *testing.T, allow ...string) *Rules {
	t.Helper()
	r, err := NewRules("", allow, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
