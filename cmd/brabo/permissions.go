package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
	"github.com/brabo-dev/brabo/policy"
)

// permissionsMore is what brabo permissions -h says after the usage.
const permissionsMore = `  show      the trust state of the project's permissions.json: the trusted
            version, the file on disk, and what the file adds or drops
  accept    make the file on disk the trusted version (maintainer); --hash
            is the diskHash "show" printed, so a file that changed since
            is refused. Without --hash it shows the change and stops.
  restore   write the trusted version back over the file on disk
            (maintainer); --hash, if given, is the file on disk you saw

It is a client of a running brabo serve: the server is --url (BRABO_URL),
the member's token BRABO_TOKEN or --token-file, the project its slug or id.
It never writes the store itself.`

// runPermissions is `brabo permissions`: the maintainer's Accept and
// Restore of a permissions.json changed on disk, through the API.
func runPermissions(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "permissions", "which? show, accept or restore")
	}
	verb := args[0]
	if verb != "show" && verb != "accept" && verb != "restore" {
		return usageError(stderr, "permissions", "unknown subcommand %q: want show, accept or restore", verb)
	}
	fl := newFlags("permissions " + verb)
	cf := addClientFlags(fl, true)
	hash := fl.String("hash", "", "the hash of the file on disk you saw (diskHash)")
	if code, done := parseNoArgs(fl, args[1:], stdout, stderr); done {
		return code
	}
	if *cf.project == "" {
		return usageError(stderr, "permissions "+verb, "--project is required")
	}
	c, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "permissions "+verb, "%v", err)
	}
	ctx := context.Background()
	p, err := cf.resolveProject(ctx, c)
	if err != nil {
		return fail(stderr, "permissions "+verb, "%v", reachError(err))
	}
	var st *client.Trust
	switch {
	case verb == "show", verb == "accept" && *hash == "":
		if st, err = c.Trust(ctx, p.ID); err != nil {
			break
		}
		if *cf.json && verb == "show" {
			printValue(stdout, st)
			return 0
		}
		printTrust(stdout, st)
		if verb == "accept" {
			return usageError(stderr, "permissions accept", "nothing accepted: to accept the file shown, run brabo permissions accept --project %s --hash %s", p.ID, st.DiskHash)
		}
		return 0
	case verb == "accept":
		st, err = c.AcceptPermissions(ctx, p.ID, *hash)
	case verb == "restore":
		st, err = c.RestorePermissions(ctx, p.ID, *hash)
	}
	if err != nil {
		return fail(stderr, "permissions "+verb, "%v", err)
	}
	if *cf.json {
		printValue(stdout, st)
		return 0
	}
	printTrust(stdout, st)
	return 0
}

// printTrust prints a trust state for people: one line that says which
// version decides, the two hashes, then the difference.
func printTrust(w io.Writer, st *client.Trust) {
	var change policy.Change
	if len(st.Change) > 0 {
		json.Unmarshal(st.Change, &change)
	}
	switch st.Status {
	case "held":
		why := "lets more through than the trusted version"
		if st.Unreadable != "" {
			why = "cannot be read (" + brabo.Printable(st.Unreadable) + ")"
		} else if change.Kind == policy.ChangeInvalid {
			why = "is invalid"
		}
		fmt.Fprintf(w, "held: the file on disk %s; brabo decides with the trusted version until a maintainer accepts or restores\n", why)
	case "applied":
		fmt.Fprintln(w, "applied: the file on disk only tightens the trusted version; brabo decides with it")
	default:
		fmt.Fprintln(w, "trusted: brabo decides with the file on disk, a trusted version")
	}
	fmt.Fprintf(w, "  trusted  %s\n  on disk  %s\n  decides  %s\n", st.TrustedHash, orNone(st.DiskHash), st.DecidedWith)
	for _, l := range []struct {
		name string
		d    policy.ListDiff
	}{{"allow", change.Allow}, {"deny", change.Deny}, {"ask", change.Ask}} {
		for _, p := range l.d.Added {
			fmt.Fprintf(w, "  %-5s + %s\n", l.name, brabo.Printable(p))
		}
		for _, p := range l.d.Removed {
			fmt.Fprintf(w, "  %-5s - %s\n", l.name, brabo.Printable(p))
		}
	}
	if change.Invalid != "" {
		fmt.Fprintf(w, "  invalid: %s\n", brabo.Printable(change.Invalid))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(cannot be read)"
	}
	return s
}

// baseURL turns --addr (host:port, or a URL) into the server's base URL.
func baseURL(addr string) string {
	if strings.Contains(addr, "://") {
		return strings.TrimSuffix(addr, "/")
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	return "http://" + addr
}
