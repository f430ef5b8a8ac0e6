package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
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

// trustAnswer is the API's answer on a project's trust state.
type trustAnswer struct {
	TrustedHash    string        `json:"trustedHash"`
	DiskHash       string        `json:"diskHash"`
	Status         string        `json:"status"`
	Change         policy.Change `json:"change"`
	Unreadable     string        `json:"unreadable"`
	DecidedWith    string        `json:"decidedWith"`
	TrustedContent string        `json:"trustedContent"`
}

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
	p, err := cf.resolveProject(c)
	if err != nil {
		return fail(stderr, "permissions "+verb, "%v", reachError(c.base, err))
	}
	project := &p.ID
	path := "/v1/projects/" + url.PathEscape(p.ID) + "/permissions/"
	var st trustAnswer
	var raw json.RawMessage
	switch {
	case verb == "show", verb == "accept" && *hash == "":
		if err = c.do("GET", path+"trust", nil, &raw); err != nil {
			break
		}
		if *cf.json && verb == "show" {
			return printJSON(stdout, raw)
		}
		if err = json.Unmarshal(raw, &st); err != nil {
			break
		}
		printTrust(stdout, st)
		if verb == "accept" {
			return usageError(stderr, "permissions accept", "nothing accepted: to accept the file shown, run brabo permissions accept --project %s --hash %s", *project, st.DiskHash)
		}
		return 0
	case verb == "accept":
		err = c.do("POST", path+"accept", map[string]string{"hash": *hash}, &raw)
	case verb == "restore":
		err = c.do("POST", path+"restore", map[string]string{"hash": *hash}, &raw)
	}
	if err == nil && *cf.json {
		return printJSON(stdout, raw)
	}
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	if err != nil {
		return fail(stderr, "permissions "+verb, "%v", err)
	}
	printTrust(stdout, st)
	return 0
}

// printTrust prints a trust state for people: one line that says which
// version decides, the two hashes, then the difference.
func printTrust(w io.Writer, st trustAnswer) {
	switch st.Status {
	case "held":
		why := "lets more through than the trusted version"
		if st.Unreadable != "" {
			why = "cannot be read (" + brabo.Printable(st.Unreadable) + ")"
		} else if st.Change.Kind == policy.ChangeInvalid {
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
	}{{"allow", st.Change.Allow}, {"deny", st.Change.Deny}, {"ask", st.Change.Ask}} {
		for _, p := range l.d.Added {
			fmt.Fprintf(w, "  %-5s + %s\n", l.name, brabo.Printable(p))
		}
		for _, p := range l.d.Removed {
			fmt.Fprintf(w, "  %-5s - %s\n", l.name, brabo.Printable(p))
		}
	}
	if st.Change.Invalid != "" {
		fmt.Fprintf(w, "  invalid: %s\n", brabo.Printable(st.Change.Invalid))
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

// apiClient calls brabo's API with a bearer token.
type apiClient struct {
	base, token string
}

// do sends a JSON request and decodes a 2xx answer into out; an error
// answer becomes an error carrying its code and message.
func (c *apiClient) do(method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Code, Message string }
		if json.Unmarshal(raw, &e) == nil && e.Code != "" {
			return fmt.Errorf("%s: %s", e.Code, brabo.Printable(e.Message))
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return json.Unmarshal(raw, out)
}
