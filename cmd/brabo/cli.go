package main

// The command line's conventions, in one place: the table of subcommands
// (what `brabo help` lists and `brabo <cmd> -h` prints), flag parsing with
// help on standard output and exit 0, one style for errors, and the
// version from the build information.
//
// Adding a subcommand: one entry in commands (name, one-line summary,
// usage, run); its run makes its flag set with newFlags and parses it with
// parseFlags, and reports errors with fail (exit 1) or usageError (exit 2).
// TestCLIHelp checks every entry's -h.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"runtime/debug"
	"strings"
)

// Exit codes of every subcommand but check (whose exit code is its
// decision, check.go) and hook (whose exit 2 is a deny, agenthook).
const (
	exitFailure = 1 // the command could not do its work
	exitUsage   = 2 // bad usage: an unknown flag or command, a missing or bad argument
	// exitInterrupted is 128+SIGINT, what a shell reports for a Ctrl-C.
	exitInterrupted = 130
)

// command is one subcommand of brabo.
type command struct {
	name    string // as typed: "serve"
	summary string // one line: brabo help lists it, brabo <name> -h starts with it
	usage   string // the synopsis, one or more lines, each starting "brabo <name>"
	// more is printed after the usage: the subcommand's verbs, its exit
	// codes, what it reads from the environment. Optional.
	more string
	// verbs is true for a command whose first argument is a verb (admin
	// token, install claude): `brabo <name> -h` is answered from the table,
	// since no flag set is made before the verb.
	verbs bool
	run   func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands is every subcommand, in the order brabo help lists them. It is
// filled in init, since help refers to it.
var commands []*command

func init() {
	commands = []*command{
		{name: "serve", summary: "serve the JSON API, the web approval queue and (with --model) the agents",
			usage: "brabo serve [flags]",
			more: "The data folder (the SQLite database, the workspaces of container projects) is --data,\n" +
				"by default $XDG_STATE_HOME/brabo or ~/.local/state/brabo; it must not overlap a project folder.\n" +
				"Every flag has an environment variable, named in its description.",
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runServe(a, o, e) }},
		{name: "demo", summary: "a scripted dev agent suspends on a pending action until you approve it",
			usage: "brabo demo [--approve] [--keep] [--addr 127.0.0.1:8080]",
			more: "It serves until Ctrl-C (exit 130), so the commands it prints keep working; with --keep\n" +
				"it prints the command that serves the kept demo again.",
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runDemo(a, o, e) }},
		{name: "check", summary: "decide a command offline as brabo would, and explain every segment and rule",
			usage: "brabo check [flags] -- 'command'\nbrabo check [flags] --stdin < command.sh\nbrabo check [flags] --type git_merge --target-branch main",
			more: "Flags go before the command. The exit code is the decision: 0 auto_approve,\n" +
				"1 require_approval, 2 deny, 3 bad usage or a bad file (-h alone exits 0).",
			run: runCheck},
		{name: "migrate", summary: "bring the database to the latest version",
			usage: "brabo migrate [--data DIR] [--db postgres://…]",
			run:   func(a []string, _ io.Reader, o, e io.Writer) int { return runMigrate(a, o, e) }},
		{name: "admin", summary: "issue a new admin token, revoking the old one and its web sessions",
			usage: "brabo admin token [--data DIR] [--db postgres://…]", verbs: true, more: adminMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runAdmin(a, o, e) }},
		{name: "agent", summary: "run the dev agents on a model, without the API, beside a server on PostgreSQL",
			usage: "brabo agent --model openai:<model>|anthropic:<model>|scripted:<path> [flags]",
			more:  modelMore,
			run:   func(a []string, _ io.Reader, o, e io.Writer) int { return runAgent(a, o, e) }},
		{name: "permissions", summary: "see, accept or restore a permissions.json changed on disk (a client of brabo serve)",
			usage: "brabo permissions show|accept|restore --project P [--hash H] [--json]",
			verbs: true, more: permissionsMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runPermissions(a, o, e) }},
		{name: "import", summary: "print the permissions.json entries an agent's own rules become (Claude Code, Codex, Gemini CLI)",
			usage: "brabo import claude|codex|gemini [--dir DIR] [--from FILE] [--codex PATH] [--write] [--json]",
			verbs: true, more: importMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runImport(a, o, e) }},
		{name: "project", summary: "activate execution: the seeded allow list and git_commit for the dev agents (a client of brabo serve)",
			usage: "brabo project activate --project P [--json]",
			verbs: true, more: projectMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runProject(a, o, e) }},
		{name: "init", summary: "make this folder a project of the brabo serve on this machine (with --agent, install its hook)",
			usage: "brabo init [--slug S] [--agent claude|codex|gemini] [--dir DIR]", more: clientMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runInit(a, o, e) }},
		{name: "queue", summary: "list the actions waiting for a decision, one line each (a client of brabo serve)",
			usage: "brabo queue [--project P] [--json]", more: clientMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runQueue(a, o, e) }},
		{name: "show", summary: "show one action: what it is, what was decided and why, what it did",
			usage: "brabo show [--json] ACTION", more: clientMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runShow(a, o, e) }},
		{name: "approve", summary: "approve a pending action (with --always, also what it is from now on)",
			usage: "brabo approve [--always] [--json] ACTION", more: clientMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runApprove(a, o, e) }},
		{name: "deny", summary: "deny a pending action; the agent reads the reason",
			usage: "brabo deny --reason \"…\" [--json] ACTION", more: clientMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runDeny(a, o, e) }},
		{name: "log", summary: "print a project's event log, oldest first",
			usage: "brabo log --project P [--json]", more: clientMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runLog(a, o, e) }},
		{name: "agents", summary: "create an agent in a project and print its token once",
			usage: "brabo agents create NAME --project P [--hook] [--json]", verbs: true, more: clientMore,
			run: func(a []string, _ io.Reader, o, e io.Writer) int { return runAgents(a, o, e) }},
		{name: "install", summary: "make brabo the approver of Claude Code, Codex or Gemini CLI",
			usage: "brabo install claude|codex|gemini [--project P] [--scope project|user] [--uninstall] [--json] [flags]\nbrabo install [agent] --status [--json]", verbs: true,
			more: installMore,
			run:  func(a []string, _ io.Reader, o, e io.Writer) int { return runInstall(a, o, e) }},
		{name: "hook", summary: "the hook Claude Code, Codex and Gemini CLI run before and after each tool call",
			usage: "brabo hook claude|codex|gemini <event> --config FILE", verbs: true,
			more: "brabo install writes the command into the agents' settings. Its exit codes are the\n" +
				"agents' hook protocol: 0 lets the tool run, 2 denies it (any failure is a deny).",
			run: runHook},
		{name: "mcp", summary: "the MCP approval tool for claude -p --permission-prompt-tool mcp__brabo__approve",
			usage: "brabo mcp --config FILE",
			run:   func(a []string, _ io.Reader, o, e io.Writer) int { return runMCP(a, o, e) }},
		{name: "version", summary: "print brabo's module version and VCS revision",
			usage: "brabo version\nbrabo --version",
			run:   runVersion},
		{name: "help", summary: "list the commands, or print one command's help",
			usage: "brabo help [command]",
			run:   runHelp},
	}
}

// clientMore is what the client commands' help says after the usage.
const clientMore = `It is a client of a running brabo serve: the server is --url (BRABO_URL,
` + defaultURL + ` when unset), the member's token BRABO_TOKEN or --token-file FILE
(never a flag: other processes can read a command line), a project its slug
or its id (--project, BRABO_PROJECT). --json prints the API's own answer.`

// lookup returns the command named name, or nil.
func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// isHelp reports whether a is a request for help.
func isHelp(a string) bool {
	switch a {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// printUsage prints brabo's own help: what it is and every command.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "brabo — the approval pipeline for AI coding agents\n\nUsage:\n  brabo <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun \"brabo <command> -h\" for a command's usage and flags; \"brabo --version\" for the version.\n")
}

// printHelp prints a command's help: its summary, its usage, what more it
// says, and the flags of fl when there is one.
func printHelp(w io.Writer, c *command, fl *flag.FlagSet) {
	fmt.Fprintf(w, "brabo %s: %s\n\nUsage:\n", c.name, c.summary)
	for _, l := range strings.Split(c.usage, "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if c.more != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.more, "\n"))
	}
	if fl != nil {
		n := 0
		fl.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			printFlags(w, fl)
		}
	}
}

// printFlags prints the flags of fl, each with two dashes, its value's
// kind, its description and its default.
func printFlags(w io.Writer, fl *flag.FlagSet) {
	fl.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n      %s", line, usage)
		if def := shownDefault(f); def != "" {
			fmt.Fprintf(w, " (default %q)", def)
		}
		fmt.Fprintln(w)
	})
}

// shownDefault is the default help prints: none for a token (its default
// is the environment's secret), a database URL without its password.
func shownDefault(f *flag.Flag) string {
	def := f.DefValue
	switch {
	case def == "" || def == "false" || def == "0", strings.Contains(f.Name, "token"):
		return ""
	}
	if u, err := url.Parse(def); err == nil && u.User != nil {
		return u.Redacted()
	}
	return def
}

// newFlags returns the flag set of a subcommand. Its name is the command
// as typed after brabo ("serve", "admin token"). It prints nothing itself:
// parseFlags prints help and errors in brabo's style.
func newFlags(name string) *flag.FlagSet {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.Usage = func() {}
	return fl
}

// parseFlags parses args into fl. When done is true the caller returns
// code: 0 after -h or --help (the command's help on standard output), 2
// after a bad flag (one line on standard error).
func parseFlags(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	err := fl.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, commandOf(fl), fl)
		return 0, true
	}
	if err != nil {
		return usageError(stderr, fl.Name(), "%s", dashes(err.Error())), true
	}
	return 0, false
}

// commandOf is the command a flag set belongs to: the first word of its
// name.
func commandOf(fl *flag.FlagSet) *command {
	name, _, _ := strings.Cut(fl.Name(), " ")
	if c := lookup(name); c != nil {
		return c
	}
	return &command{name: fl.Name(), usage: "brabo " + fl.Name() + " [flags]"}
}

// dashes writes the flag package's "-name" as "--name", the way brabo's
// help and README spell flags.
func dashes(msg string) string {
	for _, p := range []string{"not defined: -", "for flag -", "needs an argument: -", "syntax: -"} {
		msg = strings.ReplaceAll(msg, p, p+"-")
	}
	return msg
}

// fail prints brabo's one error line, "brabo <cmd>: message", and returns
// exitFailure.
func fail(stderr io.Writer, cmd string, format string, a ...any) int {
	fmt.Fprintf(stderr, "brabo %s: %s\n", cmd, fmt.Sprintf(format, a...))
	return exitFailure
}

// usageError prints one line, "brabo <cmd>: message (brabo <cmd> -h
// prints the usage)", and returns exitUsage.
func usageError(stderr io.Writer, cmd string, format string, a ...any) int {
	name, _, _ := strings.Cut(cmd, " ")
	fmt.Fprintf(stderr, "brabo %s: %s (brabo %s -h prints the usage)\n", cmd, fmt.Sprintf(format, a...), name)
	return exitUsage
}

// runHelp is `brabo help [command]`.
func runHelp(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stdout)
		return 0
	}
	if len(args) == 1 && isHelp(args[0]) {
		printHelp(stdout, lookup("help"), nil)
		return 0
	}
	c := lookup(args[0])
	if c == nil || len(args) > 1 {
		return usageError(stderr, "help", "unknown command %q", strings.Join(args, " "))
	}
	if c.verbs || c.name == "help" || c.name == "version" {
		printHelp(stdout, c, nil)
		return 0
	}
	// The command prints its own help, with its flags.
	return c.run([]string{"-h"}, nil, stdout, stderr)
}

// runVersion is `brabo version` and `brabo --version`.
func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if len(args) == 1 && isHelp(args[0]) {
			printHelp(stdout, lookup("version"), nil)
			return 0
		}
		return usageError(stderr, "version", "unexpected argument(s) %q", args)
	}
	fmt.Fprintln(stdout, "brabo", version())
	return 0
}

// version is brabo's module version and VCS revision, from the build
// information the go command stamps into the binary: "v1.2.3", or
// "(devel) rev 0123abc…, 2026-05-01T10:00:00Z, modified" for a build of a
// checkout.
func version() string {
	return versionOf(debug.ReadBuildInfo())
}

// versionOf is version for the build information bi.
func versionOf(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "(unknown: built without module information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v + " (no VCS revision: built outside a checkout, or with -buildvcs=false) " + bi.GoVersion
	}
	details := "rev " + rev
	if at != "" {
		details += ", " + at
	}
	if modified {
		details += ", modified"
	}
	return v + " (" + details + ") " + bi.GoVersion
}
