package policy

// The five classes of mis-reading found by running auto-approved
// lines under real bash (docs/shell-analysis.md has the table of
// constructs, each with the test that shows its treatment): the parser and
// bash disagreeing on the text, decoding that differs from bash, shell
// state that evaluates or re-maps names, paths brabo cannot see, and
// value-taking global options hiding the subcommand. Every row runs Decide
// with a file that would allow what bash really runs, so that a mis-read
// line would be auto-approved.

import (
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// classAllow allows the programs the attacks use, so that only the
// analysis stands between them and an auto-approval.
var classAllow = []string{"Terminal(echo)", "Terminal(cat)", "Terminal(printf)", "Terminal(ls)", "Terminal(git)",
	"Terminal(find)", "Terminal(cd)", "Terminal(true)", "Terminal(bash)", "Terminal(sh)", "Terminal(xargs)",
	"Terminal(mkdir)", "Terminal(mapfile)", "Terminal(hash)", "Terminal(compgen)", "Terminal(set)", "Terminal(shopt)",
	"Terminal(complete)", "Terminal(npm)", "Terminal(kubectl)", "Terminal(helm)", "Terminal(rm)", "Terminal(touch)"}

func TestClass1ParserAndBashDisagree(t *testing.T) {
	var rows []row
	for _, c := range []struct{ name, cmd string }{
		{"a backslash-newline at the end of a comment", "echo x #\\\ngit push origin main"},
		{"a backslash-newline after $ in double quotes", "echo \"$\\\nHOME\" && cat /e\\\ntc/passwd"},
		{"a backslash-newline in a heredoc's delimiter line", "cat <<E\\\nOF\nhi\nE\ngit push origin main\nEOF"},
		{"a backslash-CR-LF, which bash does not join", "echo a\\\r\ngit push origin main"},
		{"a CR-LF line end", "echo a\r\ngit push origin main"},
		{"a CR inside a word", "ls\r -la"},
		{"a backslash-newline after another backslash", "echo x\\\\\ngit push origin main"},
		{"a backslash-newline in a heredoc's body", "cat <<EOF\nhi\nEO\\\nF\ngit push origin main\nEOF"},
		{"a backslash-newline after $ outside quotes", "cat $\\\n{u:-/etc/passwd}"},
		{"a backslash-newline in a shell -c script", "bash -c 'echo x #\\\ngit push origin main'"},
	} {
		rows = append(rows,
			row{name: "class 1: " + c.name + " is never auto-approved", allow: classAllow, cmd: c.cmd, want: RA},
			row{name: "class 1: " + c.name + " is capped in auto mode", auto: true, cmd: c.cmd, want: RA, reason: "cap: "})
	}
	rows = append(rows,
		row{name: "class 1: a backslash-newline between words is joined where bash joins it", allow: classAllow,
			cmd: "ls \\\n  -la \\\n  src", want: A, reason: "permissions.json allow: Terminal(ls)", segs: "allow",
			tokens: []string{"ls -la src"}},
		row{name: "class 1: a backslash-newline inside a word is joined where bash joins it", allow: classAllow,
			cmd: "ec\\\nho x \"a\\\nb\" 'c\\\nd'", want: A, reason: "permissions.json allow: Terminal(echo)", segs: "allow",
			tokens: []string{"echo x ab c\\\nd"}},
		row{name: "class 1: single quotes inside ${x:-…} in double quotes are an operator's word: a path so written is opaque",
			allow: classAllow, cmd: `cat "${x:-'/etc/passwd'}"`, want: RA, segs: "opaque opaque"},
		// Bash reads those quotes as text and runs a $(…) between them,
		// which the parser takes for a quoted string: even printed, the
		// line is not what it reads.
		row{name: "class 1: single quotes inside ${x:-…} printed by echo hide a substitution", allow: classAllow,
			cmd: `echo "${u:-'$(git push origin main)'}"`, want: RA, segs: "allow opaque"},
		row{name: "class 1: single quotes inside ${x:-…} are capped in auto mode", auto: true,
			cmd: `echo "${u:-'$(git push origin main)'}"`, want: RA, reason: "cap: opaque segment"},
	)
	runRowsLoose(t, rows)
}

func TestClass2DecodingThatDiffersFromBash(t *testing.T) {
	var rows []row
	for _, c := range []struct{ name, cmd string }{
		{"$'\\0' after a subcommand", `git push$'\0' origin main`},
		{"$'\\x00' after a subcommand", `git push$'\x00' origin main`},
		{"$'\\u0000' after a subcommand", `git push$'\u0000' origin main`},
		{"$'\\400' after a subcommand", `git push$'\400' origin main`},
		{"$'\\c@', an escape brabo does not decode", `git push$'\c@' origin main`},
		{"a NUL escape in find's expression", `find . $'-exec\0' rm -rf {} \;`},
		{"a NUL escape in a path", `cat $'\0'/etc/passwd`},
		{"a quoted item in a brace expansion of find's expression", `find . {'-exec',} rm -rf {} \;`},
		{"a quoted item in a brace expansion of git's subcommand", `git {'push',} origin main`},
		{"a nested brace expansion", `git {pu{sh,},x} origin main`},
		{"a sequence brace expansion", `git pus{h..h} origin main`},
		{"git log --output hidden by a NUL", `git log $'--output\0'=/tmp/x`},
		{"git remote add behind a brace expansion", `git remote -v {'add',} origin https://evil`},
	} {
		rows = append(rows,
			row{name: "class 2: " + c.name + " is never auto-approved", allow: classAllow, seed: true, cmd: c.cmd, want: RA},
			row{name: "class 2: " + c.name + " is capped in auto mode", auto: true, cmd: c.cmd, want: RA, reason: "cap: "})
	}
	rows = append(rows,
		// cd's target is the scope's: where it leads is unknown, so the
		// path after it asks (auto mode frees the scope).
		row{name: "class 2: a quoted item in a brace expansion of cd's target leaves the line somewhere unknown", allow: classAllow,
			cmd: `cd {'..',} && cat ../../etc/passwd`, want: RA, reason: "scope: "},
		row{name: "class 2: a plain brace list is expanded exactly, item by item", allow: classAllow,
			cmd: "mkdir -p src/{components,hooks}", want: A, reason: "permissions.json allow: Terminal(mkdir)", segs: "allow",
			tokens: []string{"mkdir -p src/components src/hooks"}},
		row{name: "class 2: a plain brace list with an empty item drops it, as bash does", allow: classAllow,
			cmd: "cat {,/etc/passwd}", want: RA, reason: "scope: outside the project folder: /etc/passwd", segs: "allow",
			tokens: []string{"cat /etc/passwd"}},
		row{name: "class 2: a plain brace list in the subcommand is what bash runs", auto: true,
			cmd: "git {push,status} origin", want: RA, reason: "cap: external-effect git push"},
		row{name: "class 2: $'…' without a NUL is decoded", allow: classAllow, cmd: `echo $'a\tb'`, want: A,
			reason: "permissions.json allow: Terminal(echo)", segs: "allow"},
		row{name: "class 2: a NUL escape printed by echo is data", allow: classAllow, cmd: `echo $'a\0b'`, want: A,
			reason: "permissions.json allow: Terminal(echo)", segs: "allow"},
	)
	runRowsLoose(t, rows)
}

func TestClass3ShellStateThatEvaluatesOrRemaps(t *testing.T) {
	var rows []row
	for _, c := range []struct{ name, cmd string }{
		{"printf -v then [[ 'q' -eq 0 ]]", `printf -v q 'a[$(git push origin main)]'; [[ 'q' -eq 0 ]]`},
		{"glued printf -vq then (( q ))", `printf -vq 'a[$(git push origin main)]'; (( q ))`},
		{"$(( BASH_REMATCH ))", `[[ $(cat f) =~ (.*) ]]; echo $(( BASH_REMATCH ))`},
		{"$(( $_ ))", `true 'a[$(git push origin main)]'; echo $(( $_ ))`},
		{"$(( $1 )) after set --", `set -- 'a[$(git push origin main)]'; echo $(( $1 ))`},
		{"BASH_CMDS re-maps a name", `BASH_CMDS[ls]=/tmp/evil; ls`},
		{"BASH_ALIASES with expand_aliases", "shopt -s expand_aliases; BASH_ALIASES[ls]='git push origin main'\nls"},
		{"hash -p re-maps a name", `hash -p /tmp/evil ls; ls`},
		{"mapfile -C runs a callback", `mapfile -C 'git push' -c 1 < f`},
		{"compgen -W expands its words", `compgen -W '$(git push origin main)' x`},
		{"compgen -C runs a command", `compgen -C 'git push' x`},
		{"PS4 with set -x", `PS4='$(git push origin main)'; set -x; ls`},
		{"trap runs a string", `trap 'git push origin main' EXIT; ls`},
		{"complete -C", `complete -C 'git push' ls`},
		{"enable -f loads code", `enable -f ./x.so ls; ls`},
		{"bash reading /dev/stdin", `bash /dev/stdin <<< 'git push origin main'`},
		{"sh reading /dev/fd/0", `echo 'git push origin main' | sh /dev/fd/0`},
		{"bash reading /proc/self/fd/0", `bash /proc/self/fd/0 <<< 'git push origin main'`},
		{"xargs taking git's subcommand from its input", `echo push origin main | xargs git`},
		{"xargs -I putting its input into a script", `echo 'git push' | xargs -I% sh -c %`},
		{"a git alias defined then used", `git config alias.x '!git push origin main'; git x`},
		{"command_not_found_handle", `command_not_found_handle() { git push origin main; }; nosuchprogram`},
		{"export -f of a function named like a program", `ls() { git push; }; export -f ls; bash -c ls`},
		{"set -a exports every later assignment", `set -a; GIT_DIR=x; git status`},
		{"shopt -u globskipdots", `shopt -u globskipdots; cat .*/x`},
		{"a name reference", `declare -n r=PATH; r=/tmp/evil; ls`},
		{"unset of git's safety variables", `unset GIT_CONFIG_COUNT; git status`},
		{"env -u of git's safety variables", `env -u GIT_CONFIG_COUNT git status`},
		{"env -i", `env -i git status`},
		{"python reading its program from a pipe", `echo 'import os' | python3`},
		{"awk running a command", `awk 'BEGIN{system("git push")}'`},
		{"sed running a command", `sed '1e git push' x`},
		{"sed writing a file", `sed 's/a/b/w /tmp/x' f`},
	} {
		rows = append(rows,
			row{name: "class 3: " + c.name + " is never auto-approved", allow: append(classAllow, "Terminal(python3)",
				"Terminal(awk)", "Terminal(sed)", "Terminal(env)", "Terminal(enable)", "Terminal(nosuchprogram)", "Terminal(unset)"),
				seed: true, cmd: c.cmd, want: RA},
			row{name: "class 3: " + c.name + " is capped in auto mode", auto: true, cmd: c.cmd, want: RA})
	}
	rows = append(rows,
		row{name: "class 3: set -euo pipefail changes no program", allow: classAllow, cmd: "set -euo pipefail; ls",
			want: A, reason: "permissions.json allow: Terminal(set), Terminal(ls)", segs: "allow allow"},
		row{name: "class 3: sed with a plain substitution is a sed", allow: []string{"Terminal(sed)"},
			cmd: "sed -n 's/a/b/gp' f", want: A, reason: "permissions.json allow: Terminal(sed)", segs: "allow"},
	)
	runRowsLoose(t, rows)
}

func TestClass4PathsBraboCannotSee(t *testing.T) {
	runRowsLoose(t, []row{
		{name: "class 4: ${u:-/etc/passwd} is an operator: opaque", allow: classAllow, cmd: "cat ${u:-/etc/passwd}", want: RA, segs: "opaque"},
		{name: "class 4: {,/etc/passwd} expands to /etc/passwd", allow: classAllow, cmd: "cat {,/etc/passwd}", want: RA,
			reason: "scope: outside the project folder: /etc/passwd"},
		{name: "class 4: ${PWD?}/.. is an operator: opaque", allow: classAllow, cmd: "cat ${PWD?}/../x", want: RA, segs: "opaque"},
		{name: "class 4: ${PATH%%:*}/git is an operator: opaque", allow: classAllow, cmd: "ls ${PATH%%:*}/git", want: RA, segs: "opaque"},
		{name: "class 4: $BASH is a path the line computes", allow: classAllow, cmd: "cat $BASH", want: RA,
			reason: "scope: a path the line computes cannot be checked: $BASH"},
		{name: "class 4: $_ is a path the line computes", allow: classAllow, cmd: "true /etc/passwd; cat $_", want: RA,
			reason: "scope: a path the line computes cannot be checked: $_"},
		{name: "class 4: a redirection on a statement with no command", allow: classAllow, cmd: "echo hi; > /etc/passwd",
			want: RA, reason: `compound: the segment "> /etc/passwd" has no rule`},
		{name: "class 4: a redirection on (( ))", allow: classAllow, cmd: "(( 1 )) > /etc/x", want: RA},
		{name: "class 4: a redirection on an if around nothing", allow: classAllow, cmd: "if true; then true; fi > /etc/x",
			want: RA, reason: "scope: outside the project folder: /etc/x"},
		{name: "class 4: a read inside a process substitution", allow: classAllow, cmd: "cat <(</etc/shadow)", want: RA},
		{name: "class 4: a redirection with no command in auto mode is the scope's", auto: true, cmd: "> /etc/x", want: A},
		{name: "class 4: a glob in a write target is opaque", allow: classAllow, cmd: "echo x >> .gi?/config", want: RA, segs: "opaque"},
		{name: "class 4: a computed write target is opaque", allow: classAllow, cmd: "echo x > $(echo .git)/config",
			want: RA, segs: "allow opaque"},
		{name: "class 4: a relative glob read stays inside", allow: classAllow, cmd: "cat src/*.go", want: A,
			reason: "permissions.json allow: Terminal(cat)"},
		{name: "class 4: an absolute glob elsewhere is outside", allow: classAllow, cmd: "cat /e*/passwd", want: RA,
			reason: "scope: outside the project folder: /e*/passwd"},
	})
}

func TestClass5ValueTakingGlobalOptions(t *testing.T) {
	runRowsLoose(t, []row{
		{name: "class 5: npm --registry URL publish is a publish", auto: true, cmd: "npm --registry https://r.example publish",
			want: RA, reason: "cap: external-effect command npm publish"},
		{name: "class 5: kubectl --username u apply is an apply", auto: true, cmd: "kubectl --username u apply -f x.yaml",
			want: RA, reason: "cap: external-effect command kubectl apply"},
		{name: "class 5: helm --kube-tls-server-name x install is an install", auto: true,
			cmd: "helm --kube-tls-server-name x install r c", want: RA, reason: "cap: external-effect command helm install"},
		{name: "class 5: git --namespace x push is a push", auto: true, cmd: "git --namespace x push origin main",
			want: RA, reason: "cap: external-effect git push"},
		{name: "class 5: an unknown flag before git push is a push", auto: true, cmd: "git --bare push origin main",
			want: RA, reason: "cap: external-effect git push"},
		{name: "class 5: a flag's value that looks like a subcommand is not one when the flag is known", auto: true,
			cmd: "git -C push status", want: A},
	})
}

// Deny, ask and the built-in denies see through global options at least as
// widely as allow does (DESIGN §9).
func TestDenySeesThroughGlobalOptions(t *testing.T) {
	deny := []string{"Terminal(git reset --hard)", "Terminal(git clean)", "Terminal(npm publish)"}
	var rows []row
	for _, cmd := range []string{"git -C . reset --hard", "git --no-pager reset --hard", "git -P clean -fdx",
		"git --git-dir=.git reset --hard", "git -c x=y reset --hard", "/usr/bin/git -C . reset --hard",
		"npm --registry https://r.example publish", "npm --prefix x publish"} {
		rows = append(rows,
			row{name: "deny sees through: " + cmd, allow: []string{"Terminal(git)", "Terminal(npm)"}, deny: deny,
				cmd: cmd, want: D, reason: "permissions.json deny: "},
			row{name: "ask sees through: " + cmd, allow: []string{"Terminal(git)", "Terminal(npm)"}, ask: deny, auto: true,
				cmd: cmd, want: RA, reason: "permissions.json ask: "})
	}
	runRowsLoose(t, rows)
}

// Only variables known to be harmless leave a segment matchable by allow.
func TestEnvironmentPrefixesByAllowList(t *testing.T) {
	var rows []row
	for _, cmd := range []string{"NO_COLOR=1 git status", "FORCE_COLOR=0 git status", "CLICOLOR_FORCE=1 git status",
		"TERM=dumb git status", "COLUMNS=80 LINES=24 git status", "LANG=C git status", "LC_ALL=C git status",
		"TZ=UTC git status", "CI=1 git status"} {
		rows = append(rows, row{name: "harmless variable: " + cmd, seed: true, cmd: cmd, want: A,
			reason: "permissions.json allow: Terminal(git status)", segs: "allow"})
	}
	for _, cmd := range []string{"GOFLAGS=-toolexec=./x go test ./...", "PYTHONPATH=x pytest", "RUSTC_WRAPPER=./x cargo test",
		"MAKEFLAGS=x make test", "HOME=/tmp git status"} {
		rows = append(rows, row{name: "other variable keeps the segment off allow: " + cmd, seed: true, cmd: cmd, want: RA,
			reason: "default: no rule approves it", segs: "none"})
	}
	for _, cmd := range []string{"NODE_OPTIONS=--require=./x npm test", "PAGER=./x git log", "PATH=. git status",
		"LD_PRELOAD=./x.so git status", "GIT_DIR=x git status", "GIT_WORK_TREE=/ git status", "GIT_CONFIG_GLOBAL=./x git status",
		"GIT_CONFIG_COUNT=0 git status", "env GIT_DIR=x git status", "env -u GIT_CONFIG_COUNT git status", "env -i git status"} {
		rows = append(rows, row{name: "git's safety variables make the segment opaque: " + cmd, seed: true,
			allow: []string{"Terminal(env)"}, cmd: cmd, want: RA})
		rows = append(rows, row{name: "git's safety variables are capped in auto mode: " + cmd, auto: true, cmd: cmd, want: RA,
			reason: "cap: opaque segment"})
	}
	runRowsLoose(t, rows)
}

// The over-strict lines the differential test found, all plainly covered by an allow rule,
// are auto-approved, each by the rule that allows it.
func TestNoNeedlessQuestions(t *testing.T) {
	allow := []string{"Terminal(printf)", "Terminal(git commit)"}
	var rows []row
	for _, c := range []struct{ cmd, rule string }{
		{"NO_COLOR=1 git status", "Terminal(git status)"},
		{"LANG=C grep -rn x src", "Terminal(grep)"},
		{"git --no-pager log", "Terminal(git log)"},
		{"git -P log --oneline", "Terminal(git log)"},
		{"git -C src status", "Terminal(git status)"},
		{"git log -c", "Terminal(git log)"},
		{`grep -rn "/api/v1/users" src`, "Terminal(grep)"},
		{`git log --grep="/fix"`, "Terminal(git log)"},
		{"echo x=/tmp", "Terminal(echo)"},
		{`printf '%s\n' /`, "Terminal(printf)"},
		{"cat .git/config", "Terminal(cat)"},
		{"ls .git/hooks", "Terminal(ls)"},
		{`for f in a b; do echo "$f"; done`, "Terminal(echo)"},
		{"git commit -m \"$(cat <<'EOF'\nfix: the thing\n\nLonger body /with/paths.\nEOF\n)\"", "Terminal(cat), Terminal(git commit)"},
	} {
		rows = append(rows, row{name: "no needless question: " + c.cmd, seed: true, allow: allow, cmd: c.cmd, want: A,
			reason: "permissions.json allow: " + c.rule})
	}
	runRowsLoose(t, rows)
}

// A line past the analysis' bounds asks a human with one short reason,
// unless a segment read before the bound is denied; its decision is small
// whatever the line.
func TestBoundedAnalysis(t *testing.T) {
	deep := "echo " + strings.Repeat("$(", 8000) + "x" + strings.Repeat(")", 8000)
	many := strings.Repeat("ls; ", MaxSegments+10) + "ls"
	runRowsLoose(t, []row{
		{name: "bounded: 8,000 nested $(…) ask a human", auto: true, allow: classAllow, cmd: deep, want: RA,
			reason: "cap: the line nests deeper than 32 levels; a human reads it"},
		{name: "bounded: more segments than the cap ask a human", auto: true, allow: classAllow, cmd: many, want: RA,
			reason: "cap: the line runs more than 256 programs; a human reads it"},
		{name: "bounded: a denied segment before the bound still denies", allow: classAllow, deny: []string{"Terminal(curl)"},
			cmd: "curl x; " + deep, want: D, reason: "permissions.json deny: Terminal(curl)"},
	})
	// The decision's size: TestClassBoundedDecision (bound_test.go).
}

// runRowsLoose is runRows for rows that state only some of what a row can
// state: an empty reason or segs is not checked (never copied from the
// decision under test), every field a row states is, and a row that states
// no policy fails.
func runRowsLoose(t *testing.T, rows []row) {
	t.Helper()
	seen := map[string]bool{}
	root := newProject(t)
	for _, r := range rows {
		if seen[r.name] {
			t.Fatalf("row names must be unique: %q", r.name)
		}
		seen[r.name] = true
		t.Run(r.name, func(t *testing.T) {
			if r.want == "" {
				t.Fatal("the row states no policy it expects")
			}
			in := r.input(t, root)
			d := Decide(in)
			checkRow(t, r, in, d, root, true)
		})
	}
}

func verdictsOf(d brabo.Decision) string {
	var out []string
	for _, s := range d.Segments {
		out = append(out, string(s.Verdict))
	}
	return strings.Join(out, " ")
}

func describe(d brabo.Decision) string {
	var b strings.Builder
	for _, s := range d.Segments {
		b.WriteString("\n  " + string(s.Verdict) + " " + strings.Join(s.Tokens, " ") + " | " + s.Rule)
	}
	return b.String()
}
