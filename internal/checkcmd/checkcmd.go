// Package checkcmd is brabo check: what brabo would decide for one
// command, from a permissions.json on disk, with no server. It is shared by
// `brabo check` and the slim `brabo-check` binary, which links none of the
// server's dependencies, so that a script or CI job that runs it once per
// decision starts in a few milliseconds (docs/check.md, docs/PERFORMANCE.md).
package checkcmd

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/progfind"
	"github.com/brabo-dev/brabo/internal/protect"
	"github.com/brabo-dev/brabo/policy"
)

// Exit codes of brabo check: the decision, or bad usage / a bad file.
const (
	ExitAutoApprove     = 0
	ExitRequireApproval = 1
	ExitDeny            = 2
	ExitUsage           = 3
)

// Run runs brabo check with args (the flags, then the command after --)
// and returns its exit code: ExitAutoApprove, ExitRequireApproval or
// ExitDeny for the decision, ExitUsage for bad usage or a permissions file
// that must be fixed. help prints the command's help for -h.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, help func(io.Writer, *flag.FlagSet)) int {
	fl := flag.NewFlagSet("check", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.Usage = func() {}
	var (
		permissions  = fl.String("permissions", "", "the permissions.json to decide with (default: <root>/permissions.json; a missing file is an empty one)")
		root         = fl.String("root", "", "the project folder, the scope root (default: the current directory)")
		cwd          = fl.String("cwd", "", "the directory the command runs in (default: the root)")
		asJSON       = fl.Bool("json", false, "print the decision as JSON")
		typ          = fl.String("type", string(brabo.Terminal), "the action type (terminal, git_push, git_merge, …)")
		role         = fl.String("role", string(brabo.Developer), "the principal's role: developer, maintainer or owner")
		autonomy     = fl.String("autonomy", "", "a specific agent_autonomy rule for this agent and type: auto_approve, require_approval or deny")
		autoMode     = fl.Bool("auto-mode", false, `the agent is in auto mode (agent_autonomy "*": auto_approve)`)
		container    = fl.Bool("container-running", false, "the project's container is registered running (container floor)")
		targetBranch = fl.String("target-branch", "", "the branch a git_merge merges into")
		fromStdin    = fl.Bool("stdin", false, "read the command's raw bytes from standard input instead of after --")
	)
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "brabo check: "+format+"\n", a...)
		return ExitUsage
	}
	if err := fl.Parse(args); errors.Is(err, flag.ErrHelp) {
		// Help asked alone exits 0; among other arguments it is bad
		// usage: no command line can read as an approval by holding -h.
		if len(args) == 1 {
			help(stdout, fl)
			return 0
		}
		return bad("-h with other arguments: ask for help alone (brabo check -h)")
	} else if err != nil {
		return bad("%s (brabo check -h prints the usage)", dashes(err.Error()))
	}
	if flags := flagsAfterCommand(fl, args); len(flags) > 0 {
		return bad("%q after the command is not read as a flag: flags go before the command, and the command after --: brabo check %s -- %s",
			flags, strings.Join(fl.Args()[1:], " "), shellQuote(fl.Arg(0)))
	}
	// The situation brabo check knows: the flags, the file, the folder,
	// this process's home and binary (protection), and the programs the
	// names resolve to here.
	sit := policy.Situation{ContainerRunning: *container, Protect: protect.For("", os.Environ())}
	payload := brabo.Payload{TargetBranch: *targetBranch}
	at, err := brabo.ParseActionType(*typ)
	if err != nil {
		return bad("--type: %v", err)
	}
	if sit.Role, err = brabo.ParseRole(*role); err != nil {
		return bad("--role: %v", err)
	}
	if *autonomy != "" {
		if sit.Autonomy.Specific, err = brabo.ParsePolicy(*autonomy); err != nil {
			return bad("--autonomy: %v", err)
		}
	}
	if *autoMode {
		sit.Autonomy.Wildcard = brabo.AutoApprove
	}

	switch {
	case *fromStdin && fl.NArg() > 0:
		return bad("give the command after -- or with --stdin, not both")
	case *fromStdin:
		b, err := io.ReadAll(io.LimitReader(stdin, policy.MaxCommandBytes+1))
		if err != nil {
			return bad("reading the command from standard input: %v", err)
		}
		payload.Command = string(b)
	case fl.NArg() > 0:
		payload.Command = strings.Join(fl.Args(), " ")
	case at == brabo.Terminal:
		return bad("no command: give it after -- (brabo check -- 'pnpm test') or with --stdin")
	}

	if *root == "" {
		if *root, err = os.Getwd(); err != nil {
			return bad("--root: %v", err)
		}
	}
	if *root, err = filepath.Abs(*root); err != nil {
		return bad("--root: %v", err)
	}
	sit.Scope = policy.Scope{Root: *root, Mode: brabo.ModeLocal, ID: filepath.Base(*root)}
	payload.Cwd = *cwd
	if payload.Cwd != "" && !filepath.IsAbs(payload.Cwd) {
		// A relative --cwd is relative to where brabo check runs, as a
		// shell user would expect.
		if abs, err := filepath.Abs(payload.Cwd); err == nil {
			payload.Cwd = abs
		}
	}

	file := *permissions
	if file == "" {
		// A missing permissions.json in the project folder is an empty
		// file; a missing project folder is a typo, and deciding with an
		// empty file would hide the real file's denies.
		if fi, err := os.Stat(*root); err != nil {
			return bad("--root: %v", err)
		} else if !fi.IsDir() {
			return bad("--root: %s is not a directory", *root)
		}
		file = filepath.Join(*root, "permissions.json")
	}
	data, err := os.ReadFile(file)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && *permissions == "") {
		if *permissions == "" {
			return bad("permissions file: %v", err)
		}
		return bad("--permissions: %v", err)
	}
	rules, fileErr := policy.Parse(file, data)
	sit.Rules = rules
	// What each program name runs, as the server resolves it: this PATH,
	// from the directory the command starts in, with what
	// progfind.AgentWritable lists as what an agent can write.
	sit.Resolve = progfind.Resolver(os.Getenv("PATH"), progfind.AgentWritable(*root, sit.Protect.ServerPaths...))
	d := policy.Decide(policy.NewInput(at, payload, sit))
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // 2>&1 reads as 2>&1, not 2\u003e\u00261
		if err := enc.Encode(d); err != nil {
			return bad("writing JSON: %v", err)
		}
	} else {
		PrintDecision(stdout, d)
		// brabo check has no store, so no trusted version: it decides with
		// the file on disk, and says which content that was, to compare
		// with the trustedHash and diskHash the server shows.
		what := "as on disk"
		if data == nil {
			what = "missing: the empty file"
		}
		fmt.Fprintf(stdout, "decided with: %s (%s, sha256 %s)\n", brabo.Printable(file), what, policy.ContentHash(data))
	}
	if fileErr != nil {
		// The decision above is what brabo would do (ask); the exit code
		// says the file must be fixed.
		fmt.Fprintf(stderr, "brabo check: %v\n", fileErr)
		return ExitUsage
	}
	switch d.Policy {
	case brabo.AutoApprove:
		return ExitAutoApprove
	case brabo.Deny:
		return ExitDeny
	}
	return ExitRequireApproval
}

// flagsAfterCommand returns the arguments after a command given without
// -- that look like check's own flags (`brabo check 'ls' --json`): Go's flag
// package stops at the first argument that is not a flag, and would decide
// "ls --json". After --, everything is the command.
func flagsAfterCommand(fl *flag.FlagSet, args []string) []string {
	if fl.NArg() == 0 || len(args) > fl.NArg() && args[len(args)-fl.NArg()-1] == "--" {
		return nil
	}
	var out []string
	for _, a := range fl.Args()[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (fl.Lookup(name) != nil || isHelp(a)) {
			out = append(out, a)
		}
	}
	return out
}

// shellQuote quotes s for a POSIX shell, for a command line brabo prints.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// PrintDecision prints d as brabo check does: the policy and reason, one
// line per segment, then the warnings.
func PrintDecision(w io.Writer, d brabo.Decision) {
	fmt.Fprintf(w, "%s: %s\n", d.Policy, brabo.Printable(d.Reason))
	for i, s := range d.Segments {
		fmt.Fprintf(w, "  %d. %-7s %s  — %s", i+1, s.Verdict, brabo.Printable(s.Text), brabo.Printable(s.Rule))
		if len(s.Notes) > 0 {
			fmt.Fprintf(w, " [%s]", brabo.Printable(strings.Join(s.Notes, "; ")))
		}
		fmt.Fprintln(w)
	}
	for _, warn := range d.Warnings {
		fmt.Fprintf(w, "warning: %s\n", brabo.Printable(warn))
	}
}

// isHelp reports whether a is a request for help.
func isHelp(a string) bool {
	switch a {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// dashes writes the flag package's one-dash flag names in its errors with
// two, as brabo's help spells them.
func dashes(msg string) string {
	for _, p := range []string{"not defined: -", "for flag -", "needs an argument: -", "syntax: -"} {
		msg = strings.ReplaceAll(msg, p, p+"-")
	}
	return msg
}
