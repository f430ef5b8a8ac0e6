package policy

import "testing"

// Over-strict lines: a loop variable over a literal list (or a glob
// inside the project) is each of its paths; [ is the test builtin.
func TestClassOverStrictLoopAndTest(t *testing.T) {
	rows := []row{
		{name: "over-strict: a loop over a literal list of files reads them", seed: true,
			cmd: `for f in README.md package.json; do head -3 "$f"; done`, want: A, reason: "permissions.json allow: Terminal(head)"},
		{name: "over-strict: a loop over a glob inside the project reads its files", seed: true,
			cmd: `for f in src/*.go docs/*.md; do head -3 "$f"; done`, want: A, reason: "permissions.json allow: Terminal(head)"},
		{name: "over-strict: ${f} is the loop variable too", seed: true,
			cmd: `for f in a.txt b.txt; do cat ${f}; wc -l "${f}"; done`, want: A},
		{name: "loop: a nested loop is read conservatively (its variables are not bound)", seed: true,
			cmd: `for d in src docs; do for f in a b; do ls "$d"; cat "$f"; done; done`, want: RA},
		{name: "over-strict: in auto mode [ -f package.json ] && cat package.json is approved", auto: true,
			cmd: `[ -f package.json ] && cat package.json`, want: A, reason: "agent_autonomy: auto_approve (wildcard)"},
		{name: "over-strict: [ -f package.json ] && cat package.json with the seeded rules and Terminal([)", seed: true,
			allow: []string{"Terminal([)"}, cmd: `[ -f package.json ] && cat package.json`, want: A},
		{name: "over-strict: test -d src && ls src", seed: true, allow: []string{"Terminal(test)"},
			cmd: `test -d src && ls src`, want: A},
		// What the loop does not spell out, or changes, is still checked.
		{name: "loop: an item outside the project meets the scope", seed: true,
			cmd: `for f in README.md ../other/.env; do cat "$f"; done`, want: RA},
		{name: "loop: an absolute item meets the scope", seed: true,
			cmd: `for f in /etc/passwd; do cat "$f"; done`, want: RA},
		{name: "loop: a body that reassigns the variable is a computed path", seed: true,
			cmd: `for f in a; do f=/etc/passwd; cat "$f"; done`, want: RA},
		{name: "loop: a body that reads into the variable is a computed path", seed: true,
			cmd: `for f in a; do read f < x; cat "$f"; done`, want: RA},
		{name: "loop: an item that is an option is not bound", allow: []string{"Terminal(rm)"},
			cmd: `for f in -rf; do rm "$f" x; done`, want: RA},
		{name: "loop: an item with a variable is not bound", seed: true,
			cmd: `for f in $HOME/x; do cat "$f"; done`, want: RA},
		{name: "loop: a protected item deleted through the variable is a protected write", allow: []string{"Terminal(rm)"}, auto: true,
			cmd: `for f in build .claude; do rm -rf "$f"; done`, want: RA, reason: "protected: "},
		{name: "loop: a variable used outside its loop is not bound", seed: true,
			cmd: `for f in a; do :; done; cat "$f"`, want: RA},
		{name: "loop: a write through the variable in a redirection is not bound", seed: true,
			cmd: `for f in a.txt; do echo x > "$f"; done`, want: RA},
	}
	runRowsLoose(t, rows)
}
