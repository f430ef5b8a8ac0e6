package policy

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
		if w, ok := n.(*syntax.Word); ok && strings.Contains(decodeWord(src, w).text, "CDPATH") {
			found = true
		}
		return !found
	})
	return found
}

var cdpathUnquote = strings.NewReplacer("\\\n", "", "\\", "", "'", "", "\"", "")

// classify marks s opaque when its program cannot be known, and appends the
// programs that wrappers in s would run as segments of their own.
func (a *analyzer) classify(s *segment, depth int) {
	v := s.words[0]
	switch {
	case !v.static:
		s.opaque = "the program is an expansion, glob or brace expansion: " + v.text
		return
	case v.text == "":
		s.opaque = "the program name is empty"
		return
	}
	readHelper(s)
	name := base(s.words[0].text)
	if why := builtinOpaque(name, s.words[1:]); why != "" {
		s.opaque = why
		return
	}
	if why := externalToolOpaque(s); why != "" {
		s.opaque = why
		return
	}
	if isShell(name) {
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
		s.opaque = why
	}
}

// child appends the program a wrapper runs as a segment of its own; at is
// the index in parent.words where it starts.
func (a *analyzer) child(parent *segment, at int, words []word, assigns []word, cwd cwdSet, depth int) *segment {
	s := &segment{
		text:    joinTokens(words),
		words:   words,
		assigns: append(append([]word(nil), parent.assigns...), assigns...),
		envSet:  parent.envSet || len(assigns) > 0,
		redirs:  parent.redirs,
		cwds:    cwd,
		cdpath:  parent.cdpath,
		progEnv: parent.progEnv,
		input:   parent.input,
		childAt: len(words),
		// A wrapper's program sees the loop's variable too.
		loopVars: parent.loopVars,
	}
	parent.wraps = true
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
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func isShell(name string) bool {
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox", "rbash", "tcsh", "csh", "fish":
		return true
	}
	return false
}

// shell handles `bash [opts] -c '<script>'` by parsing the script as its own
// line, and marks a shell that reads its script from elsewhere opaque.
func (a *analyzer) shell(s *segment, depth int) {
	args := s.words[1:]
	off := 1
	if base(s.verb()) == "busybox" {
		if len(args) == 0 {
			return // busybox alone lists its applets
		}
		if !isShell(args[0].text) || args[0].text == "busybox" {
			// busybox rm -rf / runs rm: the applet is a program of its own,
			// and a deny on it must hold.
			a.child(s, 1, args, nil, s.cwds, depth)
			return
		}
		args = args[1:]
		off = 2
	}
	hasC, stdin := false, false
	script := -1
	for i := 0; i < len(args); i++ {
		t := args[i]
		if !t.static {
			s.opaque = "a shell option or script is an expansion: " + t.text
			return
		}
		if t.text == "--" || t.text == "-" {
			if t.text == "-" {
				stdin = true
			}
			if i+1 < len(args) {
				script = i + 1
			}
			break
		}
		if (strings.HasPrefix(t.text, "-") || strings.HasPrefix(t.text, "+")) && len(t.text) > 1 {
			if strings.HasPrefix(t.text, "--") {
				if t.text == "--rcfile" || t.text == "--init-file" {
					i++
				}
				continue
			}
			flags := t.text[1:]
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
		s.opaque = "a shell -c without a script"
	case hasC:
		s.wraps, s.childAt = true, off+script
		if depth+1 > maxShellDepth {
			s.opaque = "shell -c nested too deep"
			return
		}
		text := args[script].text
		f, err := parseShell(text)
		if err != nil {
			s.opaque = "the shell -c script does not parse"
			return
		}
		if why, _ := lineDisagreement(text, f); why != "" {
			s.opaque = "the shell -c script: " + why
			return
		}
		a.cdpath = a.cdpath || mentionsCDPATH(text, f)
		before := len(a.segs)
		a.files = append(a.files, srcFile{text, f})
		if !a.enter() {
			return
		}
		a.stmts(text, f.Stmts, s.cwds, s.redirs, depth+1)
		a.leave()
		if a.overflow != "" {
			return
		}
		a.lineState(text, f, s.cwds)
		a.arithmetic(text, f, s.cwds)
		for _, inner := range a.segs[before:] {
			inner.assigns = append(append([]word(nil), s.assigns...), inner.assigns...)
			inner.envSet = inner.envSet || s.envSet
			if inner.progEnv == "" {
				inner.progEnv = s.progEnv
			}
		}
	case stdin || script < 0:
		s.opaque = "a shell reading its script from standard input"
	case stdinPath(args[script].text):
		s.opaque = "a shell reading its script from standard input: " + args[script].text
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
func (a *analyzer) findExec(s *segment, depth int) {
	for i := 1; i < len(s.words); i++ {
		switch s.words[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(s.words) && s.words[j].text != ";" && s.words[j].text != "+" {
				j++
			}
			if j == i+1 {
				s.opaque = "find " + s.words[i].text + " without a program"
				return
			}
			a.child(s, len(s.words), s.words[i+1:j], nil, s.cwds, depth)
			i = j
		}
	}
}
