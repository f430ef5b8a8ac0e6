package shell

import "strings"

// wrapperSpec describes the options of a program that runs another program
// given on its command line (DESIGN §4.3). Options not described make the
// wrapper opaque: brabo does not guess where the wrapped program starts.
type wrapperSpec struct {
	shortArg   string          // short options that take a value (glued or next word)
	shortFlag  string          // short options without a value
	longArg    map[string]bool // long options that take a value (=v or next word)
	longFlag   map[string]bool // long options without a value
	numeric    bool            // -N is an option (nice -10)
	positional int             // words before the program (timeout's duration)
	assigns    bool            // NAME=value words before the program (env)
	chdir      string          // option that changes the directory (env -C)
	opaqueOpt  string          // options after which the program is a string to split or a shell, or the environment is gone
	unset      byte            // the option that removes a variable from the environment (env -u)
	dropsEnv   byte            // the option that starts the program with no environment (env -i)
	// stdinArgs is true for xargs: the program gets more words from its
	// input, which the line does not show.
	stdinArgs bool
	// opaqueAlways says why the wrapper is opaque whatever its words: it
	// joins them into a string a shell runs (watch).
	opaqueAlways string
}

// Set makes a set of names, for the tables.
func Set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// wrappers are the programs unwrapped so that the program they run is
// evaluated as its own segment. sudo, doas, setsid and builtin go beyond the
// list of DESIGN §4.3: each runs the program it is given, and a deny on that
// program must hold whatever runs it.
var wrappers = map[string]wrapperSpec{
	"env": {
		shortArg: "uCS", shortFlag: "0vi",
		longArg:  Set("--unset", "--chdir", "--split-string"),
		longFlag: Set("--ignore-environment", "--null", "--debug"),
		assigns:  true, chdir: "C", opaqueOpt: "S", unset: 'u', dropsEnv: 'i',
	},
	"command": {shortFlag: "pvV"},
	"builtin": {},
	"exec":    {shortArg: "a", shortFlag: "cl"},
	"nice":    {shortArg: "n", longArg: Set("--adjustment"), numeric: true},
	"nohup":   {},
	"timeout": {
		shortArg: "ks", shortFlag: "v",
		longArg:    Set("--kill-after", "--signal"),
		longFlag:   Set("--preserve-status", "--foreground", "--verbose"),
		positional: 1,
	},
	"time": {
		shortArg: "of", shortFlag: "pvaq",
		longArg:  Set("--output", "--format"),
		longFlag: Set("--portability", "--verbose", "--append", "--quiet"),
	},
	"stdbuf": {shortArg: "ioe", longArg: Set("--input", "--output", "--error")},
	"xargs": {
		shortArg: "adEILnPs", shortFlag: "0oprtx",
		longArg: Set("--arg-file", "--delimiter", "--eof", "--replace", "--max-lines",
			"--max-args", "--max-procs", "--max-chars", "--process-slot-var"),
		longFlag: Set("--null", "--open-tty", "--interactive", "--no-run-if-empty",
			"--verbose", "--exit", "--show-limits"),
		stdinArgs: true,
	},
	"sudo": {
		shortArg: "ugCDhprtUTR", shortFlag: "AbEHknPSBN",
		longArg: Set("--user", "--group", "--close-from", "--chdir", "--host", "--prompt",
			"--role", "--type", "--other-user", "--command-timeout", "--chroot"),
		longFlag: Set("--askpass", "--background", "--preserve-env", "--set-home",
			"--reset-timestamp", "--non-interactive", "--preserve-groups", "--stdin", "--bell"),
		chdir: "D", opaqueOpt: "si",
	},
	"doas":   {shortArg: "Cu", shortFlag: "ns", opaqueOpt: "s"},
	"setsid": {shortFlag: "cfw", longFlag: Set("--ctty", "--fork", "--wait")},
	"flock": {
		shortArg: "wEc", shortFlag: "sxunoFh", positional: 1, opaqueOpt: "c",
		longArg:  Set("--timeout", "--wait", "--conflict-exit-code", "--command"),
		longFlag: Set("--shared", "--exclusive", "--unlock", "--nonblock", "--close", "--no-fork", "--verbose"),
	},
	"ionice":  {shortArg: "cnpPuP", shortFlag: "th", longArg: Set("--class", "--classdata", "--pid", "--pgid", "--uid")},
	"taskset": {shortFlag: "apc", longFlag: Set("--all-tasks", "--pid", "--cpu-list"), positional: 1},
	"chrt": {shortFlag: "bdfiorRaempv", longFlag: Set("--batch", "--deadline", "--fifo", "--idle", "--other",
		"--rr", "--reset-on-fork", "--all-tasks", "--max", "--pid", "--verbose"), shortArg: "TPD",
		longArg: Set("--sched-runtime", "--sched-period", "--sched-deadline"), positional: 1},
	"unbuffer": {shortFlag: "p"},
	"watch":    {opaqueAlways: "runs its arguments as a string in a shell"},
	"parallel": {opaqueAlways: "builds command lines from its input"},
	"script":   {opaqueAlways: "runs a string in a shell"},
	"su":       {opaqueAlways: "runs a string in another user's shell"},
	"runuser":  {opaqueAlways: "runs a string in another user's shell"},
}

// unwrap finds the program a wrapper runs and appends it as a segment.
func (a *analyzer) unwrap(s *Segment, spec wrapperSpec, depth int) {
	args := s.Words[1:]
	cwd := s.Cwds
	var assigns []word
	var envNames []string
	replace := "" // xargs -I R: the words holding R get what xargs reads
	// late is why the wrapper is opaque although its program is known: the
	// program is still a segment of its own, so a deny on it holds.
	late := ""
	i := 0
	positional := spec.positional
	opaque := func(why string) { s.Opaque = Base(s.Verb()) + ": " + why }
	if spec.opaqueAlways != "" {
		opaque(spec.opaqueAlways)
		return
	}
options:
	for i < len(args) {
		t := args[i]
		if !t.Static {
			opaque("an option or the program is an expansion: " + t.Text)
			return
		}
		switch {
		case t.Text == "--":
			i++
			break options
		case strings.HasPrefix(t.Text, "--"):
			name, value, hasValue := strings.Cut(t.Text, "=")
			switch {
			case spec.longFlag[name] || (name == "--preserve-env" && hasValue):
				if name == "--ignore-environment" {
					late = "--ignore-environment drops the variables brabo sets for git's safety"
				}
			case spec.stdinArgs && name == "--replace" && !hasValue:
				replace = "{}" // --replace alone: its value is optional, and glued
			case spec.longArg[name]:
				if !hasValue {
					if i+1 >= len(args) {
						opaque(name + " needs a value")
						return
					}
					i++
					value = args[i].Text
					if !args[i].Static {
						opaque("the value of " + name + " is an expansion: " + args[i].Text)
						return
					}
				}
				switch name {
				case "--chdir":
					if spec.chdir != "" {
						cwd = cwd.cd(value)
					}
				case "--split-string":
					opaque("--split-string turns a string into a command line")
					return
				case "--replace":
					replace = value
				case "--unset":
					if why := envUnset(value); why != "" {
						late = why
					}
					envNames = append(envNames, value)
				}
			default:
				opaque("unknown option " + name)
				return
			}
			i++
		case len(t.Text) > 1 && t.Text[0] == '-':
			if spec.numeric && isDigits(t.Text[1:]) {
				i++
				continue
			}
			flags := t.Text[1:]
			for k := 0; k < len(flags); k++ {
				c := flags[k]
				switch {
				case spec.stdinArgs && c == 'i': // xargs -i[R]: -I with an optional, glued R
					replace = "{}"
					if k+1 < len(flags) {
						replace = flags[k+1:]
					}
					k = len(flags)
				case spec.dropsEnv == c:
					late = "-" + string(c) + " drops the variables brabo sets for git's safety"
				case strings.IndexByte(spec.opaqueOpt, c) >= 0:
					opaque("-" + string(c) + " runs a shell or splits a string into a command line")
					return
				case strings.IndexByte(spec.shortArg, c) >= 0:
					value := word{Text: flags[k+1:], Static: true}
					if value.Text == "" {
						if i+1 >= len(args) {
							opaque("-" + string(c) + " needs a value")
							return
						}
						i++
						value = args[i]
					}
					if spec.chdir != "" && c == spec.chdir[0] {
						cwd = cwd.cdWord(value)
					}
					if spec.stdinArgs && c == 'I' {
						replace = value.Text
					}
					if spec.unset != 0 && c == spec.unset {
						if why := envUnset(value.Text); why != "" {
							late = why
						}
						envNames = append(envNames, value.Text)
					}
					k = len(flags)
				case strings.IndexByte(spec.shortFlag, c) >= 0:
				default:
					opaque("unknown option -" + string(c))
					return
				}
			}
			i++
		case spec.assigns && isAssignment(t.Text):
			assigns = append(assigns, word{Text: t.Text[strings.IndexByte(t.Text, '=')+1:], Static: true})
			envNames = append(envNames, t.Text[:strings.IndexByte(t.Text, '=')])
			i++
		case positional > 0:
			positional--
			i++
		default:
			break options
		}
	}
	for spec.assigns && i < len(args) && args[i].Static && isAssignment(args[i].Text) {
		assigns = append(assigns, word{Text: args[i].Text[strings.IndexByte(args[i].Text, '=')+1:], Static: true})
		envNames = append(envNames, args[i].Text[:strings.IndexByte(args[i].Text, '=')])
		i++
	}
	for _, name := range envNames {
		switch {
		case late != "":
		case GitSafetyEnv(name):
			late = name + " changes which repository or configuration git uses"
		case ProgramChoosing(name):
			late = name + " chooses the program or runs code in it"
		}
	}
	if late != "" {
		defer opaque(late)
	}
	if i >= len(args) {
		return // nothing wrapped: env prints, exec redirects, nohup fails
	}
	before := len(a.segs)
	words := args[i:]
	shell := IsShell(Base(words[0].Text))
	if replace != "" && !shell {
		words = append([]word(nil), words...)
		for k := range words {
			if strings.Contains(words[k].Text, replace) {
				words[k].Static, words[k].substituted, words[k].dynStart = false, true, true
			}
		}
	}
	c := a.child(s, i+1, words, assigns, cwd, depth)
	c.stdinArgs = spec.stdinArgs
	if replace != "" && shell && c.Opaque == "" {
		for _, w := range words[1:] {
			if strings.Contains(w.Text, replace) {
				// The script is read as written, so that a deny in it
				// holds; what xargs puts in its place is code the line
				// does not show.
				c.Opaque = "xargs puts what it reads into the shell's script: " + w.Text
			}
		}
	}
	// env FOO=x git status: the wrapped programs run under the variable
	for _, name := range envNames {
		if harmlessEnv(name) {
			continue
		}
		for _, c := range a.segs[before:] {
			if c.ProgEnv == "" {
				c.ProgEnv = name
			}
		}
	}
}

// envUnset says why removing a variable from a program's environment makes
// the segment opaque: brabo sets GIT_CONFIG_* for git's safety, and
// removing them (env -u, unset) brings back what they turned off.
func envUnset(name string) string {
	if GitSafetyEnv(name) {
		return "unsets " + name + ", which brabo sets for git's safety"
	}
	return ""
}

// harmlessEnv reports whether a variable set for a program leaves the
// program what it was (DESIGN §9, "Environment prefixes"): colours, the
// terminal's size, the language and the time zone. Any other variable may
// choose or change the program (PATH=. git, GIT_DIR, GOFLAGS=-toolexec,
// PYTHONPATH, RUSTC_WRAPPER, MAKEFLAGS, LD_PRELOAD…), so an allow pattern,
// which names a program, does not cover a segment run under it; deny and
// ask still do.
func harmlessEnv(name string) bool {
	switch name {
	case "NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS", "LINES", "LANG", "LANGUAGE", "TZ", "CI":
		return true
	}
	return strings.HasPrefix(name, "LC_") || strings.HasPrefix(name, "CLICOLOR")
}

// GitSafetyEnv reports whether a variable tells git which repository or
// configuration to use, or which program to run for it. brabo injects
// safe.bareRepository=explicit and core.fsmonitor=false through
// GIT_CONFIG_COUNT into every process it starts; a line that sets or
// removes these variables is opaque, since git would then read what the
// line chose. The author and committer identities are the exception.
func GitSafetyEnv(name string) bool {
	if !strings.HasPrefix(name, "GIT_") {
		return false
	}
	for _, p := range []string{"GIT_AUTHOR_", "GIT_COMMITTER_"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isAssignment reports whether s has the form NAME=value.
func isAssignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ProgramChoosing reports whether a variable set for a program chooses
// which program runs or loads code into it (PATH=. git, BASH_ENV=x.sh
// bash, PS4='$(…)' with set -x, LD_PRELOAD, NODE_OPTIONS=--require): the
// line does not show what runs, so the segment is opaque.
func ProgramChoosing(name string) bool {
	switch name {
	case "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND",
		"IFS", "CDPATH", "GLOBIGNORE", "BASH_XTRACEFD", "NODE_OPTIONS", "PERL5OPT", "PERL5LIB", "RUBYOPT",
		"RUBYLIB", "PYTHONSTARTUP", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "PAGER", "MANPAGER", "EDITOR",
		"VISUAL", "LESSOPEN", "LESSCLOSE", "BROWSER":
		return true
	}
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "BASH_FUNC_")
}
