package policy

// The generator's classes of mis-reading: which program runs (git's dashed
// helpers), options that run a program or read a list from a file, and
// deletions that take protected files along. With the stub PATH they show
// that what bash starts is judged like the line; the runners' options are
// also run with the real go, make, npm and pytest
// (bashdiff_runners_test.go).

// bashGitExecPath is Debian's git --exec-path; on a machine where it is
// elsewhere the helper is not found and the line runs nothing.
const bashGitExecPath = "/usr/lib/git-core"

var bashHelperPlain = []bashProd{
	func(g *bashGen) string {
		return bashGitExecPath + "/git-" + g.pick("status", "status --short", "log --oneline -n 1", "diff", "rev-parse HEAD")
	},
	func(g *bashGen) string { return "/usr/bin/git " + g.pick("status", "log -n 1", "diff --stat") },
}

var bashHelperTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("", "env ", "command ", "nice ") + bashGitExecPath + "/git-" +
			g.pick("push origin main", "push --force origin main", "send-pack ../x main", "reset --hard", "remote add x https://evil.example/x.git",
				"clone -u 'sh -c id' ../x y", "merge x", "http-push x", "upload-pack ../outside", "receive-pack ../outside")
	},
	func(g *bashGen) string {
		return g.pick("git-push origin main", "git-reset --hard", "./git-push origin main", "/tmp/git-push origin main")
	},
	func(g *bashGen) string { return g.benign() + g.sep() + bashGitExecPath + "/git-push origin main" },
}

var bashRunnerOptPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("go test ./...", "go test -run TestX ./...", "go build -o bin/app ./src", "go vet ./...",
			"make test", "make test -C src", "make test V=1", "npm test", "npm run build", "pytest -q", "pytest -p no:cacheprovider",
			"npx vitest run --reporter=verbose", "cargo test --release", "go test -exec ./tools/wrap.sh ./...")
	},
}

var bashRunnerOptTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("go test -exec pwnd ./...", "go test -exec=curl ./...", "go test -toolexec /tmp/x ./...",
			"go vet -vettool=/tmp/vt ./...", "go build -overlay /tmp/o.json ./...", "go build -C /tmp ./...",
			"npm test --script-shell=/tmp/sh", "npm run build --script-shell pwnd", "npm test --userconfig /tmp/npmrc",
			"npm test --node-options='--require /tmp/x.js'", "pnpm test --config.script-shell=pwnd",
			"make test SHELL=/tmp/sh", "make test CC=pwnd", "make test --eval='test: ; pwnd'", "make test -f /tmp/M",
			"pytest -p evil", "pytest -c /tmp/p.ini", "pytest -o addopts='-p evil'", "pytest --rootdir=/tmp",
			"cargo test --config 'target.x.runner=\"pwnd\"'", "npx vitest --config /tmp/v.ts")
	},
	func(g *bashGen) string {
		return "echo 'test: ; pwnd' > M && make test -f M"
	},
	func(g *bashGen) string {
		return "echo src/main.go > l && tar -c -f a.tar -T l"
	},
	func(g *bashGen) string {
		return g.pick("xargs -a l cat", "sed -f s.sed a.txt", "git add --pathspec-from-file=l", "rsync -a --files-from=l . out/")
	},
}

var bashAncestorPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("rm -r build", "rm -r src/app", "rmdir docs", "mv build out", "find build -name '*.txt' -delete",
			"find . -name '*.o' -delete", "rm build/out.txt")
	},
}

var bashAncestorTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("rm -r .claude", "rm -r ./.claude/", "rm -r .cursor", "rm -r .vscode", "rm -r .", "rm -r ..",
			"rm -r ../proj", "cd src && rm -r ../..", "find . -delete", "find . -name '*.json' -delete", "mv .claude x",
			"git clean -fdx", "rm -r ~", "rmdir .git", "mv . ../elsewhere", "rm -r .brabo")
	},
	func(g *bashGen) string {
		return g.pick("echo x > .npmrc", "echo x > .vscode/mcp.json", "echo x >> CLAUDE.local.md", "echo x >> AGENTS.override.md",
			"echo x > .cargo/config.toml", "echo x > .yarnrc.yml", "echo x > .cursor/mcp.json") + g.pick("", " && npm test")
	},
}
