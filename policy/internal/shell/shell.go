package shell

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// MaxCommandBytes is the largest command line Decide analyses; a longer one
// requires approval.
const MaxCommandBytes = 64 << 10

// MaxNesting and MaxSegments bound the analysis of one line, so that its
// cost and the size of its decision stay linear in the line (DESIGN §9,
// "Bounded analysis"). Past either the line asks a human, unless a segment
// read before the limit is denied.
const (
	MaxNesting  = 32
	MaxSegments = 256
)

// maxShellDepth bounds the recursion into `bash -c '<script>'`.
const maxShellDepth = 4

// maxCwds bounds the set of directories a line may be in at one point;
// past it the directory is taken as unknown.
const maxCwds = 16

// ErrParse is the class of errors for command lines Decide refuses to
// analyse.
var ErrParse = errors.New("command cannot be analysed")

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// ParseShell parses src with the bash grammar. A panic inside the parser is
// turned into an error: the caller then asks a human.
func ParseShell(src string) (f *syntax.File, err error) {
	p := parserPool.Get().(*syntax.Parser)
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("%w: parser failed: %v", ErrParse, r)
			return // a parser that panicked is not put back
		}
		parserPool.Put(p)
	}()
	f, err = p.Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	return f, nil
}

// CheckCommandText refuses command lines that are too large or hold NUL
// bytes before any parsing.
func CheckCommandText(cmd string) error {
	if len(cmd) > MaxCommandBytes {
		return fmt.Errorf("%w: %d bytes is over the %d-byte limit", ErrParse, len(cmd), MaxCommandBytes)
	}
	if strings.IndexByte(cmd, 0) >= 0 {
		return fmt.Errorf("%w: it holds a NUL byte", ErrParse)
	}
	if strings.TrimSpace(cmd) == "" {
		return fmt.Errorf("%w: it is empty", ErrParse)
	}
	return nil
}

// analyzer turns a parsed line into segments.
type analyzer struct {
	segs   []*Segment
	funcs  map[string]bool
	cdpath bool // the line may set CDPATH (mentionsCDPATH)
	// files are the line and the bash -c scripts in it; tainted are the
	// variables any of them (the first tainted of them) may set to a string:
	// bash evaluating one as arithmetic runs the command substitutions in
	// its array subscripts.
	files   []srcFile
	tainted map[string]bool
	taintOf int
	// nest is how deep the walk is in nested constructs; overflow says why
	// the walk stopped early (MaxNesting, MaxSegments), "" when it did not.
	nest     int
	overflow string
	// piped is true while the walk is on the right of a pipe: the programs
	// there read the left side's output.
	piped bool
	// loop holds the loop variables bound to a list of paths inside the
	// folder the loop runs in (boundLoop), for the body's segments.
	loop map[string][]word
	// namesProtected reports whether a find -name pattern may match the
	// name of a protected path (the caller's protected table).
	namesProtected func(pattern string) bool
}

type srcFile struct {
	src string
	f   *syntax.File
}

// Analysis is what Analyze found in a line: its segments, and why the
// analysis stopped before the end of the line ("" when it did not).
type Analysis struct {
	Segs     []*Segment // in the order the walk met them
	Overflow string     // MaxNesting or MaxSegments was reached: why
}

// Analyze splits cmd into every program it would run, starting in the
// directories of cwd.
func Analyze(cmd string, cwd CwdSet, namesProtected func(pattern string) bool) (Analysis, error) {
	if err := CheckCommandText(cmd); err != nil {
		return Analysis{}, err
	}
	f, err := ParseShell(cmd)
	if err != nil {
		return Analysis{}, err
	}
	a := &analyzer{cdpath: mentionsCDPATH(cmd, f), segs: make([]*Segment, 0, 8), namesProtected: namesProtected}
	a.files = append(a.files, srcFile{cmd, f})
	a.stmts(cmd, f.Stmts, cwd, nil, 0)
	if why, at := lineDisagreement(cmd, f); why != "" {
		a.segs = append(a.segs, &Segment{Text: at, Cwds: cwd, Opaque: why})
	}
	if a.overflow == "" {
		a.lineState(cmd, f, cwd)
		a.arithmetic(cmd, f, cwd)
		for _, s := range a.segs {
			s.freezeTokens()
			a.checkArgs(s)
		}
		for _, s := range a.segs {
			if v := s.VerbAsWritten(); s.Opaque == "" && a.funcs[v] {
				s.Opaque = "calls the function " + v + " defined in the line"
			}
		}
	}
	return Analysis{Segs: a.segs, Overflow: a.overflow}, nil
}

// enter notes one more level of nesting, and reports false (recording
// why) when the analysis must stop.
func (a *analyzer) enter() bool {
	switch {
	case a.overflow != "":
		return false
	case a.nest >= MaxNesting:
		a.overflow = fmt.Sprintf("the line nests deeper than %d levels", MaxNesting)
		return false
	case len(a.segs) >= MaxSegments:
		a.overflow = fmt.Sprintf("the line runs more than %d programs", MaxSegments)
		return false
	}
	a.nest++
	return true
}

func (a *analyzer) leave() { a.nest-- }

// add appends a segment unless the line already has MaxSegments.
func (a *analyzer) add(s *Segment) bool {
	if len(a.segs) >= MaxSegments {
		if a.overflow == "" {
			a.overflow = fmt.Sprintf("the line runs more than %d programs", MaxSegments)
		}
		return false
	}
	a.segs = append(a.segs, s)
	return true
}

// stmts walks a statement list run one after another, returning where the
// line may be afterwards.
func (a *analyzer) stmts(src string, list []*syntax.Stmt, cwd CwdSet, inh []redir, depth int) CwdSet {
	for _, st := range list {
		if a.overflow != "" {
			return cwd
		}
		_, cwd = a.stmt(src, st, cwd, inh, depth)
	}
	return cwd
}

// stmt walks one statement. It returns the directories the line may be in
// if the statement succeeded, and whatever happened.
func (a *analyzer) stmt(src string, st *syntax.Stmt, cwd CwdSet, inh []redir, depth int) (ok, any CwdSet) {
	if !a.enter() {
		return cwd, cwd
	}
	defer a.leave()
	redirs := inh
	if len(st.Redirs) > 0 {
		redirs = append(append([]redir(nil), inh...), a.redirects(src, st.Redirs, cwd, depth)...)
	}
	before := len(a.segs)
	ok, any = a.command(src, st.Cmd, cwd, redirs, depth)
	if len(st.Redirs) > 0 && len(a.segs) == before {
		// A redirection with no program of its own to carry it (`> f`,
		// `(( 1 )) > f`, `if …; fi > f` around nothing): it still opens
		// its file, so it is a segment of its own.
		a.add(&Segment{Text: sourceOf(src, st), redirs: redirs, Cwds: cwd, Bare: true})
	}
	if st.Background || st.Coprocess || st.Disown {
		return cwd, cwd // runs in a subshell: nothing moves
	}
	return ok, any
}

// redirects reads the targets of rs. A heredoc's delimiter and a
// here-string are data; a duplication of a descriptor (2>&1) is no path.
func (a *analyzer) redirects(src string, rs []*syntax.Redirect, cwd CwdSet, depth int) []redir {
	var out []redir
	for _, r := range rs {
		if r.Word != nil {
			w := DecodeWord(src, r.Word)
			kind := argPath
			switch r.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.ClbOut, syntax.RdrInOut, syntax.RdrAll, syntax.AppAll:
				kind = ArgWrite
			case syntax.DplOut:
				kind = ArgWrite
				if w.Static && (isDigits(w.Text) || w.Text == "-") {
					kind = argData
				}
			case syntax.DplIn:
				if w.Static && (isDigits(w.Text) || w.Text == "-") {
					kind = argData
				}
			case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
				kind = argData
			}
			out = append(out, redir{w: w, kind: kind})
			a.nested(src, r.Word, cwd, depth)
		}
		if r.Hdoc != nil {
			a.nested(src, r.Hdoc, cwd, depth)
		}
	}
	return out
}

// nested walks every command or process substitution inside n; each runs in
// a subshell, so it moves nothing.
func (a *analyzer) nested(src string, n syntax.Node, cwd CwdSet, depth int) {
	if n == nil || a.overflow != "" {
		return
	}
	if w, ok := n.(*syntax.Word); ok && plainWord(w) {
		return // the common case, without the cost of a Walk
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if a.overflow != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			if a.enter() {
				a.stmts(src, x.Stmts, cwd, nil, depth)
				a.leave()
			}
			return false
		case *syntax.ProcSubst:
			if a.enter() {
				a.stmts(src, x.Stmts, cwd, nil, depth)
				a.leave()
			}
			return false
		}
		return true
	})
}

// plainWord reports whether w is made only of literals and single-quoted
// strings, which cannot hold a substitution.
func plainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}

func (a *analyzer) command(src string, cmd syntax.Command, cwd CwdSet, redirs []redir, depth int) (ok, any CwdSet) {
	switch c := cmd.(type) {
	case nil:
		return cwd, cwd
	case *syntax.CallExpr:
		return a.call(src, c, cwd, redirs, depth)
	case *syntax.DeclClause:
		s := &Segment{Text: sourceOf(src, c), redirs: redirs, Cwds: cwd}
		s.Words = append(s.Words, word{Text: c.Variant.Value, Static: true})
		for _, as := range c.Args {
			s.Words = append(s.Words, assignWord(src, as))
			a.nested(src, as, cwd, depth)
		}
		a.add(s)
		return cwd, cwd
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			okX, anyX := a.stmt(src, c.X, cwd, redirs, depth)
			okY, anyY := a.stmt(src, c.Y, okX, redirs, depth)
			return okY, anyX.union(anyY)
		case syntax.OrStmt:
			okX, anyX := a.stmt(src, c.X, cwd, redirs, depth)
			okY, anyY := a.stmt(src, c.Y, anyX, redirs, depth)
			return okX.union(okY), anyX.union(anyY)
		default: // pipes: each side is a subshell, the right one reads the left one
			a.stmt(src, c.X, cwd, redirs, depth)
			was := a.piped
			a.piped = true
			a.stmt(src, c.Y, cwd, redirs, depth)
			a.piped = was
			return cwd, cwd
		}
	case *syntax.Subshell:
		a.stmtList(src, c.Stmts, cwd, redirs, depth)
		return cwd, cwd
	case *syntax.Block:
		out := a.stmtList(src, c.Stmts, cwd, redirs, depth)
		return out, cwd.union(out)
	case *syntax.IfClause:
		out := cwd
		for cl := c; cl != nil; cl = cl.Else {
			after := a.stmtList(src, cl.Cond, cwd, redirs, depth)
			out = out.union(after).union(a.stmtList(src, cl.Then, after, redirs, depth))
		}
		return out, out
	case *syntax.WhileClause:
		after := a.stmtList(src, c.Cond, cwd, redirs, depth)
		out := cwd.union(after).union(a.stmtList(src, c.Do, after, redirs, depth))
		return out, out
	case *syntax.ForClause:
		a.nested(src, c.Loop, cwd, depth)
		was := a.loop
		a.loop = a.boundLoop(src, c)
		out := cwd.union(a.stmtList(src, c.Do, cwd, redirs, depth))
		a.loop = was
		return out, out
	case *syntax.CaseClause:
		a.nested(src, c.Word, cwd, depth)
		out := cwd
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				a.nested(src, p, cwd, depth)
			}
			out = out.union(a.stmtList(src, item.Stmts, cwd, redirs, depth))
		}
		return out, out
	case *syntax.FuncDecl:
		if a.funcs == nil {
			a.funcs = map[string]bool{}
		}
		if c.Name != nil {
			a.funcs[c.Name.Value] = true
		}
		for _, n := range c.Names {
			a.funcs[n.Value] = true
		}
		// The body runs wherever the function is called from, which the
		// line hides: its relative paths are resolved against the unknown.
		a.stmt(src, c.Body, CwdSet{Unknown: true}, redirs, depth)
		return cwd, cwd
	case *syntax.TimeClause:
		s := &Segment{Text: sourceOf(src, c), redirs: redirs, Cwds: cwd, Wraps: true, childAt: 1}
		s.Words = []word{{Text: "time", Static: true}}
		if c.PosixFormat {
			s.Words = append(s.Words, word{Text: "-p", Static: true})
			s.childAt = 2
		}
		a.add(s)
		if c.Stmt == nil {
			return cwd, cwd
		}
		return a.stmt(src, c.Stmt, cwd, redirs, depth)
	case *syntax.CoprocClause:
		a.stmt(src, c.Stmt, cwd, redirs, depth)
		return cwd, cwd
	case *syntax.TestDecl:
		a.stmt(src, c.Body, cwd, redirs, depth)
		return cwd, cwd
	default:
		// [[ ]], (( )) and let run no program; what they substitute does.
		a.nested(src, c, cwd, depth)
		return cwd, cwd
	}
}

func (a *analyzer) stmtList(src string, list []*syntax.Stmt, cwd CwdSet, redirs []redir, depth int) CwdSet {
	for _, st := range list {
		if a.overflow != "" {
			return cwd
		}
		_, cwd = a.stmt(src, st, cwd, redirs, depth)
	}
	return cwd
}

func assignWord(src string, as *syntax.Assign) word {
	if as.Name == nil && as.Value != nil { // naked argument of declare/export
		return DecodeWord(src, as.Value)
	}
	w := word{Text: sourceOf(src, as), Static: true}
	if as.Value != nil {
		v := DecodeWord(src, as.Value)
		prefix := as.Name.Value
		if as.Append {
			prefix += "+="
		} else {
			prefix += "="
		}
		w = word{Text: prefix + v.Text, Static: v.Static && as.Index == nil && as.Array == nil, glob: v.glob, brace: v.brace,
			substituted: v.substituted, params: v.params, paramOp: v.paramOp, nul: v.nul}
	} else if as.Array != nil || as.Index != nil {
		w.Static = false
	}
	return w
}

// call turns a simple command into its segment, and unwraps wrappers.
func (a *analyzer) call(src string, c *syntax.CallExpr, cwd CwdSet, redirs []redir, depth int) (ok, any CwdSet) {
	s := &Segment{Text: sourceOf(src, c), redirs: redirs, Cwds: cwd, cdpath: a.cdpath, input: a.piped, loopVars: a.loop}
	for _, r := range redirs {
		if r.kind != ArgWrite {
			s.input = true // <, <<, <<<: the program may read its code there
		}
	}
	for _, as := range c.Assigns {
		a.nested(src, as, cwd, depth)
		v := word{Static: true}
		if as.Value != nil {
			v = DecodeWord(src, as.Value)
		}
		if as.Array != nil || as.Index != nil {
			v.Static = false
		}
		if as.Name != nil && s.ProgEnv == "" && !harmlessEnv(as.Name.Value) {
			s.ProgEnv = as.Name.Value
		}
		if as.Name != nil && s.Opaque == "" && len(c.Args) > 0 && GitSafetyEnv(as.Name.Value) {
			s.Opaque = as.Name.Value + " set on the line changes which repository or configuration git uses"
		}
		if as.Name != nil && s.Opaque == "" && len(c.Args) > 0 && ProgramChoosing(as.Name.Value) {
			s.Opaque = as.Name.Value + " set on the line chooses the program or runs code in it"
		}
		if as.Name != nil && as.Name.Value == "TZ" {
			// TZ=:/etc/x reads that file as the time zone.
			v.Text = strings.TrimPrefix(v.Text, ":")
		}
		s.Assigns = append(s.Assigns, v)
	}
	s.envSet = len(c.Assigns) > 0
	s.Words = make([]word, 0, len(c.Args))
	for _, w := range c.Args {
		if items := expandBraces(w); items != nil {
			for _, it := range items {
				ew := word{Text: it, Static: true}
				decodeUnquotedLit(nil, it, &ew, true, &braceScan{})
				s.Words = append(s.Words, ew)
			}
			continue
		}
		s.Words = append(s.Words, DecodeWord(src, w))
		a.nested(src, w, cwd, depth)
	}
	if len(s.Words) == 0 {
		s.Bare = true
		a.add(s)
		return cwd, cwd
	}
	s.childAt = len(s.Words)
	if !a.add(s) {
		return cwd, cwd
	}
	a.classify(s, depth)
	if s.Opaque != "" {
		return cwd, cwd
	}
	if Base(s.Verb()) == "cd" || Base(s.Verb()) == "pushd" {
		if target, known := CdTarget(s); known {
			moved := cwd.cd(target)
			return moved, cwd.union(moved)
		}
		unknown := CwdSet{Unknown: true}
		return unknown, cwd.union(unknown)
	}
	if Base(s.Verb()) == "popd" {
		unknown := CwdSet{Unknown: true}
		return unknown, cwd.union(unknown)
	}
	return cwd, cwd
}
