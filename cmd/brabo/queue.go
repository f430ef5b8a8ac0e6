package main

// The approval queue from the terminal: brabo queue, show, approve, deny,
// log and agents create, each a client of a running brabo serve that does
// exactly what the web page's buttons do, through the same API.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
)

// runQueue is `brabo queue`: the pending actions of every project the
// member belongs to (or of --project), one line each.
func runQueue(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("queue")
	cf := addClientFlags(fl, true)
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	api, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "queue", "%v", err)
	}
	ctx := context.Background()
	ps, err := api.Projects(ctx)
	if err != nil {
		return fail(stderr, "queue", "%v", reachError(err))
	}
	slugs := map[string]string{}
	for _, p := range ps {
		slugs[p.ID] = p.Slug
	}
	var ans *client.ActionList
	if *cf.project != "" {
		p, err := cf.resolveProject(ctx, api)
		if err != nil {
			return fail(stderr, "queue", "%v", err)
		}
		ans, err = api.ProjectActions(ctx, p.ID, brabo.StatusPending, 1000)
	} else {
		ans, err = api.Queue(ctx, 1000)
	}
	if err != nil {
		return fail(stderr, "queue", "%v", err)
	}
	if *cf.json {
		return printJSON(stdout, ans.Raw)
	}
	if len(ans.Actions) == 0 {
		fmt.Fprintln(stdout, "nothing waits for a decision")
		return 0
	}
	for _, a := range ans.Actions {
		fmt.Fprintf(stdout, "%s  %s  %s\n", a.ID, slugs[a.ProjectID], brabo.Printable(brabo.Summary(a)))
		fmt.Fprintf(stdout, "    %s\n", brabo.Printable(reasonText(a)))
	}
	fmt.Fprintf(stdout, "%d pending: brabo show ID (its card and revision), brabo approve ID --revision R, brabo deny ID --reason \"…\"\n", ans.Total)
	return 0
}

// parseInterspersed parses flags before and after the positional
// arguments (brabo approve act_… --always), which the flag package alone
// stops at; the positionals are returned in order.
func parseInterspersed(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, code int, done bool) {
	for {
		if code, done := parseFlags(fl, args, stdout, stderr); done {
			return nil, code, true
		}
		rest := fl.Args()
		if len(rest) == 0 {
			return pos, 0, false
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), 0, false
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// actionArg is the one argument of show, approve and deny: the action's id.
func actionArg(rest []string, cmd string, stderr io.Writer) (string, bool) {
	if len(rest) != 1 || !strings.HasPrefix(rest[0], "act_") {
		usageError(stderr, cmd, "give one action id (act_…; brabo queue lists them)")
		return "", false
	}
	return rest[0], true
}

// runShow is `brabo show ACTION`: the action as its card says it.
func runShow(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("show")
	cf := addClientFlags(fl, false)
	pos, code, done := parseInterspersed(fl, args, stdout, stderr)
	if done {
		return code
	}
	id, ok := actionArg(pos, "show", stderr)
	if !ok {
		return exitUsage
	}
	api, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "show", "%v", err)
	}
	a, raw, err := api.Action(context.Background(), id)
	if err != nil {
		return fail(stderr, "show", "%v", reachError(err))
	}
	if *cf.json {
		return printJSON(stdout, raw)
	}
	printAction(stdout, a)
	return 0
}

// printAction prints an action for people: what it is, what was decided
// and why, what it did.
func printAction(w io.Writer, a *brabo.ProposedAction) {
	fmt.Fprintf(w, "%s  %s\n", a.ID, brabo.Printable(brabo.Summary(a)))
	fmt.Fprintf(w, "  status    %s\n", a.Status)
	fmt.Fprintf(w, "  proposed  by %s %s, %s\n", a.ActorKind, a.ActorID, a.CreatedAt.Local().Format(time.DateTime))
	if a.Reason != "" {
		fmt.Fprintf(w, "  why       %s\n", brabo.Printable(reasonText(a)))
	}
	if a.Decision.Reason != "" {
		fmt.Fprintf(w, "  rule      %s\n", brabo.Printable(a.Decision.Reason)) // as Decide wrote it
	}
	if a.DecidedBy != "" {
		fmt.Fprintf(w, "  decided   by %s\n", a.DecidedBy)
	}
	if a.Type == brabo.Terminal && a.Payload.Command != "" {
		fmt.Fprintf(w, "  command   %s\n", brabo.Printable(a.Payload.Command))
	}
	if pv := a.Preview; pv != nil {
		if pv.Range != "" {
			fmt.Fprintf(w, "  range     %s\n", brabo.Printable(pv.Range))
		}
		for _, c := range pv.Commits {
			fmt.Fprintf(w, "  commit    %s %s\n", c.Hash, brabo.Printable(c.Subject))
		}
		if pv.Stat != nil {
			fmt.Fprintf(w, "  changes   %s\n", pv.Stat)
		}
		for _, f := range pv.Flags {
			fmt.Fprintf(w, "  flag      %s\n", brabo.Printable(f.String()))
		}
	}
	if a.Status == brabo.StatusPending && a.Revision != "" {
		// What brabo approve names: the card as printed here.
		fmt.Fprintf(w, "  revision  %s\n", a.Revision)
	}
	if r := a.Result; r != nil {
		fmt.Fprintf(w, "  exit      %d\n", r.ExitCode)
		if r.Error != "" {
			fmt.Fprintf(w, "  error     %s\n", brabo.Printable(r.Error))
		}
		if out := strings.TrimRight(r.Output, "\n"); out != "" {
			for _, l := range strings.Split(out, "\n") {
				fmt.Fprintf(w, "  | %s\n", brabo.Printable(l))
			}
		}
	}
}

// reasonText is the card's sentence (the API's reasonText, which names the
// human who decided), or one made here for a server that does not send it.
func reasonText(a *brabo.ProposedAction) string {
	if a.ReasonText != "" {
		return a.ReasonText
	}
	return brabo.ReasonText(a, "")
}

// runApprove is `brabo approve ACTION --revision R [--always]`. The
// revision is the one brabo show printed with the card: without it, the
// card as it is now is printed and nothing is approved.
func runApprove(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("approve")
	cf := addClientFlags(fl, false)
	always := fl.Bool("always", false, "also allow what this action is from now on (the card's Always allow)")
	revision := fl.String("revision", "", "the revision of the card you approve, as brabo show prints it (required)")
	pos, code, done := parseInterspersed(fl, args, stdout, stderr)
	if done {
		return code
	}
	id, ok := actionArg(pos, "approve", stderr)
	if !ok {
		return exitUsage
	}
	api, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "approve", "%v", err)
	}
	if *revision == "" {
		// An approval names the card it approves: show it, approve nothing.
		if a, _, err := api.Action(context.Background(), id); err == nil {
			printAction(stderr, a)
		}
		return usageError(stderr, "approve", "--revision is required: approve names the card you saw (brabo show %s prints it)", id)
	}
	d, err := api.Approve(context.Background(), id, *revision, *always)
	if err != nil {
		return fail(stderr, "approve", "%v", reachError(err))
	}
	if *cf.json {
		return printJSON(stdout, d.Raw)
	}
	fmt.Fprintf(stdout, "approved %s: %s\n", id, d.Action.Status)
	for _, p := range d.Patterns {
		fmt.Fprintf(stdout, "  allowed from now on: %s\n", brabo.Printable(p))
	}
	printAction(stdout, d.Action)
	return 0
}

// runDeny is `brabo deny ACTION --reason "…"`: the reason is what the
// agent reads, so it is required.
func runDeny(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("deny")
	cf := addClientFlags(fl, false)
	reason := fl.String("reason", "", "why: the agent reads it as the tool's answer (required)")
	pos, code, done := parseInterspersed(fl, args, stdout, stderr)
	if done {
		return code
	}
	id, ok := actionArg(pos, "deny", stderr)
	if !ok {
		return exitUsage
	}
	if strings.TrimSpace(*reason) == "" {
		return usageError(stderr, "deny", "--reason is required: the agent reads it")
	}
	api, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "deny", "%v", err)
	}
	d, err := api.Deny(context.Background(), id, *reason)
	if err != nil {
		return fail(stderr, "deny", "%v", reachError(err))
	}
	if *cf.json {
		return printJSON(stdout, d.Raw)
	}
	fmt.Fprintf(stdout, "denied %s: the agent reads %q\n", id, *reason)
	return 0
}

// runLog is `brabo log --project P`: the project's event log, oldest
// first, one event a line.
func runLog(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("log")
	cf := addClientFlags(fl, true)
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	api, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "log", "%v", err)
	}
	ctx := context.Background()
	p, err := cf.resolveProject(ctx, api)
	if err != nil {
		return fail(stderr, "log", "%v", reachError(err))
	}
	ans, err := api.Events(ctx, p.ID, 1000)
	if err != nil {
		return fail(stderr, "log", "%v", err)
	}
	if *cf.json {
		return printJSON(stdout, ans.Raw)
	}
	for _, e := range ans.Events {
		fmt.Fprintf(stdout, "%4d  %s  %-24s %s %s\n", e.Seq, e.CreatedAt.Local().Format(time.DateTime), e.Type, e.ActorID, e.ActionID)
	}
	return 0
}

// runAgents is `brabo agents create NAME --project P`: a new agent and its
// token, printed once.
func runAgents(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "create" {
		return usageError(stderr, "agents", "which? create")
	}
	fl := newFlags("agents create")
	cf := addClientFlags(fl, true)
	hook := fl.Bool("hook", false, "an agent that runs its tools itself through brabo hook (Claude Code, Codex, Gemini CLI)")
	pos, code, done := parseInterspersed(fl, args[1:], stdout, stderr)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "agents create", "give the agent's name (dev-<module> for a dev agent brabo runs)")
	}
	api, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "agents create", "%v", err)
	}
	ctx := context.Background()
	p, err := cf.resolveProject(ctx, api)
	if err != nil {
		return fail(stderr, "agents create", "%v", reachError(err))
	}
	kind := ""
	if *hook {
		kind = brabo.AgentKindHook
	}
	a, err := api.CreateAgent(ctx, p.ID, pos[0], kind)
	if err != nil {
		return fail(stderr, "agents create", "%v", err)
	}
	if *cf.json {
		return printJSON(stdout, a.Raw)
	}
	fmt.Fprintf(stdout, "agent %s created in %s (%s); its token, shown once:\n%s\n", pos[0], p.Slug, a.Agent.ID, a.Token)
	return 0
}

// printJSON prints the API's answer as it came, indented.
func printJSON(w io.Writer, raw json.RawMessage) int {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		fmt.Fprintln(os.Stderr, "brabo: the server's answer is not JSON:", err)
		return exitFailure
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
	return 0
}
