package main

// brabo install: make brabo the approver of Claude Code, Codex or Gemini
// CLI. It is a client command like the others (clientflags.go): --url,
// the token from BRABO_TOKEN or --token-file, --project as a slug or an
// id, --json. Where the hook goes is --scope project|user.
//
// The spellings of the release before keep working for one release, each
// with a warning on standard error: --server (now --url), --project-id
// (now --project), --token (a token on a command line, which every
// process of the machine can read), and --project as an on/off switch
// (now --scope project, the default). An old call is told from a new one
// by what follows --project: nothing, or another flag, is the old switch;
// a slug never starts with "-", so no project is taken for it.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/brabo-dev/brabo/agenthook"
	"github.com/brabo-dev/brabo/client"
)

// installMore is what brabo install -h says after the usage.
const installMore = `It creates a hook agent in the project (or re-uses it with a new token) and
writes the agent's hook settings: --scope project (the default) in the project's
settings, --scope user (or --user) in the user's, for every session of the user.
It needs a maintainer's token (BRABO_TOKEN or --token-file FILE), the server
(--url, BRABO_URL) and the project, its slug or its id (--project, BRABO_PROJECT).
--status needs none of them. --json prints what is installed now, as --status
--json does for one agent and scope.
The old --server, --project-id, --token and on/off --project still work, with
a warning, until the next release.`

// runInstall is `brabo install claude|codex|gemini [--scope project|user]
// [--uninstall]`, and `brabo install [agent] --status`.
func runInstall(args []string, stdout, stderr io.Writer) int {
	agent := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		agent, args = args[0], args[1:]
	}
	cmd := strings.TrimSpace("install " + agent)
	fl := newFlags(cmd)
	cf := addClientFlags(fl, true)
	var (
		scope     = fl.String("scope", "project", "where the hook goes: project (the project's settings) or user (the user's settings: every session of the user; folders that are no brabo project are left to the agent)")
		user      = fl.Bool("user", false, "the same as --scope user")
		uninstall = fl.Bool("uninstall", false, "remove what brabo install wrote, and revoke the hook agent's token in brabo")
		keepAgent = fl.Bool("keep-agent", false, "with --uninstall: remove the files only, leaving the hook agent's token live (brabo cannot be reached)")
		status    = fl.Bool("status", false, "say, per agent CLI, whether the hook is installed, found on disk, and reaches brabo (exit 1 when an installed one does not work)")
		root      = fl.String("root", "", "the project folder (default: the current directory)")
		name      = fl.String("name", "", "the hook agent's name in brabo (default: the agent's, claude-user for --scope user); a re-install re-uses it with a new token")
		wait      = fl.Duration("wait", agenthook.DefaultWait, "how long the hook waits for a human; the agent's hook timeout is 30 s longer")
		sandbox   = fl.Bool("agent-sandbox", false, "also turn on the agent's own command sandbox (Claude Code's sandbox, Codex's workspace-write, Gemini CLI's tools.sandbox): the commands it runs itself are outside brabo's sandbox; --uninstall turns it off")
		codex     = fl.String("codex", "", "the codex binary that reports the hooks' trust hashes (default: codex on PATH)")
		// The old spellings, for one release.
		server    = fl.String("server", "", "deprecated: use --url (or BRABO_URL)")
		projectID = fl.String("project-id", "", "deprecated: use --project")
		token     = fl.String("token", "", "deprecated: a token on a command line can be read by every process of the machine; use BRABO_TOKEN or --token-file")
	)
	args, oldSwitch := oldProjectSwitch(fl, args)
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })

	// Every usage error first, alone on its line: warnings are printed
	// only for a call that goes on.
	switch {
	case *scope != "project" && *scope != "user":
		return usageError(stderr, cmd, "--scope %q: want project or user", *scope)
	case oldSwitch && (*user || *scope == "user"):
		return usageError(stderr, cmd, "--project or --user, not both (--project without a project is the old spelling of --scope project)")
	case set["scope"] && *scope == "project" && *user:
		return usageError(stderr, cmd, "--scope project or --user, not both")
	case set["server"] && set["url"] && *server != *cf.url:
		return usageError(stderr, cmd, "--url %s and --server %s (its old spelling) disagree", *cf.url, *server)
	case set["project-id"] && set["project"] && *projectID != *cf.project:
		return usageError(stderr, cmd, "--project %s and --project-id %s (its old spelling) disagree", *cf.project, *projectID)
	case set["token"] && set["token-file"]:
		return usageError(stderr, cmd, "--token or --token-file, not both")
	}
	warn := func(format string, a ...any) {
		fmt.Fprintf(stderr, "brabo %s: warning: %s\n", cmd, fmt.Sprintf(format, a...))
	}
	if oldSwitch {
		warn("--project without a project is the old spelling of --scope project (the default) and goes away in the next release: --project now takes the project, its slug or its id")
	}
	if set["server"] {
		warn("--server is deprecated and goes away in the next release: use --url (or BRABO_URL)")
		*cf.url = *server
	}
	if set["project-id"] {
		warn("--project-id is deprecated and goes away in the next release: use --project (the project's slug or id)")
		*cf.project = *projectID
	}
	if set["token"] {
		warn("--token is deprecated and goes away in the next release: every process of the machine can read a command line; use BRABO_TOKEN or --token-file FILE")
	}
	isUser := *user || *scope == "user"
	if *root == "" {
		*root, _ = os.Getwd()
	}
	if *status {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		st := agenthook.Status(ctx, agenthook.InstallOptions{Agent: agent, Root: *root})
		ok := true
		for _, s := range st {
			ok = ok && s.OK()
		}
		if *cf.json {
			printValue(stdout, map[string]any{"status": st})
		} else {
			agenthook.WriteStatus(stdout, st)
		}
		if !ok {
			return 1
		}
		return 0
	}
	if agent == "" {
		return usageError(stderr, "install", "which agent? claude, codex or gemini (brabo install claude), or --status")
	}
	tok := *token
	if !set["token"] {
		var err error
		if tok, err = cf.token(); err != nil {
			return fail(stderr, cmd, "%v", err)
		}
	}
	cf.stderr = stderr
	base := cf.base()
	project := strings.TrimSpace(*cf.project)
	if project != "" && !strings.Contains(project, "_") {
		// A slug (an id holds "_", a slug cannot): the server knows its id.
		if tok == "" {
			return fail(stderr, cmd, "--project %s is a slug, and finding its id needs a token (BRABO_TOKEN or --token-file); or give the project's id", project)
		}
		p, err := cf.resolveProject(context.Background(), client.New(base, tok))
		if err != nil {
			return fail(stderr, cmd, "%v", reachError(err))
		}
		project = p.ID
	}
	hookCmd, err := hookCommand()
	if err != nil {
		return fail(stderr, cmd, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := stdout
	if *cf.json {
		out = io.Discard
	}
	opts := agenthook.InstallOptions{Agent: agent, User: isUser, Uninstall: *uninstall, KeepAgent: *keepAgent,
		Server: base, Token: tok, ProjectID: project, Root: *root, Name: *name,
		HookCommand: hookCmd, Wait: *wait, Codex: *codex, AgentSandbox: *sandbox, Out: out}
	if err := agenthook.Install(ctx, opts); err != nil {
		return fail(stderr, cmd, "%v", err)
	}
	if *cf.json {
		sc := map[bool]string{false: "project", true: "user"}[isUser]
		var now *agenthook.InstallStatus
		for _, s := range agenthook.Status(ctx, agenthook.InstallOptions{Agent: agent, Root: *root}) {
			if s.Scope == sc {
				now = &s
			}
		}
		printValue(stdout, map[string]any{"agent": agent, "scope": sc, "project": project, "uninstalled": *uninstall, "status": now})
	}
	return 0
}

// oldProjectSwitch takes the release before's on/off --project out of
// args: --project with nothing after it, or with another flag after it
// (a slug or an id never starts with "-"). It reports whether it was
// there. The values of fl's other flags are skipped, so "--name
// --project" keeps --project as the name's value, as flag.Parse reads it.
func oldProjectSwitch(fl *flag.FlagSet, args []string) ([]string, bool) {
	var out []string
	old := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			// flag.Parse stops at the first word that is no flag.
			out = append(out, args[i:]...)
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if name == "project" && !hasValue && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			old = true
			continue
		}
		out = append(out, a)
		if f := fl.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out, old
}

// isBoolFlag reports whether f takes no value (flag.Parse's own test).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// printValue prints v as indented JSON.
func printValue(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}
