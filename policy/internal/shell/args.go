package shell

import "strings"

// pathWord is a text the path scope checks, and what the program does
// with it.
type pathWord struct {
	Text string
	Kind ArgKind
	// implied is a file the program writes without the line naming it
	// (git's config, the file a copy into a folder makes): the protected
	// rule reads it; the scope checks what the line names.
	Implied bool
	// program is the program itself, named by its path.
	Program bool
	// below is a folder only some files of which are written (find
	// -name '*.o' -delete): the folder itself is not replaced.
	Below bool
}

// checkArgs reads a segment's words with the operand table and decides,
// word by word, what a check can rely on (DESIGN §9, "Words"): a program,
// a subcommand or an option must be spelled out exactly, or the segment is
// opaque; a path is checked by its text when bash's reading of it is
// certain (or a glob, or a form DESIGN names as a path: ~, $HOME, $PWD),
// and is a path the line computes otherwise, unless its form (a NUL, a
// brace expansion, an operator) makes the segment opaque; a path written
// must be certain; a printed string may be anything.
func (a *analyzer) checkArgs(s *Segment) {
	s.Paths = make([]pathWord, 0, len(s.redirs)+len(s.Assigns)+len(s.Words)+1)
	for _, r := range s.redirs {
		a.checkPath(s, r.w, r.kind, "")
	}
	for _, v := range s.Assigns {
		if v.Static {
			s.Paths = append(s.Paths, pathWord{Text: v.Text, Kind: ArgUnknown})
		}
	}
	if s.Opaque != "" || s.Bare || len(s.Words) == 0 {
		return
	}
	// A program named by its path is a path too (/usr/bin/x, ../tool).
	s.Paths = append(s.Paths, pathWord{Text: s.VerbAsWritten(), Kind: argPath, Program: true})
	prog := Base(s.Verb())
	switch prog {
	case "declare", "typeset", "local", "export", "readonly":
		// Assignments, not arguments: what they set is lineState's
		// business, and their values are read by nobody as paths.
		return
	case "cd", "pushd", "popd":
		// Where a cd leads is the cwd tracking's business: a target the
		// line does not spell out leaves the line somewhere unknown,
		// which the scope reports.
		for _, w := range s.Words[1:] {
			if w.Static {
				s.Paths = append(s.Paths, pathWord{Text: w.Text, Kind: argDir})
			}
		}
		return
	}
	if s.Wraps {
		// The wrapper's own words (its options, timeout's duration) were
		// read by unwrap, which refuses any it does not know; the wrapped
		// program is a segment of its own.
		for _, w := range s.Words[1:min(s.childAt, len(s.Words))] {
			if w.Static {
				s.Paths = append(s.Paths, pathWord{Text: w.Text, Kind: ArgUnknown})
			}
		}
		return
	}
	s.RunOpts = runOptionHits(s.Words, s.Tokens())
	if prog == "find" {
		a.findArgs(s)
		return
	}
	args, spec := readArgs(prog, s.Words[1:])
	if prog == "sed" && sedInPlace(args) {
		for i := range args {
			if !args[i].option && args[i].kind == argPath {
				args[i].kind = ArgWrite
			}
		}
	}
	safe := spec != nil && spec.safeOptions
	for i := range args {
		ar := &args[i]
		w := ar.w
		if s.Opaque != "" {
			return
		}
		if ar.subcommand && !w.Static {
			s.Opaque = "the subcommand is an expansion: " + w.Text
			return
		}
		if items := s.loopRef(w); items != nil && !ar.option {
			// The loop variable: each item, none of which is an option.
			for k := range items {
				a.checkWord(s, &items[k], items[k].Text, ar.kind)
			}
			continue
		}
		text := w.Text
		if ar.option {
			if ar.value == "" {
				if !w.Static && !safe {
					s.Opaque = "an option the line computes: " + w.Text
				}
				continue
			}
			if prefix := strings.TrimSuffix(text, ar.value); strings.ContainsAny(prefix, "$`*?[{~") && !safe {
				s.Opaque = "an option the line computes: " + w.Text
				return
			}
			text = ar.value
		} else if !w.Static && ar.optionPlace && w.mayBeOption() && !safe {
			s.Opaque = "an expansion where an option may stand: " + w.Text
			return
		}
		if ar.option && w.Static || !ar.option {
			a.checkWord(s, w, text, ar.kind)
		} else {
			a.checkValue(s, w, text, ar.kind)
		}
	}
	if s.Opaque == "" {
		a.checkCode(s, prog, args)
	}
	if prog == "git" {
		s.Paths = append(s.Paths, gitRepoPaths(args)...)
	}
	for _, pw := range impliedWrites(prog, s.Tokens(), args) {
		pw.Implied = true
		s.Paths = append(s.Paths, pw)
	}
	if s.stdinArgs && s.Opaque == "" {
		if !safe {
			s.Opaque = "xargs adds words it reads to a program whose options may write or run code"
		} else if s.Computed == "" {
			s.Computed = "xargs adds the words it reads"
		}
	}
}

// checkWord checks one operand (or an option word with a static value).
func (a *analyzer) checkWord(s *Segment, w *word, text string, kind ArgKind) {
	if kind == argData {
		if globOnly(w) {
			// A printed glob is data, but bash lists the folder it names.
			s.Paths = append(s.Paths, pathWord{Text: text, Kind: argPath})
		}
		return
	}
	if w.Static {
		s.Paths = append(s.Paths, pathWord{Text: text, Kind: kind})
		return
	}
	a.checkPath(s, *w, kind, text)
}

// checkValue checks the value glued to an option whose name is static but
// whose value is not (--output=$x).
func (a *analyzer) checkValue(s *Segment, w *word, value string, kind ArgKind) {
	if kind == argData {
		return
	}
	v := *w
	v.Text = value
	a.checkPath(s, v, kind, value)
}

// checkPath checks a word that stands for a path of the given kind.
func (a *analyzer) checkPath(s *Segment, w word, kind ArgKind, text string) {
	if text == "" {
		text = w.Text
	}
	switch {
	case kind == argData || w.onlyProcSubst:
		return
	case w.Static:
		s.Paths = append(s.Paths, pathWord{Text: text, Kind: kind})
		return
	}
	if why := w.opaqueForm(); why != "" {
		s.Opaque = why
		return
	}
	known := pathKnown(&w)
	switch kind {
	case ArgWrite, argDir, ArgUnknown:
		switch {
		case known:
			s.Paths = append(s.Paths, pathWord{Text: text, Kind: kind})
		case kind == ArgWrite && w.glob:
			s.Opaque = "a glob where a file is written: " + text
		case kind == ArgWrite:
			s.Opaque = "a path written that the line computes: " + text
		case kind == argDir:
			s.Opaque = "a directory the line computes: " + text
		default:
			s.Opaque = "an argument the line computes: " + text
		}
	default: // a path read
		switch {
		case known || globOnly(&w):
			s.Paths = append(s.Paths, pathWord{Text: text, Kind: kind})
		case s.Computed == "":
			s.Computed = text
		}
	}
}

// pathKnown reports whether a path word that is not static is one of the
// forms DESIGN names as a path, with nothing else expanded: a leading ~,
// $HOME or ${HOME}, $PWD or ${PWD}, or $(pwd).
func pathKnown(w *word) bool {
	if w.glob || w.brace || w.paramOp || w.nul || w.arith || w.undecodable {
		return false
	}
	t := w.Text
	switch {
	case w.tilde:
		return len(w.params) == 0 && !w.substituted
	case w.substituted:
		return len(w.params) == 0 && pwdOnly(t)
	case len(w.params) == 1:
		p := w.params[0]
		return (p == "HOME" || p == "PWD") && strings.Count(t, "$") == 1 &&
			(strings.HasPrefix(t, "$"+p) && !nameContinues(t[len(p)+1:]) || strings.HasPrefix(t, "${"+p+"}"))
	}
	return false
}

func nameContinues(rest string) bool {
	if rest == "" {
		return false
	}
	c := rest[0]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// globOnly reports whether the only thing bash does to a word is pathname
// expansion: the text then bounds where the names it matches lie (a
// relative glob with no ".." stays below the directory it starts in; bash
// 5.2 never matches "." or ".." with a glob).
func globOnly(w *word) bool {
	return w.glob && !w.brace && !w.paramOp && !w.nul && !w.arith && !w.undecodable &&
		!w.substituted && len(w.params) == 0 && !w.tilde
}

// pwdOnly reports whether the only substitution in a token is $(pwd) or
// `pwd` at its start, which the scope check reads as the directory the
// segment runs in.
func pwdOnly(t string) bool {
	rest, ok := strings.CutPrefix(t, "$(pwd)")
	if !ok {
		rest, ok = strings.CutPrefix(t, "`pwd`")
	}
	return ok && !strings.Contains(rest, "$(") && !strings.Contains(rest, "`")
}

// sedInPlace reports whether sed is told to edit its files in place.
func sedInPlace(args []argument) bool {
	for _, a := range args {
		t := a.w.Text
		if t == "--in-place" || strings.HasPrefix(t, "--in-place=") ||
			strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'i') && !strings.ContainsAny(t[1:strings.IndexByte(t, 'i')], "ef") {
			return true
		}
	}
	return false
}

// checkCode refuses program text that brabo would have to read as code to
// know what it does: a sed script with a command that runs a program or
// writes a file (e, w, W, s///e, s///w), an awk program that runs or
// writes.
func (a *analyzer) checkCode(s *Segment, prog string, args []argument) {
	switch prog {
	case "sed":
		for _, ar := range args {
			if ar.kind != argData || ar.option && ar.value == "" {
				continue // a file, or a flag (-n, -E, the -e whose script is the next word)
			}
			script := ar.w.Text
			if ar.option {
				script = ar.value
			}
			if !ar.w.Static {
				s.Opaque = "a sed script the line computes: " + ar.w.Text
				return
			}
			if why := sedScriptRisk(script); why != "" {
				s.Opaque = why
				return
			}
		}
	case "awk", "gawk", "mawk", "nawk":
		for _, w := range s.Words[1:] {
			if !strings.HasPrefix(w.Text, "-") && awkRisk(w.Text) {
				s.Opaque = "an awk program that runs commands or writes files"
				return
			}
		}
	}
}

// sedScriptRisk says why a sed script may run a program or write a file,
// or "". It does not parse sed: any e, w or W command letter, or s///
// with an e or w flag, anywhere a command could stand, is refused; a
// script is read as risky rather than guessed safe.
func sedScriptRisk(script string) string {
	// Drop the text of s/…/…/ and y/…/…/ commands, then look at what is
	// left: command letters, addresses and flags.
	rest := script
	var letters strings.Builder
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if (c == 's' || c == 'y') && i+1 < len(rest) && rest[i+1] != '\n' && rest[i+1] != ';' && rest[i+1] != ' ' {
			delim := rest[i+1]
			j, parts := i+2, 0
			for j < len(rest) && parts < 2 {
				if rest[j] == '\\' {
					j += 2
					continue
				}
				if rest[j] == delim {
					parts++
				}
				j++
			}
			// flags after the last delimiter
			k := j
			for k < len(rest) && strings.IndexByte("gpiImM0123456789ew", rest[k]) >= 0 {
				if rest[k] == 'e' || rest[k] == 'w' {
					return "a sed s command with the " + string(rest[k]) + " flag runs a program or writes a file"
				}
				k++
			}
			i = k - 1
			continue
		}
		if c == '/' || c == '\\' { // an address /re/: skip to its end
			j := i + 1
			for j < len(rest) && rest[j] != '/' {
				if rest[j] == '\\' {
					j++
				}
				j++
			}
			i = j
			continue
		}
		letters.WriteByte(c)
	}
	if strings.ContainsAny(letters.String(), "ewWrR") {
		return "a sed script with a command that runs a program or reads or writes a file"
	}
	return ""
}

// awkRisk reports whether an awk program may run a command or write a
// file: system(), a pipe, a redirection of print, getline from a command.
func awkRisk(prog string) bool {
	return strings.Contains(prog, "system") || strings.ContainsAny(prog, "|>") || strings.Contains(prog, "getline")
}

// findArgs reads find's words: the start paths before the expression,
// and the expression's primaries with what their values are. -exec's
// program is a segment of its own; -delete writes every file found under
// the start paths; -fprint writes its file.
func (a *analyzer) findArgs(s *Segment) {
	words := s.Words[1:]
	var starts []*word
	i := 0
	for ; i < len(words); i++ {
		t := words[i].Text
		if strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ")" || t == "," {
			if words[i].Static || !words[i].mayBeOption() {
				break
			}
		}
		if !words[i].Static && words[i].mayBeOption() {
			s.Opaque = "an expansion where find's expression may begin: " + t
			return
		}
		starts = append(starts, &words[i])
	}
	deletes := false
	// -delete removes what the tests select: one -name (-iname) test, no
	// operator that widens it, and a pattern no protected name matches
	// leaves the start folders' protected files where they are.
	names, widened := 0, false
	for j := i; j < len(words); j++ {
		switch words[j].Text {
		case "-name", "-iname":
			names++
			if j+1 >= len(words) || !words[j+1].Static || a.namesProtected(words[j+1].Text) {
				widened = true
			}
		case "-o", "-or", ",", "!", "-not", "(", ")":
			widened = true
		}
	}
	narrow := names == 1 && !widened
	for ; i < len(words); i++ {
		w := &words[i]
		if !w.Static && w.mayBeOption() {
			s.Opaque = "an expansion in find's expression: " + w.Text
			return
		}
		switch w.Text {
		case "-exec", "-execdir", "-ok", "-okdir":
			for i+1 < len(words) && words[i+1].Text != ";" && words[i+1].Text != "+" {
				i++
			}
			i++
		case "-delete":
			deletes = true
		case "-fprint", "-fprint0", "-fls":
			if i+1 < len(words) {
				i++
				a.checkPath(s, words[i], ArgWrite, "")
			}
		case "-fprintf":
			if i+1 < len(words) {
				i++
				a.checkPath(s, words[i], ArgWrite, "")
				i++ // the format
			}
		case "-newer", "-anewer", "-cnewer", "-samefile", "-files0-from":
			if i+1 < len(words) {
				i++
				a.checkPath(s, words[i], argPath, "")
			}
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
			"-lname", "-ilname", "-type", "-xtype", "-maxdepth", "-mindepth", "-size", "-mtime", "-atime",
			"-ctime", "-mmin", "-amin", "-cmin", "-perm", "-user", "-group", "-uid", "-gid", "-links",
			"-inum", "-printf", "-regextype", "-fstype", "-context", "-newerXY", "-used":
			i++
		}
	}
	kind := argPath
	if deletes {
		kind = ArgWrite
	}
	if len(starts) == 0 && deletes {
		s.Paths = append(s.Paths, pathWord{Text: ".", Kind: ArgWrite})
	}
	at := len(s.Paths)
	for _, w := range starts {
		a.checkPath(s, *w, kind, "")
	}
	if deletes && narrow {
		for k := at; k < len(s.Paths); k++ {
			s.Paths[k].Below = true
		}
	}
}
