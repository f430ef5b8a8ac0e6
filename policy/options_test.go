package policy

import "testing"

// Options of the seeded runners and build tools that
// name a program, load a plugin, pick a configuration or an output
// location. The seeded rules do not name them, so the segment asks unless
// the value is a literal path inside the project, not protected and not
// written by the line.
func TestClassRunnerOptions(t *testing.T) {
	var rows []row
	for _, c := range []struct{ name, cmd string }{
		{"go test -exec runs a program", "go test -exec pwnd ./..."},
		{"go test -exec=… runs a program", "go test -exec=pwnd ./..."},
		{"go test -toolexec runs a program", "go test -toolexec '/tmp/x' ./..."},
		{"go vet -vettool runs a program", "go vet -vettool=/tmp/vt ./..."},
		{"go build -overlay outside picks a configuration", "go build -overlay /tmp/o.json ./..."},
		{"go build -modfile written by the line", "echo x > alt.mod && go build -modfile alt.mod ./..."},
		{"go build -C outside", "go build -C /tmp/other ./..."},
		{"go test -exec through env", "env go test -exec pwnd ./..."},
		{"npm test --script-shell runs a shell", "npm test --script-shell=/tmp/sh"},
		{"npm run --script-shell as the next word", "npm run build --script-shell pwnd"},
		{"npm test --node-options", "npm test --node-options='--require /tmp/x.js'"},
		{"npm test --userconfig", "npm test --userconfig /tmp/npmrc"},
		{"npm test --prefix outside", "npm test --prefix ../other"},
		{"npm test -C outside", "npm test -C ../other"},
		{"pnpm test --config.script-shell", "pnpm test --config.script-shell=/tmp/sh"},
		{"pnpm install --pnpmfile", "pnpm install --pnpmfile /tmp/hooks.cjs"},
		{"pnpm test --dir written by the line", "mkdir -p w && pnpm test --dir w"},
		{"npx vitest --config outside", "npx vitest --config /tmp/v.config.ts"},
		{"npx vitest --reporter a module outside", "npx vitest run --reporter=/tmp/evil.js"},
		{"npx vitest --reporter a module the line writes", "echo x > r.js && npx vitest run --reporter=./r.js"},
		{"npx vitest --globalSetup code", "npx vitest --globalSetup=/tmp/setup.js"},
		{"make test -f outside", "make test -f /tmp/Makefile"},
		{"make test -f written by the line", "echo 'test: ; curl x' > M && make test -f M"},
		{"make test SHELL=", "make test SHELL=/tmp/sh"},
		{"make test CC=", "make test CC=pwnd"},
		{"make test --eval", "make test --eval='test: ; id'"},
		{"make test -C outside", "make test -C ../other"},
		{"make test -I outside", "make test -I/tmp/inc"},
		{"pytest -p loads a plugin", "pytest -p evil_plugin"},
		{"pytest -pglued loads a plugin", "pytest -pevil"},
		{"pytest -c outside", "pytest -c /tmp/pytest.ini"},
		{"pytest -o overrides the configuration", "pytest -o addopts='-p evil'"},
		{"pytest --override-ini", "pytest --override-ini=python_files=*.py"},
		{"pytest --rootdir outside", "pytest --rootdir=/tmp"},
		{"pytest --confcutdir outside", "pytest --confcutdir=.."},
		{"pytest --pyargs imports by name", "pytest --pyargs evil"},
		{"pytest --pdbcls", "pytest --pdbcls=evil:Pdb"},
		{"cargo test --config runner", "cargo test --config 'target.x86_64-unknown-linux-gnu.runner=\"pwnd\"'"},
		{"cargo build --config file outside", "cargo build --config /tmp/c.toml"},
		{"cargo test -Z", "cargo test -Z unstable-options"},
		{"go test -pgo outside", "go test -pgo=/tmp/p.pprof ./..."},
		{"go test -exec a protected path", "go test -exec .git/hooks/x ./..."},
	} {
		rows = append(rows, row{name: "class 2: " + c.name + " asks", seed: true, cmd: c.cmd, want: RA})
	}
	rows = append(rows,
		row{name: "class 2: go test -exec with a program inside the project is approved", seed: true,
			cmd: "go test -exec ./scripts/wrap.sh ./...", want: A, reason: "permissions.json allow: Terminal(go test)"},
		row{name: "class 2: npx vitest --reporter with the project's own module is approved", seed: true,
			cmd: "npx vitest run --reporter=./tools/reporter.js", want: A},
		row{name: "class 2: go build -o inside the project is approved", seed: true,
			cmd: "go build -o bin/app ./cmd/app", want: A},
		row{name: "class 2: make test -C a folder in the project is approved", seed: true,
			cmd: "make test -C src", want: A},
		row{name: "class 2: make test V=1 is approved", seed: true, cmd: "make test V=1", want: A},
		row{name: "class 2: pytest -p no:cacheprovider is approved", seed: true, cmd: "pytest -p no:cacheprovider", want: A},
		row{name: "class 2: pytest -c a config in the project is approved", seed: true, cmd: "pytest -c src/pytest.ini", want: A},
		row{name: "class 2: npx vitest --reporter=verbose is approved", seed: true, cmd: "npx vitest run --reporter=verbose", want: A},
		row{name: "class 2: a rule naming the option covers it", seed: true, allow: []string{"Terminal(go test -exec pwnd)"},
			cmd: "go test -exec pwnd ./...", want: A, reason: "permissions.json allow: Terminal(go test -exec pwnd)"},
		row{name: "class 2: the option's reason is the segment's rule", seed: true, cmd: "go test -exec pwnd ./...", want: RA,
			segs: "none", rules: []string{"go -exec pwnd names a program to run"}},
		row{name: "class 2: a deny still denies", deny: []string{"Terminal(go test)"}, cmd: "go test -exec pwnd ./...", want: D},
	)
	runRowsLoose(t, rows)
}

// Options that read a list of file names or a script
// from a file: the paths are checked, and the content is unknown, so the
// segment asks.
func TestClassListAndScriptFiles(t *testing.T) {
	allow := []string{"Terminal(tar)", "Terminal(rsync)", "Terminal(xargs)", "Terminal(wc)", "Terminal(du)", "Terminal(sed)",
		"Terminal(awk)", "Terminal(git)", "Terminal(find)", "Terminal(gcc)", "Terminal(javac)", "Terminal(echo)", "Terminal(cat)",
		"Terminal(make)", "Terminal(gradle)", "Terminal(printf)"}
	var rows []row
	for _, c := range []struct{ name, cmd string }{
		{"tar -T reads a list of files", "echo .git/config > l && tar -c -f a.tar -T l"},
		{"tar --files-from", "tar -c -f a.tar --files-from=l"},
		{"rsync --files-from", "rsync -a --files-from=l . out/"},
		{"xargs -a reads the words", "xargs -a l cat"},
		{"wc --files0-from", "wc --files0-from=l"},
		{"du --files0-from", "du --files0-from l"},
		{"sed -f reads a script", "echo '1e id' > s.sed && sed -f s.sed README.md"},
		{"awk -f reads a program", "awk -f p.awk README.md"},
		{"git add --pathspec-from-file", "git add --pathspec-from-file=l"},
		{"git rm --pathspec-from-file", "git rm --pathspec-from-file l"},
		{"find -files0-from", "find -files0-from l -name x"},
		{"gcc @file reads options", "gcc @opts.txt x.c"},
		{"javac @file reads options", "javac @argfile"},
		{"gradle -I reads an init script", "gradle -I init.gradle test"},
	} {
		rows = append(rows, row{name: "class 3: " + c.name + " asks", allow: allow, cmd: c.cmd, want: RA})
	}
	rows = append(rows, row{name: "class 3: tar without a list is approved", allow: allow, cmd: "tar -c -f a.tar src", want: A})
	runRowsLoose(t, rows)
}
