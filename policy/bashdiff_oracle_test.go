package policy

// The oracle of the differential test: a line Decide auto-approves must not
// make bash run or touch anything the decision did not cover.
//
//   - Every program bash (or a wrapper) tried to start is judged again, by
//     the same Decide with the same rules and scope, as the command text of
//     its argv (each element quoted for bash, the program by its basename
//     when it is one of the PATH stubs, as written otherwise, preceded by
//     the variables the line put into its environment). It must itself be
//     auto-approved: a program or an argument the original decision did not
//     see (`git push$'\0' origin main` runs `git push origin main`) is not.
//     For the tools with external-effect subcommands it is judged a second
//     time without its global options (bashCanonicalArgv), from a table of
//     the oracle's own: a value-taking option Decide does not know
//     (`npm --registry URL publish`) must not hide the subcommand from it.
//   - Outside auto mode, no shell may open, create, rename, unlink, chdir
//     into or connect to anything outside the project folder
//     (bashdiff_trace_test.go lists what a shell does on its own and is not
//     counted).
//   - In auto mode the path scope is off by design (DESIGN §4.6), so only
//     the first check runs: the cap oracle. An argv that is an external
//     effect, privileged, opaque or denied is capped or denied when judged
//     alone, so it fails the line.

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/brabo-dev/brabo"
	"mvdan.cc/sh/v3/syntax"
)

// bashConfig is one Decide configuration every line is judged under.
type bashConfig struct {
	name  string
	rules *Rules
	auto  bool // agent_autonomy wildcard auto_approve
}

// bashToolAllows are the writers and printers the second configuration
// allows on top of the seeded list.
var bashToolAllows = []string{"Terminal(echo)", "Terminal(cat)", "Terminal(printf)", "Terminal(tee)",
	"Terminal(cp)", "Terminal(sed)", "Terminal(touch)", "Terminal(ln)"}

// bashAutoDenies are denied in the auto-mode configuration: the cap oracle
// checks that no denied program runs either.
var bashAutoDenies = []string{"Terminal(rm -rf)", "Terminal(curl)", "Terminal(git reset --hard)"}

// bashConfigs returns the three configurations the test runs: the seeded
// allow list, the seeded list plus common writers, and auto mode with a
// deny list.
func bashConfigs() ([]bashConfig, error) {
	seed, err := NewRules("", SeedAllow(), nil, nil)
	if err != nil {
		return nil, err
	}
	tools, err := NewRules("", append(SeedAllow(), bashToolAllows...), nil, nil)
	if err != nil {
		return nil, err
	}
	auto, err := NewRules("", SeedAllow(), bashAutoDenies, nil)
	if err != nil {
		return nil, err
	}
	return []bashConfig{{"seed", seed, false}, {"tools", tools, false}, {"auto", auto, true}}, nil
}

// input is what Decide is given for cmd: a terminal action of a developer
// in the project folder root, run from cwd.
func (c bashConfig) input(cmd, root, cwd string) Input {
	in := Input{Type: brabo.Terminal, Command: cmd, Cwd: cwd, Role: brabo.Developer, Rules: c.rules,
		Scope: Scope{Root: root, Mode: brabo.ModeLocal, ID: "bashdiff"}}
	if c.auto {
		in.Autonomy.Wildcard = brabo.AutoApprove
	}
	return in
}

// bashOracle judges lines. decide is policy.Decide, or a wrapper of it that
// plants a mistake (the self-test).
type bashOracle struct {
	decide  func(Input) brabo.Decision
	configs []bashConfig
}

// bashVerdict is what the oracle found for one line.
type bashVerdict struct {
	class     string
	line      string
	decisions []brabo.Decision // one per configuration
	run       *bashRun         // nil when no configuration approved the line
	failures  []bashFailure
}

// approved reports whether configuration i auto-approved the line.
func (v *bashVerdict) approved(i int) bool { return v.decisions[i].Policy == brabo.AutoApprove }

// bashFailure is a line one configuration approved although bash did
// something its decision did not cover.
type bashFailure struct {
	config   string
	class    string
	line     string
	decision brabo.Decision
	did      []string // what bash really did, one finding each
	root     string   // the project folder it ran in, "$ROOT" in reports
}

// check decides line under every configuration and, when one approves it,
// runs it under bash with w and applies the oracle.
func (o *bashOracle) check(w *bashWorker, class, line string) (*bashVerdict, error) {
	v := &bashVerdict{class: class, line: line}
	approvedAny := false
	for _, c := range o.configs {
		d := o.decide(c.input(line, w.root, w.root))
		v.decisions = append(v.decisions, d)
		approvedAny = approvedAny || d.Policy == brabo.AutoApprove
	}
	if !approvedAny {
		return v, nil
	}
	run, err := w.runUnderBash(line)
	if err != nil {
		return nil, fmt.Errorf("running %q: %w", line, err)
	}
	v.run = run
	for i, c := range o.configs {
		if !v.approved(i) {
			continue
		}
		if did := o.uncovered(c, run); len(did) > 0 {
			v.failures = append(v.failures, bashFailure{config: c.name, class: class, line: line,
				decision: v.decisions[i], did: did, root: run.root})
		}
	}
	return v, nil
}

// uncovered lists what run did that configuration c would not approve.
func (o *bashOracle) uncovered(c bashConfig, run *bashRun) []string {
	var did []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			did = append(did, s)
		}
	}
	procsub := strings.Contains(run.line, "<(") || strings.Contains(run.line, ">(")
	for _, x := range run.execs {
		argv := x.argv
		if procsub {
			argv = bashProcSubArgs(argv)
		}
		cwd := run.root
		if !c.auto && x.cwd != "" {
			cwd = x.cwd // outside the project it fails, as it should
		}
		where := ""
		if cwd != run.root {
			where = " in " + bashShortPath(cwd, run.root)
		}
		d := o.decide(c.input(bashCommandText(x.env, x.prog, argv), run.root, cwd))
		if d.Policy != brabo.AutoApprove {
			add(fmt.Sprintf("exec %s%s by %s → %s (%s)", bashShortExec(x, run.root), where, x.by, d.Policy, d.Reason))
			continue
		}
		// the same program without its global options: what the
		// subcommand is, whatever Decide's own option tables say
		if canon, ok := bashCanonicalArgv(x.prog, argv); ok {
			d := o.decide(c.input(bashCommandText(x.env, x.prog, canon), run.root, cwd))
			if d.Policy != brabo.AutoApprove {
				add(fmt.Sprintf("exec %s%s by %s, that is %s → %s (%s)", bashShortExec(x, run.root), where, x.by,
					bashQuoteArgv(x.prog, canon), d.Policy, d.Reason))
			}
		}
	}
	if !c.auto {
		for _, t := range run.outside {
			add("touched " + t.String())
		}
	}
	return did
}

// bashGlobalOptions are, for the tools with external-effect subcommands,
// the options that go before the subcommand, from each tool's own
// documentation and independent of the package's tables: value-taking
// ones (a separate argument follows unless written --opt=value) and
// flags. An option missing here only makes the oracle see less; it never
// makes it fail a line, since the argv as written is judged as well.
var bashGlobalOptions = map[string]struct{ value, flag []string }{
	"git": {
		value: []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--list-cmds"},
		flag: []string{"--no-pager", "-P", "-p", "--paginate", "--bare", "--literal-pathspecs", "--glob-pathspecs",
			"--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-optional-locks", "--no-lazy-fetch", "--no-advice"},
	},
	"npm":  {value: []string{"--registry", "--prefix", "-w", "--workspace", "-C", "--userconfig", "--cache", "--loglevel", "--otp", "--tag", "--access"}},
	"pnpm": {value: []string{"--registry", "--filter", "-F", "-C", "--dir", "-w", "--workspace", "--loglevel", "--config"}},
	"yarn": {value: []string{"--cwd", "--registry", "--cache-folder", "--modules-folder"}},
	"kubectl": {value: []string{"-n", "--namespace", "--context", "--cluster", "--user", "--username", "--password",
		"--kubeconfig", "-s", "--server", "--token", "--as", "--as-group", "--request-timeout", "--certificate-authority",
		"--client-certificate", "--client-key", "--tls-server-name", "-v", "--v", "--cache-dir"}},
	"helm": {value: []string{"-n", "--namespace", "--kube-context", "--kubeconfig", "--kube-apiserver", "--kube-as-user",
		"--kube-as-group", "--kube-ca-file", "--kube-token", "--kube-tls-server-name", "--registry-config",
		"--repository-cache", "--repository-config", "--burst-limit", "--qps"}},
	"terraform": {},
	"docker":    {value: []string{"-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey"}},
	"gh":        {value: []string{"-R", "--repo", "--hostname"}},
	"glab":      {value: []string{"-R", "--repo"}},
	"cargo":     {value: []string{"--color", "--config", "-Z", "-C"}},
}

// bashCanonicalArgv returns argv without the global options before the
// subcommand (git -C . reset --hard → git reset --hard), and whether it
// removed any. An option the table does not list counts as a flag.
func bashCanonicalArgv(prog string, argv []string) ([]string, bool) {
	opts, ok := bashGlobalOptions[prog]
	if !ok || len(argv) < 2 {
		return nil, false
	}
	i := 1
	for i < len(argv) && strings.HasPrefix(argv[i], "-") && argv[i] != "-" {
		a := argv[i]
		i++
		if a == "--" {
			break
		}
		if strings.Contains(a, "=") {
			continue
		}
		for _, v := range opts.value {
			if a == v && i < len(argv) {
				i++
				break
			}
		}
	}
	if i == 1 {
		return nil, false
	}
	return append([]string{argv[0]}, argv[i:]...), true
}

// bashCommandText is what Decide judges for an exec: the variables the line
// put into its environment as assignments, then the argv.
func bashCommandText(env []string, prog string, argv []string) string {
	words := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		words = append(words, name+"="+bashQuote(value))
	}
	return strings.Join(append(words, bashQuoteArgv(prog, argv)), " ")
}

// bashProcSubArgs replaces the /dev/fd/N arguments a process substitution
// of the line made (bash passes `cat <(…)` as `cat /dev/fd/63`) by a file
// name inside the project: the original decision judged the substitution
// itself, and what runs inside it is an exec of its own.
func bashProcSubArgs(argv []string) []string {
	var out []string
	for i, a := range argv {
		if i > 0 && bashFdArg.MatchString(a) {
			if out == nil {
				out = append([]string(nil), argv...)
			}
			out[i] = "procsub-" + a[len("/dev/fd/"):]
		}
	}
	if out == nil {
		return argv
	}
	return out
}

var bashFdArg = regexp.MustCompile(`^/dev/fd/[0-9]+$`)

// bashQuoteArgv is the command text of an argv: prog, then each argument
// quoted so that bash reads it back as the same string.
func bashQuoteArgv(prog string, argv []string) string {
	words := []string{bashQuote(prog)}
	if len(argv) > 1 {
		for _, a := range argv[1:] {
			words = append(words, bashQuote(a))
		}
	}
	return strings.Join(words, " ")
}

func bashQuote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil { // an argv cannot hold a NUL; anything else is quotable
		return fmt.Sprintf("%q", s)
	}
	return q
}

// bashShortExec prints an exec for a report, the project folder as "$ROOT".
func bashShortExec(x bashExec, root string) string { return bashShortPaths(x.String(), root) }

func bashShortPath(p, root string) string { return bashShortPaths(p, root) }

// bashShortPaths names, in s, the project folder $ROOT, the folder it is
// in $ROOT/.., and the stub folder $STUBS, for a report.
func bashShortPaths(s, root string) string {
	base := path.Dir(path.Dir(root))
	s = strings.ReplaceAll(s, base+"/bin", "$STUBS")
	s = strings.ReplaceAll(s, root, "$ROOT")
	return strings.ReplaceAll(s, path.Dir(root), "$ROOT/..")
}

// bashWithin reports whether the clean path p is dir or inside it.
func bashWithin(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// report prints a failure for a human: the line, the decision, and what
// bash did instead.
func (f bashFailure) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] class %s: %s\n", f.config, f.class, bashShowLine(f.line))
	fmt.Fprintf(&b, "    decision: %s — %s\n", f.decision.Policy, f.decision.Reason)
	for _, s := range f.decision.Segments {
		fmt.Fprintf(&b, "    segment:  %q tokens=%q %s (%s)\n", s.Text, s.Tokens, s.Verdict, s.Rule)
	}
	for _, d := range f.did {
		fmt.Fprintf(&b, "    bash did: %s\n", bashShortPaths(d, f.root))
	}
	return b.String()
}

// bashShowLine prints a line on one line, Go-quoted when it holds anything
// a terminal would not show plainly.
func bashShowLine(s string) string {
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			return fmt.Sprintf("%q", s)
		}
	}
	return "`" + s + "`"
}
