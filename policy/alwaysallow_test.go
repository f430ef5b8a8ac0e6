package policy

// Always allow (DESIGN §6.3): the unit recorded per segment, the refusals
// with code always_allow_cap, and that every recorded pattern parses back
// and matches the segment it came from.

import (
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"reflect"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

type alwaysRow struct {
	name string
	cmd  string
	want []string // nil: records nothing
}

var alwaysAllowRows = []alwaysRow{
	{"verb + subcommand when the 2nd token is a word: npm test", "npm test", []string{"Terminal(npm test)"}},
	{"verb + subcommand: git status", "git status", []string{"Terminal(git status)"}},
	{"verb + subcommand, the rest dropped: npm run build --prod", "npm run build --prod", []string{"Terminal(npm run)"}},
	{"verb + subcommand: mix test", "mix test", []string{"Terminal(mix test)"}},
	{"a runner: npx vitest run is the exact segment", "npx vitest run", []string{"Terminal(npx vitest run)"}},
	{"an interpreter: python3 scripts/gen.py is the exact segment", "python3 scripts/gen.py", []string{"Terminal(python3 scripts/gen.py)"}},
	{"an interpreter's inline code is the exact segment", "python3 -c 'print(1)'", []string{"Terminal(python3 -c 'print(1)')"}},
	{"node -e is the exact segment", "node -e 'console.log(1)'", []string{"Terminal(node -e 'console.log(1)')"}},
	{"a shell running a script file is the exact segment", "bash scripts/build.sh", []string{"Terminal(bash scripts/build.sh)"}},
	{"go run is the exact segment", "go run ./cmd/gen", []string{"Terminal(go run ./cmd/gen)"}},
	{"deno run is the exact segment", "deno run main.ts", []string{"Terminal(deno run main.ts)"}},
	{"perl and ruby too", "perl x.pl && ruby y.rb", []string{"Terminal(perl x.pl)", "Terminal(ruby y.rb)"}},
	{"a word may hold : and -: make test:unit", "make test:unit", []string{"Terminal(make test:unit)"}},
	{"verb alone when the 2nd token is not a word: cat src/x.ts", "cat src/x.ts", []string{"Terminal(cat)"}},
	{"verb alone: cd ../lib", "cd ../lib", []string{"Terminal(cd)"}},
	{"verb alone: cd src/app", "cd src/app", []string{"Terminal(cd)"}},
	{"verb alone: echo with a quoted sentence", "echo 'a b'", []string{"Terminal(echo)"}},
	{"verb alone: a glob argument", "ls *.go", []string{"Terminal(ls)"}},
	{"the exact segment when the 2nd token is a flag: ls -la src", "ls -la src", []string{"Terminal(ls -la src)"}},
	{"the exact segment when the 2nd token is a flag: rm -rf build", "rm -rf build", []string{"Terminal(rm -rf build)"}},
	{"the exact segment when the 2nd token is a flag: git -C x status", "git -C x status", []string{"Terminal(git -C x status)"}},
	{"the exact segment when the unit is a cap prefix: git remote -v", "git remote -v", []string{"Terminal(git remote -v)"}},
	{"the exact segment when the unit is a cap prefix: gh pr list", "gh pr list", []string{"Terminal(gh pr list)"}},
	{"the exact segment when the unit is a cap prefix: gh api repos/o/r", "gh api repos/o/r", []string{"Terminal(gh api repos/o/r)"}},
	{"the exact segment when the unit is a cap prefix: yarn npm info", "yarn npm info x", []string{"Terminal(yarn npm info x)"}},
	{"the exact segment for a git subcommand with mutating siblings: git branch", "git branch", []string{"Terminal(git branch)"}},
	{"the exact segment for a git subcommand with mutating siblings: git stash list", "git stash list", []string{"Terminal(git stash list)"}},
	{"a subcommand that is no cap prefix: kubectl get pods", "kubectl get pods", []string{"Terminal(kubectl get)"}},
	{"a subcommand that is no cap prefix: docker build .", "docker build .", []string{"Terminal(docker build)"}},
	{"a verb alone: ls", "ls", []string{"Terminal(ls)"}},
	{"nothing for a cap prefix even exact: git", "git", nil},
	{"nothing for a cap prefix even exact: gh", "gh", nil},
	{"nothing for a cap prefix even exact: kubectl", "kubectl", nil},
	{"nothing for a cap prefix even exact: npm", "npm", nil},
	{"nothing for a cap prefix even exact: docker", "docker", nil},
	{"nothing for an opaque segment: $x push", "$x push", nil},
	{"nothing for an opaque segment: eval", "eval echo hi", nil},
	{"nothing for an opaque segment: a shell reading stdin", "bash", nil},
	{"nothing for a bare assignment", "X=1", nil},
	{"nothing for a called function, its body records its own", "f() { ls; }; f", []string{"Terminal(ls)"}},
	{"one pattern per segment: cd src/app && npm test", "cd src/app && npm test", []string{"Terminal(cd)", "Terminal(npm test)"}},
	{"one pattern per segment, without repeats", "npm test; npm test && cat x.txt | cat", []string{"Terminal(npm test)", "Terminal(cat)"}},
	{"a word as the 2nd token is a subcommand, even for cat: cat README", "cat README", []string{"Terminal(cat README)"}},
	{"a wrapper records its verb alone plus the wrapped unit: timeout 60 npm test", "timeout 60 npm test",
		[]string{"Terminal(timeout)", "Terminal(npm test)"}},
	{"a wrapper: env A=1 npm test", "env A=1 npm test", []string{"Terminal(env)", "Terminal(npm test)"}},
	{"a wrapper: nice -n 5 make", "nice -n 5 make", []string{"Terminal(nice)", "Terminal(make)"}},
	{"a read-only unit that does not cover its segment records the exact segment: find -exec",
		`find . -name x -exec rm {} \;`, []string{"Terminal(find . -name x -exec rm '{}' ';')", "Terminal(rm)"}},
	{"a read-only unit that does not cover its segment records the exact segment: git log --output",
		"git log --output=x.txt", []string{"Terminal(git log '--output=x.txt')"}},
	{"a read-only unit covers a reading segment: find -name", "find . -name '*.go'", []string{"Terminal(find)"}},
	{"nothing when even the exact segment is guarded: GIT_DIR=x git status", "GIT_DIR=x git status", nil},
	{"nothing when a variable set on the line chooses the program: PATH=. make", "PATH=. make test", nil},
	{"bash -c records the flag that runs the literal script, and the script's units", "bash -c 'npm test'",
		[]string{"Terminal(bash -c)", "Terminal(npm test)"}},
	{"busybox records busybox alone and the applet's unit", "busybox ls -la", []string{"Terminal(busybox)", "Terminal(ls -la)"}},
	{"leading assignments are not recorded", "CI=true npm test", []string{"Terminal(npm test)"}},
	{"a nested program records its own unit", "echo $(git rev-parse HEAD)", []string{"Terminal(git rev-parse)", "Terminal(echo)"}},
}

func TestAlwaysAllowUnits(t *testing.T) {
	for _, r := range alwaysAllowRows {
		t.Run(r.name, func(t *testing.T) {
			got, err := AlwaysAllow(Click{Type: brabo.Terminal, Command: r.cmd})
			if err != nil {
				t.Fatalf("AlwaysAllow(%q): %v", r.cmd, err)
			}
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, r.want) {
				t.Fatalf("AlwaysAllow(%q) = %q, want %q", r.cmd, got, r.want)
			}
			// The same call is the preview: it records nothing and says the
			// same twice.
			again, _ := AlwaysAllow(Click{Type: brabo.Terminal, Command: r.cmd})
			if len(again) == 0 {
				again = nil
			}
			if !reflect.DeepEqual(again, got) {
				t.Fatalf("the preview is not stable: %q then %q", got, again)
			}
		})
	}
}

// Every derived pattern parses back (NewRules) and matches the segment it
// came from; a segment that records nothing is not matched by any.
func TestAlwaysAllowPatternsMatchTheirSegments(t *testing.T) {
	for _, r := range alwaysAllowRows {
		t.Run(r.name, func(t *testing.T) {
			patterns, err := AlwaysAllow(Click{Type: brabo.Terminal, Command: r.cmd})
			if err != nil {
				t.Fatal(err)
			}
			rules, err := NewRules("", patterns, nil, nil)
			if err != nil {
				t.Fatalf("the recorded patterns %q do not parse back: %v", patterns, err)
			}
			if len(rules.Warnings()) > 0 {
				t.Fatalf("the recorded patterns %q draw warnings: %q", patterns, rules.Warnings())
			}
			an, err := shell.Analyze(r.cmd, shell.CwdSet{Dirs: []string{"/p/src/app"}}, namesProtected)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range an.Segs {
				unit, ok := unitPattern(s)
				rule, _, matched := matchAllow(rules, s, s.Tokens())
				switch {
				case ok && !matched:
					t.Errorf("segment %q recorded %s, which does not match it", s.Text, unit)
				case ok && !shell.ContainsString(patterns, unit):
					t.Errorf("segment %q: its unit %s is not among %q", s.Text, unit, patterns)
				case !ok && matched && s.Opaque == "":
					// a segment that records nothing may still be matched by
					// another segment's unit (f() { ls; }; f: ls), never by its own
					if r.want == nil {
						t.Errorf("segment %q records nothing but %s matches it", s.Text, rule)
					}
				}
			}
		})
	}
}

// DESIGN §6.3's example: cd src/app && npm test records Terminal(cd) and
// Terminal(npm test), and the next cd lib/core && npm test -- --coverage
// runs without asking; so does timeout 60 npm test after its click.
func TestAlwaysAllowThenDecide(t *testing.T) {
	for _, c := range []struct{ click, next, cwd string }{
		{"cd src/app && npm test", "cd lib/core && npm test -- --coverage", ""},
		{"cd ../lib && cat x.ts", "cd ../src && cat y.ts", "docs"},
		{"timeout 60 npm test", "timeout 30 npm test -- --watch=false", ""},
		{"npm run build", "npm run lint", ""},
		{"ls -la src", "ls -la src", ""},
		{"git remote -v", "git remote -v", ""},
		{"bash -c 'npm test && cat x.ts'", "bash -c 'cat y.ts; npm test'", ""},
		{"find . -name x -exec rm {} \\;", "find . -name x -exec rm {} \\; -print", ""},
		{"git log --output=x.txt", "git log --output=x.txt -5", ""},
	} {
		t.Run(c.click, func(t *testing.T) {
			root := newProject(t)
			patterns, err := AlwaysAllow(Click{Type: brabo.Terminal, Command: c.click})
			if err != nil {
				t.Fatal(err)
			}
			rules, err := NewRules("", patterns, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{c.click, c.next} {
				d := Decide(Input{Type: brabo.Terminal, Command: cmd, Cwd: c.cwd, Role: brabo.Developer, Rules: rules,
					Scope: Scope{Root: root}})
				if d.Policy != brabo.AutoApprove || !strings.HasPrefix(d.Reason, "permissions.json allow: ") {
					t.Errorf("with %q in allow, %q is %s (%s)", patterns, cmd, d.Policy, d.Reason)
				}
			}
		})
	}
	// What the click did not cover still asks.
	root := newProject(t)
	patterns, _ := AlwaysAllow(Click{Type: brabo.Terminal, Command: "git remote -v"})
	rules, _ := NewRules("", patterns, nil, nil)
	for _, cmd := range []string{"git remote add x y", "git remote -v add x y", "git remote"} {
		d := Decide(Input{Type: brabo.Terminal, Command: cmd, Role: brabo.Developer, Rules: rules, Scope: Scope{Root: root}})
		if d.Policy == brabo.AutoApprove {
			t.Errorf("with %q in allow, %q was auto-approved (%s)", patterns, cmd, d.Reason)
		}
	}
}

// Refused with always_allow_cap: the seven types, and terminal commands with
// an external effect or privilege. Other types record their Label().
func TestAlwaysAllowRefusals(t *testing.T) {
	never := map[brabo.ActionType]bool{brabo.GitPush: true, brabo.PrOpen: true, brabo.GitMerge: true,
		brabo.ContainerRemove: true, brabo.InstructionPatch: true, brabo.Parallelize: true, brabo.RaiseMaxParallel: true,
		brabo.ContainerHandoff: true}
	if got := NeverAlwaysAllowTypes(); len(got) != len(never) {
		t.Errorf("NeverAlwaysAllowTypes() = %v, want the 7 of DESIGN §6.3 and container_handoff", got)
	}
	for _, typ := range brabo.ActionTypes() {
		if typ == brabo.Terminal {
			continue
		}
		t.Run(string(typ), func(t *testing.T) {
			got, err := AlwaysAllow(Click{Type: typ, Path: "src/x.go", Root: "/srv/p"})
			if NeverAlwaysAllow(typ) != never[typ] {
				t.Errorf("NeverAlwaysAllow(%s) = %v", typ, NeverAlwaysAllow(typ))
			}
			if never[typ] {
				if brabo.ErrorCode(err) != brabo.CodeAlwaysAllowCap || got != nil {
					t.Fatalf("AlwaysAllow(%s) = %q, %v; want the code always_allow_cap", typ, got, err)
				}
				if !strings.Contains(err.Error(), string(typ)) {
					t.Errorf("the refusal does not name the type: %v", err)
				}
				return
			}
			want := []string{typ.Label() + "()"}
			if typ == brabo.WriteFile {
				want = []string{"WriteFile(src/**)"} // bounded by path (DESIGN §9)
			}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("AlwaysAllow(%s) = %q, %v; want %q", typ, got, err, want)
			}
			if _, err := NewRules("", got, nil, nil); err != nil {
				t.Fatalf("%q does not parse back: %v", got, err)
			}
		})
	}
	for _, cmd := range []string{
		"git push", "git push origin main", "git -C src push", "/usr/bin/git push", "git remote add origin u",
		"git remote set-url origin u", "git merge main", "gh pr create --fill", "gh pr merge 1", "gh api -X POST x",
		"glab mr create", "kubectl apply -f x", "helm upgrade r c", "terraform apply", "docker push x",
		"npm publish --dry-run", "cargo publish", "sudo ls", "doas ls", "/usr/bin/sudo id",
		"ls && git push origin main", "echo $(git push)", "bash -c 'git push'", "env sudo ls", "timeout 5 git push",
		"busybox git push",
	} {
		t.Run("terminal "+cmd, func(t *testing.T) {
			got, err := AlwaysAllow(Click{Type: brabo.Terminal, Command: cmd})
			if brabo.ErrorCode(err) != brabo.CodeAlwaysAllowCap || got != nil {
				t.Fatalf("AlwaysAllow(%q) = %q, %v; want the code always_allow_cap", cmd, got, err)
			}
		})
	}
	for _, c := range []struct {
		typ  brabo.ActionType
		cmd  string
		code brabo.Code
	}{
		{"git_rebase", "", brabo.CodeInvalidAction},
		{brabo.Terminal, "ls &&", brabo.CodeInvalidAction},
		{brabo.Terminal, "", brabo.CodeInvalidAction},
		{brabo.Terminal, "ls\x00", brabo.CodeInvalidAction},
	} {
		if _, err := AlwaysAllow(Click{Type: c.typ, Command: c.cmd}); brabo.ErrorCode(err) != c.code {
			t.Errorf("AlwaysAllow(%s, %q): %v, want the code %s", c.typ, c.cmd, err, c.code)
		}
	}
}

// A click on a write_file records a path pattern bounded by the file's
// folder, never a protected path (DESIGN §9).
func TestAlwaysAllowWriteFile(t *testing.T) {
	root := "/srv/projects/acme"
	for _, c := range []struct{ path, want, code string }{
		{"src/app/x.ts", "WriteFile(src/app/**)", ""},
		{"/srv/projects/acme/src/x.ts", "WriteFile(src/**)", ""},
		{"README.md", "WriteFile(README.md)", ""},
		{"./docs/../notes.md", "WriteFile(notes.md)", ""},
		{"permissions.json", "", string(brabo.CodeAlwaysAllowCap)},
		{".git/hooks/pre-commit", "", string(brabo.CodeAlwaysAllowCap)},
		{".claude/settings.json", "", string(brabo.CodeAlwaysAllowCap)},
		{"CLAUDE.md", "", string(brabo.CodeAlwaysAllowCap)},
		{"../other/x", "", string(brabo.CodeInvalidAction)},
		{"src/a*b.ts", "", string(brabo.CodeAlwaysAllowCap)},
	} {
		got, err := AlwaysAllow(Click{Type: brabo.WriteFile, Path: c.path, Root: root})
		switch {
		case c.code != "" && string(brabo.ErrorCode(err)) != c.code:
			t.Errorf("%q: %q, %v; want the code %s", c.path, got, err, c.code)
		case c.code == "" && (err != nil || len(got) != 1 || got[0] != c.want):
			t.Errorf("%q: %q, %v; want %s", c.path, got, err, c.want)
		case c.code == "":
			rules, err := NewRules("", got, nil, nil)
			if err != nil {
				t.Fatalf("%q does not parse back: %v", got, err)
			}
			d := Decide(Input{Type: brabo.WriteFile, Path: c.path, Role: brabo.Developer, Rules: rules, Scope: Scope{Root: root}})
			if d.Policy != brabo.AutoApprove {
				t.Errorf("%q: the recorded %s does not approve the write it came from: %s (%s)", c.path, c.want, d.Policy, d.Reason)
			}
		}
	}
}
