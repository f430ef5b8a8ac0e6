package shell_test

// The generator's lexical classes: quotes, $'…' escapes, backslash-newline
// continuations and carriage returns (bashdiff_gen_test.go has the rest of
// the grammar).

import "strings"

var bashQuotePlain = []bashProd{
	func(g *bashGen) string {
		return g.pick(`echo 'hello world'`, `echo "a  b"`, `cat 'a.txt'`, `cat "a.txt"`, `'git' status`,
			`"git" log -n 1`, `g'i't status`, `git "st"atus`, `\git status`, `gi\t status`, `ls "src"/'app'`,
			`grep -n 'hel''lo' a.txt`, `echo "it's"`, `echo 'say "hi"'`, `echo "\$HOME"`, `echo '$(git push)'`)
	},
	func(g *bashGen) string { return g.around(`echo "` + g.pick("a", "$PWD", "${PWD}", "`pwd`") + `"`) },
}

var bashQuoteTricky = []bashProd{
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

var bashAnsiCPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick(`echo $'a\tb'`, `grep -n $'hel\x6co' a.txt`, `cat $'a.txt'`, `$'\x67it' status`,
			`git $'\x73tatus'`, `echo $'\u00e9'`, `ls $'src'`, `echo $'it\'s'`, `cat $'\x61.txt'`,
			`echo $'\e[1m'`, `git log $'-n' 1`, `wc -l $'a\x2etxt'`)
	},
	func(g *bashGen) string { return "echo $'" + g.pick(`\cA`, `\c[`, `\c?`, `\E`, `\'`, `\"`, `\?`) + "'" },
}

var bashAnsiCTricky = []bashProd{
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
}

var bashContinuationPlain = []bashProd{
	func(g *bashGen) string { return "ca\\\nt a.txt" },
	func(g *bashGen) string {
		return g.benign() + " \\\n" + g.pick("", "  ") + g.pick("&& ", "| ") + g.benign()
	},
	func(g *bashGen) string { return "echo 'a\\\nb'" },
	func(g *bashGen) string { return "echo \"a\\\nb\" " + g.pick("", "&& "+g.benign()) },
	func(g *bashGen) string { return "git status \\\n--short" },
	func(g *bashGen) string { return "echo $((1+\\\n2))" },
}

var bashContinuationTricky = []bashProd{
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
	func(g *bashGen) string { return "echo `echo \\\\\n" + g.payload() + "`" },
	func(g *bashGen) string { return g.benign() + " \\\n\n" + g.payload() },
	func(g *bashGen) string { return "echo a\\\\\n" + g.payload() },
	func(g *bashGen) string { return "cd .\\\n. && ls" },
}

var bashCRPlain = []bashProd{
	func(g *bashGen) string { return "echo $'\\r'" + g.pick("", " && "+g.benign()) },
	func(g *bashGen) string { return "echo \"a\rb\"" + g.pick("", " && "+g.benign()) },
}

var bashCRTricky = []bashProd{
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
}
