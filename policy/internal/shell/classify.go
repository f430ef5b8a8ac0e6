package shell

// Classifying a segment once its words are read: the programs that cannot
// be known (opaque), and the wrappers, shells and find -exec whose program
// is a segment of its own.

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// mentionsCDPATH reports whether a line may set CDPATH, which sends
// `cd name` to a directory the line does not show (CDPATH=$(…) cd etc,
// echo ${CDPATH:=/}). Quotes, backslashes and $'…' escapes cannot hide the
// name from it.
func mentionsCDPATH(src string, f *syntax.File) bool {
	if strings.IndexByte(src, 'C') < 0 && !strings.Contains(src, "$'") {
		return false // no C to spell it with, and no escape to hide one in
	}
	if strings.Contains(cdpathUnquote.Replace(src), "CDPATH") {
		return true
	}
	if !strings.Contains(src, "$'") {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok && strings.Contains(DecodeWord(src, w).Text, "CDPATH") {
			found = true
		}
		return !found
	})
	return found
}

var cdpathUnquote = strings.NewReplacer("\\\n", "", "\\", "", "'", "", "\"", "")

// classify marks s opaque when its program cannot be known, and appends the
// programs that wrappers in s would run as segments of their own.
func (a *analyzer) classify(s *Segment, depth int) {
	v := s.Words[0]
	switch {
	case !v.Static:
		s.Opaque = "the program is an expansion, glob or brace expansion: " + v.Text
		return
	case v.Text == "":
		s.Opaque = "the program name is empty"
		return
	}
	readHelper(s)
	name := Base(s.Words[0].Text)
	if why := builtinOpaque(name, s.Words[1:]); why != "" {
		s.Opaque = why
		return
	}
	if why := externalToolOpaque(s); why != "" {
		s.Opaque = why
		return
	}
	if IsShell(name) {
		a.shell(s, depth)
		return
	}
	if name == "find" {
		a.findExec(s, depth)
		return
	}
	if spec, ok := wrappers[name]; ok {
		a.unwrap(s, spec, depth)
		return
	}
	if why := interpreterInput(name, s); why != "" {
		s.Opaque = why
	}
}

// child appends the program a wrapper runs as a segment of its own; at is
// the index in parent.words where it starts.
func (a *analyzer) child(parent *Segment, at int, words []word, assigns []word, cwd CwdSet, depth int) *Segment {
	s := &Segment{
		Text:    joinTokens(words),
		Words:   words,
		Assigns: append(append([]word(nil), parent.Assigns...), assigns...),
		envSet:  parent.envSet || len(assigns) > 0,
		redirs:  parent.redirs,
		Cwds:    cwd,
		cdpath:  parent.cdpath,
		ProgEnv: parent.ProgEnv,
		input:   parent.input,
		childAt: len(words),
		// A wrapper's program sees the loop's variable too.
		loopVars: parent.loopVars,
	}
	parent.Wraps = true
	if at < parent.childAt {
		parent.childAt = at
	}
	if !a.add(s) {
		return s
	}
	if !a.enter() {
		return s
	}
	a.classify(s, depth)
	a.leave()
	return s
}

func joinTokens(words []word) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w.Text
	}
	return strings.Join(parts, " ")
}

// IsShell reports whether a program (by basename) is a shell that runs a
// script it is given (bash, sh, zsh …).
func IsShell(name string) bool {
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox", "rbash", "tcsh", "csh", "fish":
		return true
	}
	return false
}

// shell handles `bash [opts] -c '<script>'` by parsing the script as its own
// line, and marks a shell that reads its script from elsewhere opaque.
func (a *analyzer) shell(s *Segment, depth int) {
	args := s.Words[1:]
	off := 1
	if Base(s.Verb()) == "busybox" {
		if len(args) == 0 {
			return // busybox alone lists its applets
		}
		if !IsShell(args[0].Text) || args[0].Text == "busybox" {
			// busybox rm -rf / runs rm: the applet is a program of its own,
			// and a deny on it must hold.
			a.child(s, 1, args, nil, s.Cwds, depth)
			return
		}
		args = args[1:]
		off = 2
	}
	hasC, stdin := false, false
	script := -1
	for i := 0; i < len(args); i++ {
		t := args[i]
		if !t.Static {
			s.Opaque = "a shell option or script is an expansion: " + t.Text
			return
		}
		if t.Text == "--" || t.Text == "-" {
			if t.Text == "-" {
				stdin = true
			}
			if i+1 < len(args) {
				script = i + 1
			}
			break
		}
		if (strings.HasPrefix(t.Text, "-") || strings.HasPrefix(t.Text, "+")) && len(t.Text) > 1 {
			if strings.HasPrefix(t.Text, "--") {
				if t.Text == "--rcfile" || t.Text == "--init-file" {
					i++
				}
				continue
			}
			flags := t.Text[1:]
			if flags == "o" || flags == "O" {
				i++
				continue
			}
			hasC = hasC || strings.ContainsRune(flags, 'c')
			stdin = stdin || strings.ContainsAny(flags, "si")
			continue
		}
		script = i
		break
	}
	switch {
	case hasC && script < 0:
		s.Opaque = "a shell -c without a script"
	case hasC:
		s.Wraps, s.childAt = true, off+script
		if depth+1 > maxShellDepth {
			s.Opaque = "shell -c nested too deep"
			return
		}
		text := args[script].Text
		f, err := ParseShell(text)
		if err != nil {
			s.Opaque = "the shell -c script does not parse"
			return
		}
		if why, _ := lineDisagreement(text, f); why != "" {
			s.Opaque = "the shell -c script: " + why
			return
		}
		a.cdpath = a.cdpath || mentionsCDPATH(text, f)
		before := len(a.segs)
		a.files = append(a.files, srcFile{text, f})
		if !a.enter() {
			return
		}
		a.stmts(text, f.Stmts, s.Cwds, s.redirs, depth+1)
		a.leave()
		if a.overflow != "" {
			return
		}
		a.lineState(text, f, s.Cwds)
		a.arithmetic(text, f, s.Cwds)
		for _, inner := range a.segs[before:] {
			inner.Assigns = append(append([]word(nil), s.Assigns...), inner.Assigns...)
			inner.envSet = inner.envSet || s.envSet
			if inner.ProgEnv == "" {
				inner.ProgEnv = s.ProgEnv
			}
		}
	case stdin || script < 0:
		s.Opaque = "a shell reading its script from standard input"
	case stdinPath(args[script].Text):
		s.Opaque = "a shell reading its script from standard input: " + args[script].Text
	}
}

// stdinPath reports whether a script path names the program's own input
// or another descriptor (/dev/stdin, /dev/fd/0, /proc/self/fd/0), whose
// content the line does not show.
func stdinPath(p string) bool {
	p = path.Clean(p)
	return p == "-" || p == "/dev/stdin" || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/") ||
		p == "/dev/tty" || strings.HasPrefix(p, "/dev/pts/")
}

// findExec turns each -exec/-execdir/-ok/-okdir of find into a segment.
func (a *analyzer) findExec(s *Segment, depth int) {
	for i := 1; i < len(s.Words); i++ {
		switch s.Words[i].Text {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(s.Words) && s.Words[j].Text != ";" && s.Words[j].Text != "+" {
				j++
			}
			if j == i+1 {
				s.Opaque = "find " + s.Words[i].Text + " without a program"
				return
			}
			a.child(s, len(s.Words), s.Words[i+1:j], nil, s.Cwds, depth)
			i = j
		}
	}
}
