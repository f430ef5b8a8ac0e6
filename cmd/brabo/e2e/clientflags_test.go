package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// permissions and project, the client commands of the release before,
// read the flags every client command reads: --url or BRABO_URL, the
// project by its slug or id, --json for the API's own answer. Their old
// --addr and BRABO_ADDR still name the server, each with one warning.
func TestPermissionsAndProjectTakeTheClientFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(echo)"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, t.TempDir())
	project := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	hostPort := strings.TrimPrefix(srv.url, "http://")
	env := func(more ...string) []string {
		var out []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "BRABO_") {
				out = append(out, kv)
			}
		}
		return append(append(out, "BRABO_TOKEN="+srv.token), more...)
	}
	run := func(env []string, args ...string) result { return runBraboEnv(t, root, env, args...) }

	// --json: the API's answer, as it came.
	r := run(env(), "permissions", "show", "--url", srv.url, "--project", "shop", "--json")
	var trust struct{ Status, TrustedHash, DecidedWith string }
	if err := json.Unmarshal([]byte(r.stdout), &trust); r.code != 0 || r.stderr != "" || err != nil || trust.Status != "trusted" || trust.TrustedHash == "" {
		t.Fatalf("permissions show --json: %+v %v\n%s", trust, err, r)
	}
	r = run(env("BRABO_URL="+srv.url), "project", "activate", "--project", "shop", "--json")
	var act struct {
		Patterns []string
		Changed  bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &act); r.code != 0 || r.stderr != "" || err != nil || !act.Changed || len(act.Patterns) == 0 {
		t.Fatalf("project activate --json: %+v %v\n%s", act, err, r)
	}

	// The old spellings: the same answer, and one line that says what to
	// write instead.
	for _, c := range []struct {
		env  []string
		args []string
		warn string
		says string
	}{
		{nil, []string{"permissions", "show", "--addr", hostPort, "--project", project}, "--addr is deprecated", "trusted: "},
		{[]string{"BRABO_ADDR=" + hostPort}, []string{"permissions", "show", "--project", "shop"}, "BRABO_ADDR is deprecated", "trusted: "},
		{nil, []string{"project", "activate", "--addr", srv.url, "--project", "shop"}, "--addr is deprecated", "active already"},
		{[]string{"BRABO_ADDR=" + hostPort}, []string{"project", "activate", "--project", project}, "BRABO_ADDR is deprecated", "active already"},
	} {
		r := run(env(c.env...), c.args...)
		if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "warning: "+c.warn) || !strings.Contains(r.stderr, "use --url") && !strings.Contains(r.stderr, "use BRABO_URL") ||
			!strings.Contains(r.stdout, c.says) {
			t.Errorf("%q with %q: want one warning %q and %q\n%s", c.args, c.env, c.warn, c.says, r)
		}
	}
	// --url (or BRABO_URL) wins over the old spelling, without a warning.
	if r := run(env("BRABO_ADDR=127.0.0.1:1"), "permissions", "show", "--url", srv.url, "--project", "shop"); r.code != 0 || r.stderr != "" {
		t.Errorf("--url beside BRABO_ADDR:\n%s", r)
	}
}
