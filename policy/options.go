package policy

// The option table (DESIGN §10), next to the
// operand table: for the seeded runners and build tools, the options that
// name a program, load a plugin, pick a configuration or an output
// location, and the options that read a list of files or a script from a
// file. docs/shell-analysis.md says where each row comes from.
//
// Such an option makes the segment match no allow pattern that does not
// itself name the option, unless its value is a literal path inside the
// project that is not protected and that the same line does not write
// (runOptionWhy). A list or a script read from a file always asks: its
// content is what runs, and the decision does not see it.

import (
	"fmt"
	"path"
	"strings"
)

// optKind is what an option's value is to the tool.
type optKind uint8

const (
	// optProgram names a program or a shell the tool runs.
	optProgram optKind = iota + 1
	// optPlugin names code the tool loads: a plugin, a module, a preload.
	optPlugin
	// optConfig picks a configuration file or a folder whose
	// configuration the tool reads (which can name programs).
	optConfig
	// optOutput is where the tool writes.
	optOutput
	// optList reads a list of file names or a script from a file: the
	// content is unknown, and the segment always asks.
	optList
	// optScript is code given on the line for the tool to run (make
	// --eval, node -e): the decision does not read that language.
	optScript
)

var optKindNames = [...]string{optProgram: "names a program to run", optPlugin: "loads code",
	optConfig: "picks a configuration", optOutput: "picks an output location",
	optList:   "reads a list of files or a script from a file whose content the decision does not see",
	optScript: "runs code given on the line"}

// optSpec is one row: what the option's value is, whether it takes one
// (flag options such as --pyargs do not), and values that are names the
// tool knows rather than paths (vitest's reporters, pytest's no:plugin).
type optSpec struct {
	kind     optKind
	flag     bool
	noPath   bool // the value is never a path (cargo -Z): always asks
	names    []string
	prefixes []string
}

func opts(k optKind, names ...string) map[string]optSpec {
	m := make(map[string]optSpec, len(names))
	for _, n := range names {
		m[n] = optSpec{kind: k}
	}
	return m
}

func mergeOpts(maps ...map[string]optSpec) map[string]optSpec {
	out := map[string]optSpec{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var npmOptions = mergeOpts(
	opts(optProgram, "--script-shell", "--shell", "--node-options", "--editor", "--browser", "--viewer"),
	opts(optConfig, "--prefix", "-C", "--userconfig", "--globalconfig", "--init-module", "--workspace", "-w", "--cafile"),
	opts(optOutput, "--cache"),
)

var vitestReporters = []string{"default", "basic", "verbose", "dot", "json", "junit", "tap", "tap-flat",
	"hanging-process", "github-actions", "html", "blob", "tree"}

// runOptions is the option table, by program basename.
var runOptions = map[string]map[string]optSpec{
	"go": mergeOpts(
		opts(optProgram, "-exec", "-toolexec", "-vettool"),
		opts(optConfig, "-overlay", "-modfile", "-C", "-pgo"),
		opts(optOutput, "-o", "-pkgdir", "-outputdir"),
		map[string]optSpec{"-pgo": {kind: optConfig, names: []string{"auto", "off"}}},
	),
	"npm": npmOptions,
	"npx": npmOptions,
	"pnpm": mergeOpts(npmOptions,
		opts(optConfig, "--dir", "--pnpmfile", "--global-pnpmfile", "--store-dir", "--virtual-store-dir", "--modules-dir"),
		opts(optProgram, "--use-node-version")),
	"yarn": mergeOpts(opts(optConfig, "--cwd", "--use-yarnrc", "--modules-folder", "--global-folder", "--prefix"),
		opts(optProgram, "--script-shell", "--node-options")),
	"make": mergeOpts(
		opts(optConfig, "-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir"),
		opts(optScript, "--eval", "-E"),
	),
	"pytest": mergeOpts(
		opts(optConfig, "-c", "--config-file", "--rootdir", "--confcutdir", "-o", "--override-ini", "--inifile"),
		opts(optOutput, "--basetemp", "--junitxml", "--junit-xml", "--log-file", "--resultlog", "--debug"),
		opts(optPlugin, "--pdbcls"),
		map[string]optSpec{
			"-p":       {kind: optPlugin, prefixes: []string{"no:"}},
			"--pyargs": {kind: optPlugin, flag: true},
		},
	),
	"python":  {"-m": {kind: optPlugin}, "-c": {kind: optScript}, "-X": {kind: optConfig}},
	"python3": {"-m": {kind: optPlugin}, "-c": {kind: optScript}, "-X": {kind: optConfig}},
	"node": mergeOpts(
		opts(optPlugin, "-r", "--require", "--import", "--loader", "--experimental-loader", "--experimental-vm-modules"),
		opts(optScript, "-e", "--eval", "-p", "--print"),
		opts(optConfig, "--env-file", "--env-file-if-exists", "--experimental-config-file", "--openssl-config"),
	),
	"cargo": mergeOpts(
		opts(optConfig, "--config", "--manifest-path", "-C"),
		map[string]optSpec{"-Z": {kind: optConfig, noPath: true}},
		opts(optOutput, "--target-dir", "--artifact-dir", "--out-dir"),
	),
	"gradle": mergeOpts(
		opts(optList, "-I", "--init-script"),
		opts(optConfig, "-c", "--settings-file", "-b", "--build-file", "-p", "--project-dir", "-g", "--gradle-user-home", "--project-cache-dir"),
	),
	"mvn": mergeOpts(
		opts(optConfig, "-s", "--settings", "-gs", "--global-settings", "-f", "--file", "-t", "--toolchains", "-gt", "--global-toolchains"),
	),
	"tsc": mergeOpts(
		opts(optConfig, "-p", "--project", "--build", "-b"),
		opts(optOutput, "--outDir", "--outFile", "--tsBuildInfoFile", "--generateTrace", "--declarationDir"),
	),
	"vitest": mergeOpts(
		opts(optConfig, "-c", "--config", "-r", "--root", "--dir", "--workspace", "--project"),
		opts(optPlugin, "--globalSetup", "--setupFiles", "--environment", "--pool"),
		opts(optOutput, "--outputFile", "--coverage.reportsDirectory"),
		map[string]optSpec{
			"--reporter":    {kind: optPlugin, names: vitestReporters},
			"--environment": {kind: optPlugin, names: []string{"node", "jsdom", "happy-dom", "edge-runtime"}},
			"--pool":        {kind: optPlugin, names: []string{"threads", "forks", "vmThreads", "vmForks"}},
		},
	),
	// Class 3: options that read file names or a script from a file.
	"tar":   opts(optList, "-T", "--files-from"),
	"rsync": opts(optList, "--files-from", "--include-from", "--exclude-from", "--filter"),
	"xargs": opts(optList, "-a", "--arg-file"),
	"wc":    opts(optList, "--files0-from"),
	"du":    opts(optList, "--files0-from"),
	"sed":   opts(optList, "-f", "--file"),
	"awk":   opts(optList, "-f", "--file"),
	"gawk":  opts(optList, "-f", "--file", "-i", "--include", "-l", "--load"),
	"git":   opts(optList, "--pathspec-from-file"),
	"find":  opts(optList, "-files0-from"),
}

// responseFiles are the programs that read @file as more arguments.
var responseFiles = set("gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "javac", "java", "ar", "tsc", "dotnet", "csc")

// makeHarmlessValue is a make variable override that names no program: a
// number or empty (V=1, DEBUG=0).
func makeHarmlessValue(v string) bool { return isDigits(v) || v == "" }

// runOpt is one option of the table a segment holds.
type runOpt struct {
	at, end int // the option's word, and its value's (the same when glued)
	name    string
	value   word
	spec    optSpec
	// why is set by Decide: why the option makes the segment ask, "" when
	// its value is a path it accepts.
	why string
}

// runOptionHits finds the options of the table in a segment's words
// (toks are their texts). A package runner's program (npx vitest) is read
// with its own row.
func runOptionHits(words []word, toks []string) []runOpt {
	if len(words) == 0 || len(toks) != len(words) {
		return nil
	}
	prog := base(words[0].text)
	var out []runOpt
	start := 1
	if prog == "npx" || prog == "bunx" || (prog == "pnpm" || prog == "npm" || prog == "yarn") && runsPackage(words) {
		if inner := packageRunnerProgram(prog, toks); inner != nil {
			at := len(words) - len(inner)
			out = append(out, scanOptions(prog, words[:at], 1)...)
			prog, start = base(inner[0]), at+1
		}
	}
	return append(out, scanOptions(prog, words, start)...)
}

// runsPackage reports whether a package manager's words may hold exec,
// dlx or x (pnpm exec vitest): only then is the program it runs read.
func runsPackage(words []word) bool {
	for _, w := range words[1:] {
		if w.text == "exec" || w.text == "dlx" || w.text == "x" {
			return true
		}
	}
	return false
}

func scanOptions(prog string, words []word, start int) []runOpt {
	tbl := runOptions[prog]
	resp := responseFiles[prog]
	if tbl == nil && !resp && prog != "make" {
		return nil
	}
	var out []runOpt
	for i := start; i < len(words); i++ {
		w := words[i]
		t := w.text
		if t == "--" {
			break
		}
		if resp && strings.HasPrefix(t, "@") {
			out = append(out, runOpt{at: i, end: i, name: "@file", value: word{text: t[1:], static: w.static}, spec: optSpec{kind: optList}})
			continue
		}
		if prog == "make" && !strings.HasPrefix(t, "-") {
			if name, v, ok := strings.Cut(t, "="); ok && isAssignment(name+"=") && !makeHarmlessValue(v) {
				out = append(out, runOpt{at: i, end: i, name: name + "=", value: word{text: v, static: w.static},
					spec: optSpec{kind: optProgram}})
			}
			continue
		}
		if tbl == nil || len(t) < 2 || t[0] != '-' {
			continue
		}
		name, value, glued := strings.Cut(t, "=")
		spec, ok := tbl[name]
		if !ok && prog == "pnpm" && strings.HasPrefix(name, "--config.") {
			spec, ok = optSpec{kind: optConfig}, true
		}
		if !ok && !strings.HasPrefix(t, "--") && len(t) > 2 && prog != "go" {
			if spec, ok = tbl[t[:2]]; ok {
				name, value, glued = t[:2], t[2:], true // -Cdir, -pplugin
			}
		}
		if !ok {
			continue
		}
		h := runOpt{at: i, end: i, name: name, spec: spec}
		switch {
		case spec.flag:
		case glued:
			h.value = word{text: value, static: w.static}
		case i+1 < len(words):
			i++
			h.end, h.value = i, words[i]
		default:
			continue // no value: the tool refuses it
		}
		out = append(out, h)
	}
	return out
}

// runOptionWhy says why an option of the table makes a segment ask, or ""
// when its value is a literal path inside the project, not protected and
// not written by the line (written holds the absolute paths the line
// writes).
func runOptionWhy(s *segment, h *runOpt, root string, p Protect, written []string) string {
	prog := base(s.verb())
	say := func(why string) string {
		v := h.value.text
		if h.spec.flag || v == "" {
			return fmt.Sprintf("%s %s %s: no rule covers it unless it names the option", prog, h.name, optKindNames[h.spec.kind])
		}
		return fmt.Sprintf("%s %s %s %s (%s): no rule covers it unless it names the option", prog, h.name, clip(v, 80), optKindNames[h.spec.kind], why)
	}
	switch {
	case h.spec.kind == optList || h.spec.kind == optScript:
		return say("its content is not on the line")
	case h.spec.flag:
		return say("")
	case h.spec.noPath:
		return say("not a path")
	case !h.value.static:
		return say("the line computes it")
	}
	v := h.value.text
	if containsString(h.spec.names, v) {
		return ""
	}
	for _, pre := range h.spec.prefixes {
		if strings.HasPrefix(v, pre) {
			return ""
		}
	}
	if h.spec.kind == optProgram && !strings.Contains(v, "/") || h.spec.kind == optPlugin && !strings.Contains(v, "/") {
		return say("a name found elsewhere, not a file in the project")
	}
	if v == "" || root == "" || strings.ContainsAny(v, "=$`~*?[ \t\n") || strings.HasPrefix(v, "-") {
		return say("not a path in the project")
	}
	if s.cwds.unknown && !strings.HasPrefix(v, "/") {
		return say("relative to a directory the line does not show")
	}
	for _, c := range pathCandidates(v, s.cwds) {
		switch {
		case !within(c, root):
			return say("outside the project folder")
		case h.spec.kind != optOutput && c == root && h.spec.kind != optConfig:
			return say("the project folder itself")
		}
		if _, prot := p.protectedPathAt(c, v, root, true, false); prot {
			return say("a protected path")
		}
		if h.spec.kind == optOutput {
			continue // the option's own write; the scope and the protected rule check it
		}
		for _, w := range written {
			if within(c, w) || within(w, c) {
				return say("the line writes it")
			}
		}
	}
	return ""
}

// lineWrites returns the absolute paths the segments write, from every
// directory each may run in.
func lineWrites(segs []*segment) []string {
	var out []string
	for _, s := range segs {
		for _, pw := range s.paths {
			if pw.kind != argWrite || pw.implied {
				continue
			}
			for _, c := range pathCandidates(pw.text, s.cwds) {
				out = append(out, path.Clean(c))
			}
		}
	}
	return out
}

// uncoveredOption returns why an option of the table that the allow
// pattern of n tokens (matched from word shift on) does not name makes the
// segment ask, or "".
func (s *segment) uncoveredOption(n, shift int) string {
	for i := range s.runOpts {
		h := &s.runOpts[i]
		if h.why != "" && h.end >= n+shift {
			return h.why
		}
	}
	return ""
}
