package egress

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/internal/confine"
)

// needBwrap returns bwrap's path. Without it the test skips, but fails
// under BRABO_REQUIRE_SANDBOX (CI): the claims below are about a real
// network namespace.
func needBwrap(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("bwrap")
	if err == nil {
		err = exec.Command(path, "--unshare-net", "--ro-bind", "/", "/", "true").Run()
	}
	if err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatalf("bwrap cannot make a network namespace here (BRABO_REQUIRE_SANDBOX is set): %v", err)
		}
		t.Skipf("bwrap cannot make a network namespace here (BRABO_REQUIRE_SANDBOX makes this a failure): %v", err)
	}
	return path
}

// inSandbox runs script with bash in a network namespace of its own (only
// loopback) under the forwarder, the session's folder bound in, as the
// sandbox does: the combined output and the exit code.
func inSandbox(t *testing.T, s *Session, script string) (string, int) {
	t.Helper()
	bwrap := needBwrap(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(s.Socket())
	args := []string{"--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--tmpfs", "/tmp", "--ro-bind", self, self, "--bind", dir, dir, "--", self}
	args = append(args, ForwarderArgs(s.Socket(), "bash", "-c", script)...)
	cmd := exec.Command(bwrap, args...)
	cmd.Env = append(os.Environ(), "HOME=/tmp")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// pyGet is python3's urllib fetching $1, which honours the proxy
// variables: it prints the body, or the error.
const pyGet = `python3 - "$1" <<'EOF'
import ssl, sys, urllib.request
try:
    ctx = ssl._create_unverified_context()
    print(urllib.request.urlopen(sys.argv[1], context=ctx, timeout=10).read().decode())
except Exception as e:
    print("python:", e); sys.exit(3)
EOF`

// From a real network namespace: curl and python3's urllib reach a server
// a literal Network(127.0.0.1:PORT) names, over http and https, through
// the forwarder and the proxy; a raw TCP connect that ignores the proxy
// variables gets nowhere.
func TestForwarderInANetworkNamespace(t *testing.T) {
	needBwrap(t)
	for _, tool := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	plain := httptest.NewServer(hello())
	defer plain.Close()
	secure := httptest.NewTLSServer(hello())
	defer secure.Close()
	pp, sp := port(t, plain.URL), port(t, secure.URL)
	s := session(t, &Proxy{}, []string{"Network(127.0.0.1:" + pp + ")", "Network(127.0.0.1:" + sp + ")"}, nil, nil)
	script := fmt.Sprintf(`set -u
get() { `+pyGet+`
}
env | grep -i _proxy | sort
curl -sS --max-time 10 %[1]s/c && echo
curl -sSk --max-time 10 %[2]s/c && echo
get %[1]s/p
get %[2]s/p
echo raw:; curl -sS --noproxy '*' --max-time 3 %[1]s/raw; echo " rc=$?"
python3 -c 'import socket; socket.create_connection(("127.0.0.1", %[3]s), 3)' 2>&1 | tail -1
`, plain.URL, secure.URL, pp)
	out, code := inSandbox(t, s, script)
	t.Logf("%s", out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"HTTPS_PROXY=http://127.0.0.1:", "http_proxy=http://127.0.0.1:", "ALL_PROXY=http://127.0.0.1:", "NO_PROXY=\n", "no_proxy=\n",
		"hello from 127.0.0.1:" + pp + "\n", "hello from 127.0.0.1:" + sp + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the output lacks %q", want)
		}
	}
	if n := strings.Count(out, "hello from"); n != 4 {
		t.Fatalf("%d fetches passed, want 4 (curl and python3, http and https)", n)
	}
	raw := out[strings.Index(out, "raw:"):]
	if strings.Contains(raw, "hello") || !strings.Contains(raw, "rc=7") || !strings.Contains(raw, "ConnectionRefusedError") {
		t.Fatalf("a connection ignoring the proxy got somewhere: %q", raw)
	}
	if r := s.Refusals(); len(r) != 0 {
		t.Fatalf("refusals: %+v", r)
	}
}

// From the namespace, a destination no rule allows is refused by curl's
// and python's own errors, and recorded.
func TestForwarderRefusalInANetworkNamespace(t *testing.T) {
	needBwrap(t)
	srv := httptest.NewServer(hello())
	defer srv.Close()
	s := session(t, &Proxy{}, nil, nil, nil)
	out, code := inSandbox(t, s, fmt.Sprintf(`curl -sS --max-time 10 %[1]s/; echo " rc=$?"
curl -sSk --max-time 10 https://127.0.0.1:%[2]s/; echo " rc=$?"
get() { `+pyGet+`
}
get %[1]s/
exit 0`, srv.URL, port(t, srv.URL)))
	t.Logf("%s", out)
	if code != 0 || strings.Contains(out, "hello") {
		t.Fatalf("exit %d, output %q", code, out)
	}
	want := fmt.Sprintf("brabo: network: 127.0.0.1:%[1]s is not allowed (Network(127.0.0.1:%[1]s) would allow it)", port(t, srv.URL))
	if !strings.Contains(out, want) || !strings.Contains(out, "403") {
		t.Fatalf("the output lacks %q", want)
	}
	if r := s.Refusals(); len(r) != 1 || r[0].Count != 3 {
		t.Fatalf("refusals %+v, want 127.0.0.1:%s refused 3 times", r, port(t, srv.URL))
	}
}

// The forwarder passes on its command's exit status, and never runs the
// command when it cannot start.
func TestForwarderExitStatus(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, &Proxy{}, nil, nil, nil)
	run := func(args ...string) (string, int) {
		out, err := exec.Command(self, args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		return string(out), 0
	}
	if _, code := run(ForwarderArgs(s.Socket(), "sh", "-c", "exit 7")...); code != 7 {
		t.Fatalf("exit %d, want 7", code)
	}
	if _, code := run(ForwarderArgs(s.Socket(), "sh", "-c", "kill -TERM $$")...); code != 128+15 {
		t.Fatalf("exit %d, want 143", code)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	out, code := run(ForwarderArgs("/nonexistent/proxy.sock", "touch", marker)...)
	if code != 126 || !strings.Contains(out, CannotForward) {
		t.Fatalf("exit %d %q, want 126 and %q", code, out, CannotForward)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran without its forwarder")
	}
}

// A command under brabo's Landlock launcher is confined by the forwarder
// itself: it writes only where the spec says, the forwarder still relays,
// and no second brabo process starts.
func TestForwarderConfinesInProcess(t *testing.T) {
	if _, err := confine.ABI(); err != nil {
		if os.Getenv("BRABO_REQUIRE_SANDBOX") != "" {
			t.Fatalf("Landlock is needed: %v", err)
		}
		t.Skipf("Landlock is needed (BRABO_REQUIRE_SANDBOX makes this a failure): %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(hello())
	defer srv.Close()
	s := session(t, &Proxy{}, []string{"Network(127.0.0.1:" + port(t, srv.URL) + ")"}, nil, nil)
	in, out := t.TempDir(), t.TempDir()
	script := fmt.Sprintf(`touch %[1]s/ok && echo wrote-inside; touch %[2]s/no 2>/dev/null && echo wrote-outside
curl -sS --max-time 10 %[3]s/; echo; ps -o comm= -p $PPID`, in, out, srv.URL)
	args := ForwarderArgs(s.Socket(), append([]string{self}, confine.Spec{Write: []string{in}}.Args("bash", "-c", script)...)...)
	got, err := exec.Command(self, args...).CombinedOutput()
	t.Logf("%s", got)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "wrote-inside") || strings.Contains(string(got), "wrote-outside") {
		t.Fatalf("the command was not confined: %q", got)
	}
	if !strings.Contains(string(got), "hello from 127.0.0.1:") {
		t.Fatalf("the confined command did not reach the server: %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "no")); err == nil {
		t.Fatal("the command wrote outside its folder")
	}
	name := filepath.Base(self)
	if len(name) > 15 {
		name = name[:15] // the kernel's comm
	}
	if !strings.HasSuffix(strings.TrimSpace(string(got)), name) {
		t.Fatalf("the command's parent is not the forwarder %s: %q", name, got)
	}
}
