package shell

// The option table (issue 25, classes 2 and 3; DESIGN §10): for the seeded
// runners and build tools, the options that name a program, load a
// plugin, pick a configuration or an output location, or read a list of
// files or a script from a file. The analysis records the options a
// segment holds (RunOpts); policy's options.go decides what each makes
// the segment do (runOptionWhy). docs/shell-analysis.md says where each
// row comes from.

import "strings"

// OptKind is what an option's value is to the tool.
type OptKind uint8

const (
	// optProgram names a program or a shell the tool runs.
	OptProgram OptKind = iota + 1
	// optPlugin names code the tool loads: a plugin, a module, a preload.
	OptPlugin
	// optConfig picks a configuration file or a folder whose
	// configuration the tool reads (which can name programs).
	OptConfig
	// optOutput is where the tool writes.
	OptOutput
	// optList reads a list of file names or a script from a file: the
	// content is unknown, and the segment always asks.
	OptList
	// optScript is code given on the line for the tool to run (make
	// --eval, node -e): the decision does not read that language.
	OptScript
)

// OptKindNames say, for a reason a human reads, what an option of each
// kind does.
var OptKindNames = [...]string{OptProgram: "names a program to run", OptPlugin: "loads code",
	OptConfig: "picks a configuration", OptOutput: "picks an output location",
	OptList:   "reads a list of files or a script from a file whose content the decision does not see",
	OptScript: "runs code given on the line"}

// optSpec is one row: what the option's value is, whether it takes one
// (flag options such as --pyargs do not), and values that are names the
// tool knows rather than paths (vitest's reporters, pytest's no:plugin).
type optSpec struct {
	Kind     OptKind
	Flag     bool
	NoPath   bool // the value is never a path (cargo -Z): always asks
	Names    []string
	Prefixes []string
}

func opts(k OptKind, names ...string) map[string]optSpec {
	m := make(map[string]optSpec, len(names))
	for _, n := range names {
		m[n] = optSpec{Kind: k}
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
	opts(OptProgram, "--script-shell", "--shell", "--node-options", "--editor", "--browser", "--viewer"),
	opts(OptConfig, "--prefix", "-C", "--userconfig", "--globalconfig", "--init-module", "--workspace", "-w", "--cafile"),
	opts(OptOutput, "--cache"),
)

var vitestReporters = []string{"default", "basic", "verbose", "dot", "json", "junit", "tap", "tap-flat",
	"hanging-process", "github-actions", "html", "blob", "tree"}

// runOptions is the option table, by program basename.
var runOptions = map[string]map[string]optSpec{
	"go": mergeOpts(
		opts(OptProgram, "-exec", "-toolexec", "-vettool"),
		opts(OptConfig, "-overlay", "-modfile", "-C", "-pgo"),
		opts(OptOutput, "-o", "-pkgdir", "-outputdir"),
		map[string]optSpec{"-pgo": {Kind: OptConfig, Names: []string{"auto", "off"}}},
	),
	"npm": npmOptions,
	"npx": npmOptions,
	"pnpm": mergeOpts(npmOptions,
		opts(OptConfig, "--dir", "--pnpmfile", "--global-pnpmfile", "--store-dir", "--virtual-store-dir", "--modules-dir"),
		opts(OptProgram, "--use-node-version")),
	"yarn": mergeOpts(opts(OptConfig, "--cwd", "--use-yarnrc", "--modules-folder", "--global-folder", "--prefix"),
		opts(OptProgram, "--script-shell", "--node-options")),
	"make": mergeOpts(
		opts(OptConfig, "-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir"),
		opts(OptScript, "--eval", "-E"),
	),
	"pytest": mergeOpts(
		opts(OptConfig, "-c", "--config-file", "--rootdir", "--confcutdir", "-o", "--override-ini", "--inifile"),
		opts(OptOutput, "--basetemp", "--junitxml", "--junit-xml", "--log-file", "--resultlog", "--debug"),
		opts(OptPlugin, "--pdbcls"),
		map[string]optSpec{
			"-p":       {Kind: OptPlugin, Prefixes: []string{"no:"}},
			"--pyargs": {Kind: OptPlugin, Flag: true},
		},
	),
	"python":  {"-m": {Kind: OptPlugin}, "-c": {Kind: OptScript}, "-X": {Kind: OptConfig}},
	"python3": {"-m": {Kind: OptPlugin}, "-c": {Kind: OptScript}, "-X": {Kind: OptConfig}},
	"node": mergeOpts(
		opts(OptPlugin, "-r", "--require", "--import", "--loader", "--experimental-loader", "--experimental-vm-modules"),
		opts(OptScript, "-e", "--eval", "-p", "--print"),
		opts(OptConfig, "--env-file", "--env-file-if-exists", "--experimental-config-file", "--openssl-config"),
	),
	"cargo": mergeOpts(
		opts(OptConfig, "--config", "--manifest-path", "-C"),
		map[string]optSpec{"-Z": {Kind: OptConfig, NoPath: true}},
		opts(OptOutput, "--target-dir", "--artifact-dir", "--out-dir"),
	),
	"gradle": mergeOpts(
		opts(OptList, "-I", "--init-script"),
		opts(OptConfig, "-c", "--settings-file", "-b", "--build-file", "-p", "--project-dir", "-g", "--gradle-user-home", "--project-cache-dir"),
	),
	"mvn": mergeOpts(
		opts(OptConfig, "-s", "--settings", "-gs", "--global-settings", "-f", "--file", "-t", "--toolchains", "-gt", "--global-toolchains"),
	),
	"tsc": mergeOpts(
		opts(OptConfig, "-p", "--project", "--build", "-b"),
		opts(OptOutput, "--outDir", "--outFile", "--tsBuildInfoFile", "--generateTrace", "--declarationDir"),
	),
	"vitest": mergeOpts(
		opts(OptConfig, "-c", "--config", "-r", "--root", "--dir", "--workspace", "--project"),
		opts(OptPlugin, "--globalSetup", "--setupFiles", "--environment", "--pool"),
		opts(OptOutput, "--outputFile", "--coverage.reportsDirectory"),
		map[string]optSpec{
			"--reporter":    {Kind: OptPlugin, Names: vitestReporters},
			"--environment": {Kind: OptPlugin, Names: []string{"node", "jsdom", "happy-dom", "edge-runtime"}},
			"--pool":        {Kind: OptPlugin, Names: []string{"threads", "forks", "vmThreads", "vmForks"}},
		},
	),
	// Class 3: options that read file names or a script from a file.
	"tar":   opts(OptList, "-T", "--files-from"),
	"rsync": opts(OptList, "--files-from", "--include-from", "--exclude-from", "--filter"),
	"xargs": opts(OptList, "-a", "--arg-file"),
	"wc":    opts(OptList, "--files0-from"),
	"du":    opts(OptList, "--files0-from"),
	"sed":   opts(OptList, "-f", "--file"),
	"awk":   opts(OptList, "-f", "--file"),
	"gawk":  opts(OptList, "-f", "--file", "-i", "--include", "-l", "--load"),
	"git":   opts(OptList, "--pathspec-from-file"),
	"find":  opts(OptList, "-files0-from"),
}

// responseFiles are the programs that read @file as more arguments.
var responseFiles = Set("gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "javac", "java", "ar", "tsc", "dotnet", "csc")

// makeHarmlessValue is a make variable override that names no program: a
// number or empty (V=1, DEBUG=0).
func makeHarmlessValue(v string) bool { return isDigits(v) || v == "" }

// RunOpt is one option of the table a segment holds.
type RunOpt struct {
	at, End int // the option's word, and its value's (the same when glued)
	Name    string
	Value   word
	Spec    optSpec
	// Why is set by Decide: why the option makes the segment ask, "" when
	// its value is a path it accepts.
	Why string
}

// runOptionHits finds the options of the table in a segment's words
// (toks are their texts). A package runner's program (npx vitest) is read
// with its own row.
func runOptionHits(words []word, toks []string) []RunOpt {
	if len(words) == 0 || len(toks) != len(words) {
		return nil
	}
	prog := Base(words[0].Text)
	var out []RunOpt
	start := 1
	if prog == "npx" || prog == "bunx" || (prog == "pnpm" || prog == "npm" || prog == "yarn") && runsPackage(words) {
		if inner := packageRunnerProgram(prog, toks); inner != nil {
			at := len(words) - len(inner)
			out = append(out, scanOptions(prog, words[:at], 1)...)
			prog, start = Base(inner[0]), at+1
		}
	}
	return append(out, scanOptions(prog, words, start)...)
}

// runsPackage reports whether a package manager's words may hold exec,
// dlx or x (pnpm exec vitest): only then is the program it runs read.
func runsPackage(words []word) bool {
	for _, w := range words[1:] {
		if w.Text == "exec" || w.Text == "dlx" || w.Text == "x" {
			return true
		}
	}
	return false
}

func scanOptions(prog string, words []word, start int) []RunOpt {
	tbl := runOptions[prog]
	resp := responseFiles[prog]
	if tbl == nil && !resp && prog != "make" {
		return nil
	}
	var out []RunOpt
	for i := start; i < len(words); i++ {
		w := words[i]
		t := w.Text
		if t == "--" {
			break
		}
		if resp && strings.HasPrefix(t, "@") {
			out = append(out, RunOpt{at: i, End: i, Name: "@file", Value: word{Text: t[1:], Static: w.Static}, Spec: optSpec{Kind: OptList}})
			continue
		}
		if prog == "make" && !strings.HasPrefix(t, "-") {
			if name, v, ok := strings.Cut(t, "="); ok && isAssignment(name+"=") && !makeHarmlessValue(v) {
				out = append(out, RunOpt{at: i, End: i, Name: name + "=", Value: word{Text: v, Static: w.Static},
					Spec: optSpec{Kind: OptProgram}})
			}
			continue
		}
		if tbl == nil || len(t) < 2 || t[0] != '-' {
			continue
		}
		name, value, glued := strings.Cut(t, "=")
		spec, ok := tbl[name]
		if !ok && prog == "pnpm" && strings.HasPrefix(name, "--config.") {
			spec, ok = optSpec{Kind: OptConfig}, true
		}
		if !ok && !strings.HasPrefix(t, "--") && len(t) > 2 && prog != "go" {
			if spec, ok = tbl[t[:2]]; ok {
				name, value, glued = t[:2], t[2:], true // -Cdir, -pplugin
			}
		}
		if !ok {
			continue
		}
		h := RunOpt{at: i, End: i, Name: name, Spec: spec}
		switch {
		case spec.Flag:
		case glued:
			h.Value = word{Text: value, Static: w.Static}
		case i+1 < len(words):
			i++
			h.End, h.Value = i, words[i]
		default:
			continue // no value: the tool refuses it
		}
		out = append(out, h)
	}
	return out
}
