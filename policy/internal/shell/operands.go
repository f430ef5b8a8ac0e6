package shell

import "strings"

// The operand table (DESIGN §9, "One operand table"): for the seeded tools
// and the usual writers, which words of a command line are not paths (a
// pattern, a message, printed text), which are paths the program writes,
// and which options take a value. The path scope, the protected-path rule
// and the card's flags all read it through readArgs. A program that is not
// in the table is read strictly: every word must be one bash reads exactly.

// ArgKind is what one word after the program is.
type ArgKind uint8

const (
	// argUnknown: the program is not in the table, or the table does not
	// know the word's place. It must be spelled out exactly; its text is
	// checked as a path.
	ArgUnknown ArgKind = iota
	// argPath is a path the program reads.
	argPath
	// argWrite is a path the program writes, creates or removes.
	ArgWrite
	// argData is not a path: printed text, a pattern, a message, a number,
	// a name.
	argData
	// argDir is a directory the program works in (git -C, make -C); the
	// program's relative paths are taken from there.
	argDir
)

// programSpec is the table's row for one program, or one subcommand of
// git.
type programSpec struct {
	// values maps the options that take a value ("-m", "--message") to
	// the kind of the value. An option not in it takes none.
	values map[string]ArgKind
	// operands are the kinds of the first operands, in order; rest is the
	// kind of every later one.
	operands []ArgKind
	rest     ArgKind
	// lastWrite marks the last operand as written (cp, mv, ln, install).
	lastWrite bool
	// safeOptions is true when no option of the program writes a file,
	// runs code or reaches the network: a word that may turn out to be an
	// option changes nothing a check depends on.
	safeOptions bool
	// optionsFirst is true for programs that read options only before the
	// first operand (echo, printf): a later "-x" is an operand.
	optionsFirst bool
	// patternFirst is grep's rule: the first operand is the pattern unless
	// an option (-e, -f) gives it.
	patternFirst []string
	// sub holds the subcommands of a program whose first operand names
	// one (git); an unknown subcommand is read with subDefault.
	sub        map[string]*programSpec
	subDefault *programSpec
}

func kinds(k ArgKind, names ...string) map[string]ArgKind {
	m := make(map[string]ArgKind, len(names))
	for _, n := range names {
		m[n] = k
	}
	return m
}

func merge(maps ...map[string]ArgKind) map[string]ArgKind {
	out := map[string]ArgKind{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// gitLogValues are the value options of git's history and diff readers.
var gitLogValues = merge(
	kinds(argData, "--grep", "--author", "--committer", "--format", "--pretty", "-S", "-G", "-n",
		"--max-count", "--since", "--until", "--after", "--before", "--skip", "--abbrev", "--date",
		"--encoding", "--decorate", "-U", "--unified", "--diff-filter", "--min-parents",
		"--max-parents", "--branches", "--tags", "--remotes", "--glob", "--exclude", "-L",
		"--word-diff-regex", "--color-moved", "--stat-width", "--inter-hunk-context", "--src-prefix",
		"--dst-prefix", "--line-prefix", "-I", "--ignore-matching-lines", "--anchored", "--diff-algorithm"),
	kinds(argPath, "-O", "--find-object"),
	kinds(ArgWrite, "--output"),
)

var gitSpecs = map[string]*programSpec{
	"status":      {values: kinds(argData, "--column", "--ignore-submodules"), rest: argPath},
	"log":         {values: gitLogValues, rest: argPath},
	"show":        {values: gitLogValues, rest: argPath},
	"diff":        {values: gitLogValues, rest: argPath},
	"shortlog":    {values: merge(gitLogValues, kinds(argData, "-w", "--group")), rest: argPath},
	"whatchanged": {values: gitLogValues, rest: argPath},
	"blame":       {values: kinds(argData, "-L", "-S", "--contents", "-C", "-M", "--date", "--abbrev"), rest: argPath},
	"commit": {values: merge(kinds(argData, "-m", "--message", "-C", "-c", "--reuse-message",
		"--reedit-message", "--author", "--date", "--fixup", "--squash", "--trailer", "--cleanup"),
		kinds(argPath, "-F", "--file", "-t", "--template", "--pathspec-from-file")), rest: argPath},
	"grep": {values: merge(kinds(argData, "-e", "--max-depth", "-A", "-B", "-C", "--context",
		"--after-context", "--before-context", "-m", "--max-count", "--threads"),
		kinds(argPath, "-f")), rest: argPath, patternFirst: []string{"-e", "-f"}},
	"branch":       {values: kinds(argData, "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--format", "--sort", "--column", "-u", "--set-upstream-to"), rest: argData},
	"tag":          {values: merge(kinds(argData, "-m", "--message", "--contains", "--points-at", "--format", "--sort", "-n", "--cleanup", "-u", "--local-user"), kinds(argPath, "-F", "--file")), rest: argData},
	"remote":       {rest: argData},
	"config":       {values: merge(kinds(argData, "--type", "--default", "--comment", "--value"), kinds(argPath, "-f", "--file", "--blob")), rest: argData},
	"rev-parse":    {values: kinds(argData, "--abbrev-ref", "--short", "--default", "--since", "--until", "--git-path", "--resolve-git-dir", "--prefix", "--exclude", "--glob", "--branches", "--tags", "--remotes"), rest: argData},
	"for-each-ref": {values: kinds(argData, "--format", "--sort", "--count", "--points-at", "--merged", "--no-merged", "--contains", "--no-contains", "--exclude"), rest: argData},
	"ls-tree":      {values: kinds(argData, "--format", "--abbrev"), rest: argPath},
	"ls-files":     {values: merge(kinds(argData, "-x", "--exclude", "--format", "--abbrev"), kinds(argPath, "-X", "--exclude-from", "--exclude-per-directory")), rest: argPath},
	"describe":     {values: kinds(argData, "--match", "--exclude", "--abbrev", "--candidates", "--dirty", "--broken"), rest: argData},
	"cat-file":     {rest: argData},
	"show-ref":     {rest: argData},
	"worktree":     {rest: argPath},
	"stash":        {values: kinds(argData, "-m", "--message"), rest: argData},
	"add":          {values: kinds(argPath, "--pathspec-from-file"), rest: argPath},
	"rm":           {values: kinds(argPath, "--pathspec-from-file"), rest: ArgWrite},
	"mv":           {rest: ArgWrite},
	"checkout":     {values: kinds(argData, "-b", "-B", "--orphan", "--conflict"), rest: ArgWrite},
	"switch":       {values: kinds(argData, "-c", "-C", "--create", "--force-create", "--orphan"), rest: argData},
	"restore":      {values: kinds(argData, "-s", "--source"), rest: ArgWrite},
	"reset":        {rest: ArgWrite},
	"clean":        {values: kinds(argData, "-e", "--exclude"), rest: ArgWrite},
	"fetch":        {rest: argData},
	"pull":         {rest: argData},
	"push":         {rest: argData},
	"merge":        {values: kinds(argData, "-m", "--message", "-s", "--strategy", "-X", "--strategy-option"), rest: argData},
	"rebase":       {values: kinds(argData, "--onto", "-s", "--strategy", "-X", "--strategy-option"), rest: argData},
	"cherry-pick":  {rest: argData},
	"revert":       {rest: argData},
	"apply":        {values: kinds(argData, "-p", "-C", "--exclude", "--include"), rest: argPath},
	"init":         {rest: ArgWrite},
	"clone":        {rest: ArgWrite},
}

// gitGlobals are git's options before the subcommand that take a value.
var gitGlobals = merge(
	kinds(argDir, "-C", "--git-dir", "--work-tree"),
	kinds(argData, "-c", "--config-env", "--namespace", "--super-prefix", "--list-cmds", "--attr-source"),
	kinds(argPath, "--exec-path"),
)

// programs is the operand table. Keys are program names as their basename.
var programs = map[string]*programSpec{
	// Reading the worktree.
	"cat":  {rest: argPath, safeOptions: true},
	"head": {values: kinds(argData, "-n", "-c", "--lines", "--bytes"), rest: argPath, safeOptions: true},
	"tail": {values: kinds(argData, "-n", "-c", "--lines", "--bytes", "--pid", "-s", "--sleep-interval", "--max-unchanged-stats"), rest: argPath, safeOptions: true},
	"wc":   {values: kinds(argPath, "--files0-from"), rest: argPath, safeOptions: true},
	"ls": {values: kinds(argData, "-I", "--ignore", "--hide", "--color", "--format", "--sort", "--time",
		"--time-style", "-w", "--width", "-T", "--tabsize", "--block-size", "--indicator-style", "--quoting-style"),
		rest: argPath, safeOptions: true},
	"pwd": {rest: argData, safeOptions: true},
	"grep": {values: merge(kinds(argData, "-e", "--regexp", "-m", "--max-count", "-A", "-B", "-C",
		"--context", "--after-context", "--before-context", "--include", "--exclude", "--exclude-dir",
		"--color", "--colour", "--label", "-d", "--directories", "-D", "--devices", "--binary-files", "--group-separator"),
		kinds(argPath, "-f", "--file", "--exclude-from")), rest: argPath, safeOptions: true,
		patternFirst: []string{"-e", "--regexp", "-f", "--file"}},
	"echo":      {rest: argData, safeOptions: true, optionsFirst: true},
	"printf":    {values: kinds(argData, "-v"), rest: argData, optionsFirst: true},
	"test":      {rest: argData, safeOptions: true, optionsFirst: true},
	"[":         {rest: argData, safeOptions: true, optionsFirst: true},
	"true":      {rest: argData, safeOptions: true},
	"false":     {rest: argData, safeOptions: true},
	":":         {rest: argData, safeOptions: true},
	"sleep":     {rest: argData, safeOptions: true},
	"date":      {values: merge(kinds(argData, "-d", "--date", "-I", "--iso-8601", "--rfc-3339"), kinds(argPath, "-f", "--file", "-r", "--reference")), rest: argData},
	"seq":       {values: kinds(argData, "-f", "--format", "-s", "--separator"), rest: argData, safeOptions: true},
	"basename":  {values: kinds(argData, "-s", "--suffix"), rest: argData, safeOptions: true},
	"dirname":   {rest: argData, safeOptions: true},
	"which":     {rest: argData, safeOptions: true},
	"type":      {rest: argData, safeOptions: true},
	"realpath":  {values: kinds(argDir, "--relative-to", "--relative-base"), rest: argPath, safeOptions: true},
	"readlink":  {rest: argPath, safeOptions: true},
	"stat":      {values: kinds(argData, "-c", "--format", "--printf"), rest: argPath, safeOptions: true},
	"file":      {values: kinds(argData, "-F", "--separator", "-e", "--exclude"), rest: argPath},
	"du":        {values: kinds(argData, "-d", "--max-depth", "-B", "--block-size", "-t", "--threshold", "--exclude", "--time-style"), rest: argPath},
	"diff":      {values: kinds(argData, "-U", "--unified", "-C", "--context", "-x", "--exclude", "-I", "--ignore-matching-lines", "--label", "-L"), rest: argPath},
	"cmp":       {rest: argPath, safeOptions: true},
	"sort":      {values: merge(kinds(argData, "-k", "--key", "-t", "--field-separator", "-S", "--buffer-size", "--parallel"), kinds(ArgWrite, "-o", "--output"), kinds(argDir, "-T", "--temporary-directory")), rest: argPath},
	"uniq":      {values: kinds(argData, "-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"), operands: []ArgKind{argPath, ArgWrite}, rest: ArgUnknown},
	"cut":       {values: kinds(argData, "-d", "--delimiter", "-f", "--fields", "-c", "--characters", "-b", "--bytes", "--output-delimiter"), rest: argPath, safeOptions: true},
	"tr":        {rest: argData, safeOptions: true},
	"nl":        {rest: argPath},
	"tac":       {rest: argPath, safeOptions: true},
	"rev":       {rest: argPath, safeOptions: true},
	"md5sum":    {rest: argPath, safeOptions: true},
	"sha1sum":   {rest: argPath, safeOptions: true},
	"sha256sum": {rest: argPath, safeOptions: true},
	"jq": {values: merge(kinds(argData, "--arg", "--argjson", "--indent", "--tab"), kinds(argPath, "-f", "--from-file", "--slurpfile", "--rawfile", "-L")),
		operands: []ArgKind{argData}, rest: argPath},

	// Writers.
	"tee":     {rest: ArgWrite},
	"touch":   {values: merge(kinds(argData, "-d", "--date", "-t"), kinds(argPath, "-r", "--reference")), rest: ArgWrite},
	"rm":      {rest: ArgWrite},
	"rmdir":   {rest: ArgWrite},
	"unlink":  {rest: ArgWrite},
	"mkdir":   {values: kinds(argData, "-m", "--mode", "--context"), rest: ArgWrite},
	"cp":      {values: merge(kinds(argData, "-S", "--suffix", "--backup", "--reflink", "--sparse", "--preserve", "--no-preserve"), kinds(ArgWrite, "-t", "--target-directory")), rest: argPath, lastWrite: true},
	"mv":      {values: merge(kinds(argData, "-S", "--suffix", "--backup"), kinds(ArgWrite, "-t", "--target-directory")), rest: ArgWrite},
	"install": {values: merge(kinds(argData, "-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"), kinds(ArgWrite, "-t", "--target-directory")), rest: argPath, lastWrite: true},
	// ln's sources are written too, for the protected rule: a link to
	// .git/config makes .git/config writable under another name.
	"ln":       {values: merge(kinds(argData, "-S", "--suffix", "--backup"), kinds(ArgWrite, "-t", "--target-directory")), rest: ArgWrite},
	"chmod":    {values: kinds(argPath, "--reference"), operands: []ArgKind{argData}, rest: ArgWrite},
	"chown":    {values: kinds(argPath, "--reference"), operands: []ArgKind{argData}, rest: ArgWrite},
	"chgrp":    {values: kinds(argPath, "--reference"), operands: []ArgKind{argData}, rest: ArgWrite},
	"truncate": {values: merge(kinds(argData, "-s", "--size", "-o"), kinds(argPath, "-r", "--reference")), rest: ArgWrite},
	// sed's script is code: checkCode reads it (argData keeps it out of the
	// path scope, not out of the checks).
	"tar": {values: merge(kinds(argPath, "-f", "--file", "-T", "--files-from", "-X", "--exclude-from"),
		kinds(ArgWrite, "-C", "--directory"), kinds(argData, "--exclude", "--transform", "--strip-components", "-b", "--blocking-factor", "--format", "-H")),
		rest: argPath},
	"unzip": {values: merge(kinds(ArgWrite, "-d"), kinds(argData, "-x", "-P")), rest: argPath},
	"patch": {values: merge(kinds(ArgWrite, "-o", "--output", "-r", "--reject-file"), kinds(argPath, "-i", "--input"), kinds(argDir, "-d", "--directory"), kinds(argData, "-p", "--strip", "-F", "--fuzz")), operands: []ArgKind{ArgWrite}, rest: argPath},
	"rsync": {values: kinds(argData, "-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--chmod", "--chown"), rest: argPath, lastWrite: true},
	"sed": {values: merge(kinds(argData, "-e", "--expression", "-l", "--line-length"), kinds(argPath, "-f", "--file")),
		operands: []ArgKind{argData}, rest: argPath, patternFirst: []string{"-e", "--expression", "-f", "--file"}},

	// Building and testing (the seeded allow list).
	"make": {values: merge(kinds(argDir, "-C", "--directory"), kinds(argPath, "-f", "--file", "--makefile", "-I", "--include-dir"),
		kinds(argData, "-j", "--jobs", "-l", "--load-average", "-o", "--old-file", "-W", "--what-if", "--assume-new", "--assume-old", "-O", "--output-sync")),
		rest: argData},
	"pytest": {values: merge(kinds(argData, "-k", "-m", "-p", "-o", "--override-ini", "--maxfail", "--tb", "-r", "--durations", "--import-mode", "--log-level", "--capture", "-W"),
		kinds(argPath, "-c", "--confcutdir", "--deselect", "--ignore", "--ignore-glob"), kinds(argDir, "--rootdir"), kinds(ArgWrite, "--junitxml", "--junit-xml", "--basetemp", "--resultlog")),
		rest: argPath},
	"mix":  {subDefault: &programSpec{rest: argPath}},
	"npx":  {rest: argData},
	"npm":  {subDefault: &programSpec{rest: argData}},
	"pnpm": {subDefault: &programSpec{rest: argData}},
	"yarn": {subDefault: &programSpec{rest: argData}},
	"cargo": {subDefault: &programSpec{values: merge(kinds(argData, "-p", "--package", "--features", "-F", "--bin", "--test",
		"--example", "--bench", "--target", "-j", "--jobs", "--profile", "--message-format", "--color", "--exclude"),
		kinds(argPath, "--manifest-path"), kinds(ArgWrite, "--target-dir")), rest: argData}},
	"go": {sub: map[string]*programSpec{
		"env": {rest: ArgUnknown},
	}, subDefault: &programSpec{values: merge(
		kinds(argData, "-run", "-bench", "-count", "-timeout", "-tags", "-ldflags", "-gcflags", "-asmflags",
			"-mod", "-p", "-parallel", "-cpu", "-benchtime", "-covermode", "-coverpkg", "-skip", "-shuffle",
			"-buildmode", "-compiler", "-installsuffix", "-fuzz", "-fuzztime", "-list", "-vet", "-failfast",
			"-pgo", "-benchmem", "-trimpath", "-json"),
		kinds(ArgWrite, "-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile",
			"-mutexprofile", "-trace", "-outputdir", "-pkgdir"),
		kinds(argPath, "-modfile", "-overlay"), kinds(argDir, "-C"),
		kinds(ArgUnknown, "-exec", "-toolexec", "-vettool")), rest: argPath}},
}

func init() {
	programs["git"] = &programSpec{values: gitGlobals, sub: gitSpecs, subDefault: &programSpec{rest: argPath}}
	programs["egrep"], programs["fgrep"] = programs["grep"], programs["grep"]
	programs["sha512sum"] = programs["sha256sum"]
}

// argument is one word after the program with what the table says of it.
type argument struct {
	w *word
	// kind is what the word, or the value glued to an option, is.
	kind ArgKind
	// option is true for an option word ("-n", "--output=x"); value is the
	// part after "=" or the glued short value, "" when none.
	option bool
	value  string
	// optionPlace is true when the word stands where the program reads
	// options: a word that turns out to start with '-' would be one.
	optionPlace bool
	// subcommand is true for the word that names git's (or npm's, go's…)
	// subcommand.
	subcommand bool
}

// readArgs places every word of a segment after the program with the
// operand table. The second result is the spec the words were read with:
// nil for a program not in the table.
func readArgs(prog string, words []word) ([]argument, *programSpec) {
	spec := programs[prog]
	args := make([]argument, len(words))
	for i := range words {
		args[i].w = &words[i]
	}
	if spec == nil {
		for i := range args {
			args[i].optionPlace = true
		}
		return args, nil
	}
	if spec.sub == nil && spec.subDefault == nil {
		spec.place(args)
		return args, spec
	}
	// A program with subcommands: its own options, then the subcommand.
	i := placeOptions(spec, args, true)
	if i >= len(args) {
		return args, spec
	}
	args[i].subcommand = true
	args[i].kind = argData
	sub := spec.sub[args[i].w.Text]
	if sub == nil {
		sub = spec.subDefault
	}
	if sub == nil {
		sub = &programSpec{}
	}
	sub.place(args[i+1:])
	return args, spec
}

// placeOptions reads the options at the start of args with spec's value
// options, until the first word that is not an option, and returns its
// index.
func placeOptions(spec *programSpec, args []argument, stopAtOperand bool) int {
	for i := 0; i < len(args); i++ {
		a := &args[i]
		a.optionPlace = true
		t := a.w.Text
		if !a.w.Static && a.w.mayBeOption() {
			return i // an expansion where the subcommand or an option stands
		}
		if t == "--" {
			a.option, a.kind = true, argData
			return i + 1
		}
		if len(t) < 2 || t[0] != '-' {
			if stopAtOperand {
				return i
			}
			continue
		}
		if takesNext := spec.option(a); takesNext && i+1 < len(args) {
			i++
			args[i].kind = a.kind
			args[i].optionPlace = false
		}
	}
	return len(args)
}

// option reads one option word into a and reports whether its value is
// the next word.
func (spec *programSpec) option(a *argument) (takesNext bool) {
	t := a.w.Text
	a.option = true
	a.kind = argData
	if strings.HasPrefix(t, "--") {
		name, value, glued := strings.Cut(t, "=")
		k, ok := spec.values[name]
		switch {
		case ok && glued:
			a.kind, a.value = k, value
		case ok:
			a.kind = k
			return true
		case glued:
			a.kind, a.value = ArgUnknown, value // an option we do not know: its value is read strictly
		}
		return false
	}
	// A cluster of short options: the first that takes a value takes the
	// rest of the word, or the next word.
	for k := 1; k < len(t); k++ {
		kind, ok := spec.values["-"+t[k:k+1]]
		if !ok {
			// A long option written with one dash (go's -run, find's
			// -name) is looked up whole.
			if kind, ok = spec.values[t]; ok && k == 1 {
				a.kind = kind
				return true
			}
			if k == 1 {
				if name, value, glued := strings.Cut(t, "="); glued {
					if kind, ok := spec.values[name]; ok {
						a.kind, a.value = kind, value
						return false
					}
				}
			}
			continue
		}
		a.kind = kind
		if k+1 < len(t) {
			a.value = t[k+1:]
			return false
		}
		return true
	}
	return false
}

// place reads the words after a program (or its subcommand) with spec.
func (spec *programSpec) place(args []argument) {
	patternGiven := false
	for _, a := range args {
		for _, o := range spec.patternFirst {
			t := a.w.Text
			if t == o || strings.HasPrefix(t, o+"=") || len(o) == 2 && strings.HasPrefix(t, o) && !strings.HasPrefix(t, "--") {
				patternGiven = true
			}
		}
	}
	operand, last := 0, -1 // how many operands, and where the last is
	opts := true
	for i := 0; i < len(args); i++ {
		a := &args[i]
		t := a.w.Text
		if opts {
			a.optionPlace = true
		}
		switch {
		case opts && a.w.Static && t == "--":
			a.option, a.kind = true, argData
			opts = false
			continue
		case opts && !a.w.dynStart && len(t) > 1 && t[0] == '-':
			if spec.option(a) && i+1 < len(args) {
				i++
				args[i].kind = a.kind
				args[i].optionPlace = false
			}
			continue
		}
		if spec.optionsFirst {
			opts = false
		}
		if len(spec.patternFirst) > 0 {
			// grep's and sed's first operand is the pattern (the script)
			// unless an option gave it; every other operand is a file.
			a.kind = spec.rest
			if !patternGiven && operand == 0 {
				a.kind = argData
				patternGiven = true
			}
			operand, last = operand+1, i
			continue
		}
		a.kind = spec.operandKind(operand)
		operand, last = operand+1, i
	}
	if spec.lastWrite && operand > 1 {
		args[last].kind = ArgWrite
	}
}

func (spec *programSpec) operandKind(i int) ArgKind {
	if i < len(spec.operands) {
		return spec.operands[i]
	}
	return spec.rest
}
