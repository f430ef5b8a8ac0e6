package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell state that evaluates strings or re-maps names (DESIGN §9, "Words"):
// builtins that run a string as code (eval, trap, mapfile -C, compgen -W),
// that re-map what a name runs (alias, hash -p, enable, BASH_CMDS,
// BASH_ALIASES), options that change how bash reads the rest of the line,
// and variables whose value changes which program runs or what git reads.
// What the line does with them is not what it shows, so each makes the
// segment, or the line, opaque.

// builtinOpaque says why a builtin (or a program that acts like one) runs
// or re-maps code the line does not show, or "".
func builtinOpaque(name string, args []word) string {
	switch name {
	case "eval", "source", ".", "alias", "trap", "fc", "bind", "compgen", "complete":
		return name + " runs code the line does not show"
	case "enable":
		if len(args) > 0 {
			return "enable loads or turns off builtins: names may then run other programs"
		}
	case "hash":
		for _, a := range args {
			if !a.Static || strings.HasPrefix(a.Text, "-") && strings.ContainsAny(a.Text, "pd") {
				return "hash -p re-maps what a name runs"
			}
		}
	case "mapfile", "readarray":
		for _, a := range args {
			if !a.Static || strings.HasPrefix(a.Text, "-") && !strings.HasPrefix(a.Text, "--") && strings.ContainsRune(a.Text, 'C') {
				return name + " -C runs a callback the line names as a string"
			}
		}
	case "set":
		return setOpaque(args)
	case "shopt":
		return shoptOpaque(args)
	case "unset":
		for _, a := range args {
			if !a.Static {
				return "unset of a name the line computes: " + a.Text
			}
			if why := envUnset(a.Text); why != "" {
				return why
			}
			if ShellSensitive(a.Text) {
				return "unsets " + a.Text + ", which changes what bash or git runs"
			}
		}
	}
	return ""
}

// setOptions are the shell options a line may turn on or off: they change
// how errors and tracing behave, not what runs.
var setOptions = Set("errexit", "nounset", "xtrace", "verbose", "noglob", "noclobber", "pipefail")

func setOpaque(args []word) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			return "set with an option the line computes: " + a.Text
		}
		t := a.Text
		switch {
		case t == "--" || t == "-" || t == "+":
			return "" // the rest are the positional parameters
		case t == "-o" || t == "+o":
			if i+1 >= len(args) {
				return "" // set -o alone prints the options
			}
			i++
			if !args[i].Static || !setOptions[args[i].Text] {
				return "set -o " + args[i].Text + " changes how bash reads or runs the rest of the line"
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, c := range t[1:] {
				switch {
				case c == 'o': // set -euo pipefail: the next word names an option
					if i+1 < len(args) {
						i++
						if !args[i].Static || !setOptions[args[i].Text] {
							return "set -o " + args[i].Text + " changes how bash reads or runs the rest of the line"
						}
					}
				case !strings.ContainsRune("euxvfC", c):
					return "set " + t + " changes how bash reads or runs the rest of the line"
				}
			}
		default:
			return "" // positional parameters
		}
	}
	return ""
}

// shoptOptions are the bash options a line may change: globbing that stays
// inside the folder it starts in, and error handling.
var shoptOptions = Set("nullglob", "failglob", "globstar", "dotglob", "extglob", "nocasematch",
	"lastpipe", "inherit_errexit", "globasciiranges", "checkwinsize", "extquote")

func shoptOpaque(args []word) string {
	change := false
	for _, a := range args {
		if !a.Static {
			return "shopt with an option the line computes: " + a.Text
		}
		if strings.HasPrefix(a.Text, "-") {
			change = change || strings.ContainsAny(a.Text, "su")
			continue
		}
		if change && !shoptOptions[a.Text] && !setOptions[a.Text] {
			return "shopt " + a.Text + " changes how bash reads or runs the rest of the line"
		}
	}
	return ""
}

// ShellSensitive reports whether assigning a variable on the line (not as
// a prefix of one program) may change what a later program of the line
// runs or reads: it may already be in the environment, which makes bash
// pass the new value on (PATH=…, GOFLAGS=…, GIT_DIR=…), or it drives bash
// itself (IFS, PS4, BASH_CMDS, BASH_ALIASES). Lower-case names are the
// line's own, except the few programs read in lower case.
func ShellSensitive(name string) bool {
	if harmlessEnv(name) {
		return false
	}
	if strings.HasPrefix(name, "npm_config_") {
		return true
	}
	switch name {
	case "http_proxy", "https_proxy", "no_proxy", "all_proxy", "ftp_proxy":
		return true
	}
	return strings.ToLower(name) != name || name == "_"
}

// lineState adds an opaque segment when the line changes shell state that
// later programs of the line depend on: a sensitive variable set at
// statement level (not as one program's prefix), a function exported to
// child shells or named to be called implicitly, or a name reference.
func (a *analyzer) lineState(src string, f *syntax.File, cwd CwdSet) {
	if !mayChangeState(src) {
		return // the common line: nothing in it assigns, exports or defines
	}
	why, at := "", syntax.Node(nil)
	mark := func(n syntax.Node, reason string) {
		if why == "" {
			why, at = reason, n
		}
	}
	sensitive := func(n syntax.Node, name string) {
		if ShellSensitive(name) {
			mark(n, "the line sets "+name+", which changes what bash or its programs run")
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CallExpr:
			if len(x.Args) == 0 {
				for _, as := range x.Assigns {
					if as.Name != nil {
						sensitive(x, as.Name.Value)
					}
				}
			} else {
				for _, name := range assignedNames(src, x.Args) {
					sensitive(x, name)
				}
			}
		case *syntax.DeclClause:
			fn, export, ref := false, x.Variant.Value == "export", false
			for _, as := range x.Args {
				if as.Naked && as.Name == nil && as.Value != nil {
					if t := DecodeWord(src, as.Value).Text; strings.HasPrefix(t, "-") {
						fn = fn || strings.ContainsRune(t, 'f')
						export = export || strings.ContainsRune(t, 'x')
						ref = ref || strings.ContainsRune(t, 'n')
					}
					continue
				}
				if as.Name != nil {
					sensitive(x, as.Name.Value)
				}
			}
			switch {
			case fn && export:
				mark(x, "the line exports a function, which child shells run in place of a program")
			case ref:
				mark(x, "a name reference may rename any variable")
			}
		case *syntax.WordIter:
			sensitive(x, x.Name.Value)
		case *syntax.ParamExp:
			if x.Exp != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) && x.Param != nil {
				sensitive(x, x.Param.Value)
			}
		case *syntax.BinaryArithm:
			if x.Op >= syntax.Assgn && x.Op <= syntax.ShrAssgn {
				if w, ok := x.X.(*syntax.Word); ok {
					sensitive(x, w.Lit())
				}
			}
		case *syntax.UnaryArithm:
			if x.Op == syntax.Inc || x.Op == syntax.Dec {
				if w, ok := x.X.(*syntax.Word); ok {
					sensitive(x, w.Lit())
				}
			}
		case *syntax.DblQuoted:
			// Inside double quotes, bash reads the quotes of ${x:-'…'}
			// literally and expands what they hold; the parser takes them
			// for quotes. The line is not what either reads.
			for _, p := range x.Parts {
				if pe, ok := p.(*syntax.ParamExp); ok && holdsSingleQuotes(pe) {
					mark(x, "single quotes inside ${…} in double quotes, which bash reads as text and expands inside")
				}
			}
		case *syntax.FuncDecl:
			if x.Name != nil && x.Name.Value == "command_not_found_handle" {
				mark(x, "command_not_found_handle runs for every program bash does not find")
			}
		}
		return why == ""
	})
	if why != "" {
		a.add(&Segment{Text: sourceOf(src, at), Cwds: cwd, Opaque: why})
	}
}

// mayChangeState reports whether a line's text holds anything lineState
// looks for: an assignment, a builtin that sets variables, a loop
// variable, arithmetic, a function, or an operator in double quotes. A
// line with none of them is skipped without a walk.
func mayChangeState(src string) bool {
	for i := 0; i < len(src); i++ {
		if src[i] == '=' || src[i] == '(' {
			return true
		}
		for _, w := range stateWords[src[i]] {
			if strings.HasPrefix(src[i:], w) {
				return true
			}
		}
	}
	return false
}

// stateWords are the words mayChangeState looks for, by their first byte:
// one pass over the line finds any of them.
var stateWords = func() (t [256][]string) {
	for _, w := range []string{"for", "read", "printf", "mapfile", "getopts", "declare", "typeset", "local",
		"export", "readonly", "let", "${", "$'"} {
		t[w[0]] = append(t[w[0]], w)
	}
	return t
}()

// assignedNames returns the variables a builtin call sets: read's names
// (and -a's), mapfile's array, getopts' name, printf -v's (glued or not).
// A name the line computes is returned as its text, which holds no name.
func assignedNames(src string, args []*syntax.Word) []string {
	if len(args) == 0 {
		return nil
	}
	verb := Base(DecodeWord(src, args[0]).Text)
	var words []string
	for _, w := range args[1:] {
		words = append(words, DecodeWord(src, w).Text)
	}
	var out []string
	switch verb {
	case "printf":
		for i, t := range words {
			switch {
			case t == "-v" && i+1 < len(words):
				out = append(out, words[i+1])
			case strings.HasPrefix(t, "-v") && len(t) > 2:
				out = append(out, t[2:])
			}
		}
	case "read", "mapfile", "readarray":
		valued := "pdntuiNOsCc"
		for i := 0; i < len(words); i++ {
			t := words[i]
			if len(t) > 1 && t[0] == '-' {
				if j := strings.IndexByte(t, 'a'); j > 0 && verb == "read" {
					if j+1 < len(t) {
						out = append(out, t[j+1:])
					} else if i+1 < len(words) {
						out = append(out, words[i+1])
						i++
					}
					continue
				}
				if strings.ContainsRune(valued, rune(t[len(t)-1])) {
					i++ // the value of the last option of the cluster
				}
				continue
			}
			out = append(out, t)
		}
	case "getopts":
		if len(words) > 1 {
			out = append(out, words[1])
		}
	}
	return out
}

// interpreters run code from a file, a string or their input.
var interpreters = Set("python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "perl", "ruby",
	"php", "lua", "luajit", "Rscript", "julia", "deno", "bun", "tclsh", "wish", "osascript", "awk",
	"gawk", "mawk", "nawk", "irb", "erl", "escript", "elixir", "iex", "groovy", "jshell", "ts-node", "tsx")

// IsInterpreter reports whether a program (by basename) runs code it is
// given as a script, a string or its input.
func IsInterpreter(name string) bool {
	if interpreters[name] {
		return true
	}
	return strings.HasPrefix(name, "python3.") || strings.HasPrefix(name, "python2.")
}

// inlineCodeFlags are the interpreters' options whose value is the program.
var inlineCodeFlags = Set("-c", "-e", "-E", "--eval", "-p", "--print", "-r", "-m")

// interpreterInput says why an interpreter's program cannot be read from
// the line: it reads it from its input (a pipe, a heredoc, /dev/stdin, -).
func interpreterInput(name string, s *Segment) string {
	if !IsInterpreter(name) {
		return ""
	}
	operands := 0
	for _, w := range s.Words[1:] {
		t := w.Text
		if inlineCodeFlags[t] || strings.HasPrefix(t, "--eval=") {
			return ""
		}
		if w.Static && stdinPath(t) {
			return name + " reads its program from its input: " + t
		}
		if !strings.HasPrefix(t, "-") {
			operands++
		}
	}
	if operands == 0 && s.input {
		return name + " reads its program from its input"
	}
	return ""
}

// holdsSingleQuotes reports whether a parameter expansion's operand holds a
// single-quoted string.
func holdsSingleQuotes(pe *syntax.ParamExp) bool {
	found := false
	syntax.Walk(pe, func(n syntax.Node) bool {
		if q, ok := n.(*syntax.SglQuoted); ok && !q.Dollar {
			found = true
		}
		return !found
	})
	return found
}
