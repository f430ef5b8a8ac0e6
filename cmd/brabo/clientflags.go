package main

// The flags every client command of brabo serve shares (queue, show,
// approve, deny, log, agents, init, install, permissions, project): where the server
// is, whose token, which project, and --json for the API's own answer. The
// token never comes from the command line, where every process of the
// machine can read it (/proc/<pid>/cmdline): BRABO_TOKEN or --token-file.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
)

// defaultURL is where brabo serve listens unless --addr moved it.
const defaultURL = "http://127.0.0.1:8080"

// noTokenLine is what a client command says when it has no token.
const noTokenLine = "no token: export BRABO_TOKEN=… (the admin token brabo serve printed at its first start), or give --token-file FILE"

// clientFlags are the shared flags of a client command.
type clientFlags struct {
	name      string // the command, for messages: "queue", "permissions show"
	url       *string
	addr      *string // the old --addr (BRABO_ADDR), kept for one release
	tokenFile *string
	project   *string // nil for a command that takes no project
	json      *bool
	stderr    io.Writer
}

// addClientFlags registers the shared flags on fl; withProject adds
// --project (slug or id, BRABO_PROJECT).
func addClientFlags(fl *flag.FlagSet, withProject bool) *clientFlags {
	c := &clientFlags{name: fl.Name()}
	c.url = fl.String("url", os.Getenv("BRABO_URL"), "brabo serve's URL (BRABO_URL; "+defaultURL+" when unset)")
	c.addr = fl.String("addr", "", "deprecated: use --url (or BRABO_URL)")
	c.tokenFile = fl.String("token-file", "", "read the token from FILE instead of BRABO_TOKEN")
	if withProject {
		c.project = fl.String("project", os.Getenv("BRABO_PROJECT"), "the project, its slug or its id (BRABO_PROJECT)")
	}
	c.json = fl.Bool("json", false, "print the API's answer as JSON")
	return c
}

// base is the server's base URL: --url, else the old --addr or
// BRABO_ADDR (with a warning), else the default.
func (c *clientFlags) base() string {
	switch {
	case *c.url != "":
		return baseURL(*c.url)
	case *c.addr != "":
		fmt.Fprintf(c.stderr, "brabo %s: warning: --addr is deprecated and goes away in the next release: use --url (or BRABO_URL)\n", c.name)
		return baseURL(*c.addr)
	case os.Getenv("BRABO_ADDR") != "":
		fmt.Fprintf(c.stderr, "brabo %s: warning: BRABO_ADDR is deprecated and goes away in the next release: use BRABO_URL\n", c.name)
		return baseURL(os.Getenv("BRABO_ADDR"))
	}
	return defaultURL
}

// client is the API client of these flags, or the one line that says why
// there is none (no token).
func (c *clientFlags) client(stderr io.Writer) (*client.Client, error) {
	c.stderr = stderr
	token, err := c.token()
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, errors.New(noTokenLine)
	}
	return client.New(c.base(), token), nil
}

// token is the member's token: --token-file's content, else BRABO_TOKEN,
// else "" (a command that can do without one decides what that means).
func (c *clientFlags) token() (string, error) {
	if *c.tokenFile == "" {
		return os.Getenv("BRABO_TOKEN"), nil
	}
	b, err := os.ReadFile(*c.tokenFile)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("--token-file %s is empty", *c.tokenFile)
	}
	return token, nil
}

// resolveProject turns --project (a slug or an id) into the project; a
// missing one is an error naming the flag.
func (c *clientFlags) resolveProject(ctx context.Context, api *client.Client) (*brabo.Project, error) {
	want := ""
	if c.project != nil {
		want = strings.TrimSpace(*c.project)
	}
	if want == "" {
		return nil, errors.New("--project is required (the project's slug or id; BRABO_PROJECT)")
	}
	ps, err := api.Projects(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.ID == want || p.Slug == want {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no project %q among the %d you are a member of", want, len(ps))
}

// reachError rewrites a failure to reach the server as one line that
// says what to check; any other error is returned as it is.
func reachError(err error) error {
	var ue *client.UnreachableError
	if !errors.As(err, &ue) {
		return err
	}
	why := ue.Err
	var oe *net.OpError
	if errors.As(err, &oe) {
		why = oe.Err
	}
	return fmt.Errorf("cannot reach brabo at %s (%v): is brabo serve running there? --url or BRABO_URL names another", ue.Base, why)
}
