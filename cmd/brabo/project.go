package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
)

const projectUsage = `usage: brabo project activate --project P [--addr 127.0.0.1:8080]

  activate  activate execution (maintainer): add the seeded allow list to
            the project's permissions.json (a trusted write) and give each
            dev-<module> agent git_commit: auto_approve. Running it again
            changes nothing.

It is a client of a running brabo serve: the member token is BRABO_TOKEN,
the server --addr (or BRABO_ADDR).
`

// activation is the API's answer to POST …/activate.
type activation struct {
	Patterns        []string `json:"patterns"`
	Agents          []string `json:"agents"`
	Kept            []string `json:"kept"`
	PermissionsHash string   `json:"permissionsHash"`
	Changed         bool     `json:"changed"`
}

// runProject is `brabo project activate`.
func runProject(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w, code := stderr, exitUsage
		if len(args) > 0 {
			w, code = stdout, 0
		}
		fmt.Fprint(w, projectUsage)
		return code
	}
	if args[0] != "activate" {
		fmt.Fprintf(stderr, "brabo project: unknown subcommand %q\n\n%s", args[0], projectUsage)
		return exitUsage
	}
	fl := flag.NewFlagSet("project activate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	addr := fl.String("addr", envOr("BRABO_ADDR", "127.0.0.1:8080"), "the address of brabo serve (BRABO_ADDR)")
	project := fl.String("project", os.Getenv("BRABO_PROJECT"), "the project's id (prj_…; BRABO_PROJECT)")
	if err := fl.Parse(args[1:]); err != nil || !noArgs(fl, stderr) {
		return exitUsage
	}
	if *project == "" {
		fmt.Fprintln(stderr, "brabo project activate: --project is required")
		return exitUsage
	}
	token := os.Getenv("BRABO_TOKEN")
	if token == "" {
		fmt.Fprintln(stderr, "brabo project activate: set BRABO_TOKEN to a maintainer's token")
		return exitUsage
	}
	c := &apiClient{base: baseURL(*addr), token: token}
	var act activation
	if err := c.do("POST", "/v1/projects/"+url.PathEscape(*project)+"/activate", map[string]string{}, &act); err != nil {
		fmt.Fprintf(stderr, "brabo project activate: %v\n", err)
		return 1
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
