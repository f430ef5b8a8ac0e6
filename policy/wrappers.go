package policy

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
	opaqueOpt  string          // options after which the program is a string to split or a shell
}

func set(names ...string) map[string]bool {
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
		shortArg: "uCS", shortFlag: "i0v",
		longArg:  set("--unset", "--chdir", "--split-string"),
		longFlag: set("--ignore-environment", "--null", "--debug"),
		assigns:  true, chdir: "C", opaqueOpt: "S",
	},
	"command": {shortFlag: "pvV"},
	"builtin": {},
	"exec":    {shortArg: "a", shortFlag: "cl"},
	"nice":    {shortArg: "n", longArg: set("--adjustment"), numeric: true},
	"nohup":   {},
	"timeout": {
		shortArg: "ks", shortFlag: "v",
		longArg:    set("--kill-after", "--signal"),
		longFlag:   set("--preserve-status", "--foreground", "--verbose"),
		positional: 1,
	},
	"time": {
		shortArg: "of", shortFlag: "pvaq",
		longArg:  set("--output", "--format"),
		longFlag: set("--portability", "--verbose", "--append", "--quiet"),
	},
	"stdbuf": {shortArg: "ioe", longArg: set("--input", "--output", "--error")},
	"xargs": {
		shortArg: "adEILnPs", shortFlag: "0oprtx",
		longArg: set("--arg-file", "--delimiter", "--eof", "--replace", "--max-lines",
			"--max-args", "--max-procs", "--max-chars", "--process-slot-var"),
		longFlag: set("--null", "--open-tty", "--interactive", "--no-run-if-empty",
			"--verbose", "--exit", "--show-limits"),
	},
	"sudo": {
		shortArg: "ugCDhprtUTR", shortFlag: "AbEHknPSBN",
		longArg: set("--user", "--group", "--close-from", "--chdir", "--host", "--prompt",
			"--role", "--type", "--other-user", "--command-timeout", "--chroot"),
		longFlag: set("--askpass", "--background", "--preserve-env", "--set-home",
			"--reset-timestamp", "--non-interactive", "--preserve-groups", "--stdin", "--bell"),
		chdir: "D", opaqueOpt: "si",
	},
	"doas":   {shortArg: "Cu", shortFlag: "ns", opaqueOpt: "s"},
	"setsid": {shortFlag: "cfw", longFlag: set("--ctty", "--fork", "--wait")},
}

// unwrap finds the program a wrapper runs and appends it as a segment.
func (a *analyzer) unwrap(s *segment, spec wrapperSpec, depth int) {
	args := s.words[1:]
	cwd := s.cwds
	var assigns []word
	i := 0
	positional := spec.positional
	opaque := func(why string) { s.opaque = base(s.verb()) + ": " + why }
options:
	for i < len(args) {
		t := args[i]
		if !t.static {
			opaque("an option or the program is an expansion: " + t.text)
			return
		}
		switch {
		case t.text == "--":
			i++
			break options
		case strings.HasPrefix(t.text, "--"):
			name, _, hasValue := strings.Cut(t.text, "=")
			switch {
			case spec.longFlag[name] || (name == "--preserve-env" && hasValue):
			case spec.longArg[name]:
				if spec.chdir != "" && name == "--chdir" {
					if hasValue {
						cwd = cwd.cd(t.text[len(name)+1:])
					} else if i+1 < len(args) {
						cwd = cwd.cdWord(args[i+1])
					}
				}
				if name == "--split-string" {
					opaque("--split-string turns a string into a command line")
					return
				}
				if !hasValue {
					i++
				}
			default:
				opaque("unknown option " + name)
				return
			}
			i++
		case len(t.text) > 1 && t.text[0] == '-':
			if spec.numeric && isDigits(t.text[1:]) {
				i++
				continue
			}
			flags := t.text[1:]
			for k := 0; k < len(flags); k++ {
				c := flags[k]
				switch {
				case strings.IndexByte(spec.opaqueOpt, c) >= 0:
					opaque("-" + string(c) + " runs a shell or splits a string into a command line")
					return
				case strings.IndexByte(spec.shortArg, c) >= 0:
					value := word{text: flags[k+1:], static: true}
					if value.text == "" {
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
					k = len(flags)
				case strings.IndexByte(spec.shortFlag, c) >= 0:
				default:
					opaque("unknown option -" + string(c))
					return
				}
			}
			i++
		case spec.assigns && isAssignment(t.text):
			assigns = append(assigns, word{text: t.text[strings.IndexByte(t.text, '=')+1:], static: true})
			i++
		case positional > 0:
			positional--
			i++
		default:
			break options
		}
	}
	for spec.assigns && i < len(args) && args[i].static && isAssignment(args[i].text) {
		assigns = append(assigns, word{text: args[i].text[strings.IndexByte(args[i].text, '=')+1:], static: true})
		i++
	}
	if i >= len(args) {
		return // nothing wrapped: env prints, exec redirects, nohup fails
	}
	before := len(a.segs)
	a.child(s, args[i:], assigns, cwd, depth)
	// env PATH=. git status: the wrapped programs run under the variable
	for _, t := range args[:i] {
		if name, _, ok := strings.Cut(t.text, "="); ok && spec.assigns && isAssignment(t.text) && programEnv(name) {
			for _, c := range a.segs[before:] {
				if c.progEnv == "" {
					c.progEnv = name
				}
			}
		}
	}
}

// programEnv reports whether a variable set for a program chooses which
// program runs or injects code into it (PATH=. git runs ./git; LD_PRELOAD,
// BASH_ENV, NODE_OPTIONS=--require …). An allow pattern names a program, so
// it never matches a segment run under one of these; deny and ask still do.
// Search paths for modules (PYTHONPATH=src pytest) are not among them: they
// add project code to what a test runner runs anyway, and a value outside
// the project is caught by the path scope.
func programEnv(name string) bool {
	switch name {
	case "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
		"NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
		"GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER",
		"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
		"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "npm_config_", "NPM_CONFIG_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
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
