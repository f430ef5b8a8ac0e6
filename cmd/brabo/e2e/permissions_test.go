package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/policy"
)

// runBraboAs runs the binary with BRABO_TOKEN set to token.
func runBraboAs(t *testing.T, token string, args ...string) result {
	t.Helper()
	cmd := exec.Command(braboBin, args...)
	cmd.Env = append(os.Environ(), "BRABO_TOKEN="+token, "BRABO_ADDR=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		r.code = exit.ExitCode()
	default:
		t.Fatalf("brabo %q: %v\n%s", args, err, r)
	}
	return r
}

// `brabo permissions` is a client of the API: it shows a held change, and
// accepts it only for a maintainer and only the version shown.
func TestPermissionsAcceptThroughTheAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	root := t.TempDir()
	trusted := `{"allow": ["Terminal(echo)"]}`
	loose := `{"allow": ["Terminal(echo)", "Terminal(bash)"]}`
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(trusted), 0o644)
	srv := startServe(t, t.TempDir())
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	dev := srv.must(t, "POST", "/v1/projects/"+project+"/members", admin, map[string]any{"name": "dev", "role": "developer"}, 201)["token"].(string)
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(loose), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--addr", srv.url, "--project", project}
	args := func(verb string, more ...string) []string {
		return append(append([]string{"permissions", verb}, base...), more...)
	}

	r := runBraboAs(t, dev, args("show")...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "held: ") || !strings.Contains(r.stdout, "allow + Terminal(bash)") ||
		!strings.Contains(r.stdout, policy.ContentHash([]byte(loose))) {
		t.Fatalf("show:\n%s", r)
	}
	// Without --hash: the change and how to accept it, and nothing accepted.
	r = runBraboAs(t, admin, args("accept")...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "--hash "+policy.ContentHash([]byte(loose))) {
		t.Fatalf("accept without --hash:\n%s", r)
	}
	if r := runBraboAs(t, dev, args("accept", "--hash", policy.ContentHash([]byte(loose)))...); r.code != 1 || !strings.Contains(r.stderr, "forbidden_role") {
		t.Fatalf("a developer's accept:\n%s", r)
	}
	if r := runBraboAs(t, admin, args("accept", "--hash", policy.ContentHash([]byte(trusted)))...); r.code != 1 || !strings.Contains(r.stderr, "permissions_changed") {
		t.Fatalf("an accept of another version:\n%s", r)
	}
	if _, st, _ := srv.call("GET", "/v1/projects/"+project+"/permissions/trust", admin, nil); st["status"] != "held" {
		t.Fatalf("refused accepts changed the state: %v", st)
	}
	r = runBraboAs(t, admin, args("accept", "--hash", policy.ContentHash([]byte(loose)))...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "trusted: ") {
		t.Fatalf("the maintainer's accept:\n%s", r)
	}
	if _, st, _ := srv.call("GET", "/v1/projects/"+project+"/permissions/trust", admin, nil); st["status"] != "trusted" || st["trustedHash"] != policy.ContentHash([]byte(loose)) {
		t.Fatalf("after accept: %v", st)
	}
	// No token is one line and exit 1; no project is bad usage.
	if r := runBraboAs(t, "", args("show")...); r.code != exitFailure || !strings.Contains(r.stderr, "no token: export BRABO_TOKEN") {
		t.Errorf("no token:\n%s", r)
	}
	if r := runBraboAs(t, admin, "permissions", "show", "--addr", srv.url); r.code != exitUsage || !strings.Contains(r.stderr, "--project") {
		t.Errorf("no project:\n%s", r)
	}
}
