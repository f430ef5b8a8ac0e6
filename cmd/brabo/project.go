package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

const projectMore = `  activate  activate execution (maintainer): add the seeded allow list to
            the project's permissions.json (a trusted write) and give each
            dev-<module> agent git_commit: auto_approve. Running it again
            changes nothing.

It is a client of a running brabo serve: the server is --url (BRABO_URL),
the member's token BRABO_TOKEN or --token-file, the project its slug or id.`

// runProject is `brabo project activate`.
func runProject(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "project", "which? activate")
	}
	if args[0] != "activate" {
		return usageError(stderr, "project", "unknown subcommand %q: want activate", args[0])
	}
	fl := newFlags("project activate")
	cf := addClientFlags(fl, true)
	if code, done := parseNoArgs(fl, args[1:], stdout, stderr); done {
		return code
	}
	if *cf.project == "" {
		return usageError(stderr, "project activate", "--project is required")
	}
	c, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "project activate", "%v", err)
	}
	ctx := context.Background()
	p, err := cf.resolveProject(ctx, c)
	if err != nil {
		return fail(stderr, "project activate", "%v", reachError(err))
	}
	act, err := c.Activate(ctx, p.ID)
	if err != nil {
		return fail(stderr, "project activate", "%v", err)
	}
	if *cf.json {
		printValue(stdout, act)
		return 0
	}
	if !act.Changed {
		fmt.Fprintln(stdout, "execution was active already: nothing changed")
	} else {
		fmt.Fprintf(stdout, "execution activated: %d seeded patterns added to permissions.json, git_commit: auto_approve for %d dev agent(s)\n",
			len(act.Patterns), len(act.Agents))
		for _, p := range act.Patterns {
			fmt.Fprintf(stdout, "  + %s\n", p)
		}
		if len(act.Agents) > 0 {
			fmt.Fprintf(stdout, "  agents: %s\n", strings.Join(act.Agents, ", "))
		}
	}
	if len(act.Kept) > 0 {
		fmt.Fprintf(stdout, "kept their own git_commit rule: %s\n", strings.Join(act.Kept, ", "))
	}
	return 0
}
