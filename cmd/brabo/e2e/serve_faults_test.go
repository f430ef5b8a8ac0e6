package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/store/storetest"
)

// TestOneDataFolderOneServer: a second `serve` (or `migrate`, or `agent`)
// on the data folder a server holds exits non-zero naming the holder's
// pid, and touches nothing: the first server's running command finishes
// and is recorded executed, not failed as "interrupted". The lock ends with
// the process, however it ends.
func TestOneDataFolderOneServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	data, root := t.TempDir(), t.TempDir()
	first := startServe(t, data)
	admin := first.token
	project := first.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "one", "mode": "local", "root": root}, 201)["id"].(string)
	// A command that runs while the second server tries to start.
	a := first.must(t, "POST", "/v1/projects/"+project+"/actions", admin,
		map[string]any{"type": "terminal", "payload": map[string]any{"command": "sleep 2 && echo slept"}}, 201)
	approved := make(chan map[string]any, 1)
	go func() {
		_, out, _ := first.call("POST", "/v1/actions/"+a["id"].(string)+"/approve", admin, nil)
		approved <- out
	}()
	time.Sleep(300 * time.Millisecond)

	model := scriptedModel(t, `{"turns": []}`)
	want := fmt.Sprintf("data folder %s in use by pid %d", data, first.cmd.Process.Pid)
	for _, args := range [][]string{
		{"serve", "--data", data, "--addr", "127.0.0.1:0"},
		{"migrate", "--data", data},
		{"agent", "--data", data, "--model", model},
	} {
		r := runBounded(t, args...)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("brabo %q beside a running server: want a non-zero exit saying %q\n%s", args, want, r)
		}
	}
	out := <-approved
	if act, _ := out["action"].(map[string]any); act["status"] != "executed" || !strings.Contains(fmt.Sprint(act["result"]), "slept") {
		t.Errorf("the first server's command while a second one started: %v", out)
	}

	// Stopped gracefully or killed, the holder frees the folder.
	first.cmd.Process.Signal(syscall.SIGTERM)
	first.cmd.Wait()
	second := startServe(t, data)
	second.must(t, "GET", "/v1/me", admin, nil, 200)
	second.cmd.Process.Signal(syscall.SIGKILL)
	second.cmd.Wait()
	third := startServe(t, data)
	third.must(t, "GET", "/v1/me", admin, nil, 200)
}

// TestAFirstStartOnATakenPort: the port is bound before anything is
// created, so a start that cannot bind leaves no database, and the next
// start still prints the one-time admin token, which works.
func TestAFirstStartOnATakenPort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	data := filepath.Join(t.TempDir(), "data")
	r := runBrabo(t, t.TempDir(), nil, "serve", "--data", data, "--addr", taken.Addr().String())
	if r.code == 0 || !strings.Contains(r.stderr, "address already in use") {
		t.Fatalf("serve on a taken port: want a non-zero exit naming the address\n%s", r)
	}
	if strings.Contains(r.stdout, "brb_") {
		t.Errorf("a start that could not bind printed a token:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(data, "brabo.db")); !os.IsNotExist(err) {
		t.Fatalf("a start that could not bind left a database (%v)", err)
	}
	srv := startServe(t, data)
	if srv.token == "" {
		t.Fatal("the next start printed no admin token")
	}
	srv.must(t, "GET", "/v1/me", srv.token, nil, 200)
}

// TestStrayArgumentsAndAllInterfaces: a positional argument is refused,
// named, before anything is created; --addr on every interface warns (the
// check runs on a folder another server holds, so it never listens there).
func TestStrayArgumentsAndAllInterfaces(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	data := filepath.Join(t.TempDir(), "data")
	for _, args := range [][]string{
		{"serve", "--data", data, "18093"},
		{"migrate", "--data", data, "now"},
		{"agent", "--data", data, "--model", "scripted:x.json", "extra"},
		{"admin", "token", "--data", data, "owner"},
	} {
		stray := args[len(args)-1]
		r := runBrabo(t, t.TempDir(), nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, `"`+stray+`"`) {
			t.Errorf("brabo %q: want exit %d naming %q\n%s", args, exitUsage, stray, r)
		}
	}
	r := runBrabo(t, t.TempDir(), nil, "serve", "--data", data, "18093")
	if !strings.Contains(r.stderr, "--addr 127.0.0.1:18093") {
		t.Errorf("a stray port does not say how to give it:\n%s", r)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a refused start created the data folder (%v)", err)
	}

	held := t.TempDir()
	srv := startServe(t, held)
	if strings.Contains(srv.logs.String(), "every network interface") {
		t.Errorf("127.0.0.1 warned about every interface:\n%s", srv.logs.String())
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.url, "http://"))
	for _, addr := range []string{":" + port, "0.0.0.0:" + port, "[::]:" + port} {
		r := runBounded(t, "serve", "--data", held, "--addr", addr)
		if !strings.Contains(r.stderr, "warning: --addr "+addr+" listens on every network interface") {
			t.Errorf("--addr %s: no warning\n%s", addr, r)
		}
	}
}

// TestAdminTokenRecoversAccess: `brabo admin token` replaces a lost admin
// token. On SQLite it refuses while a server holds the data folder, and
// the old token is dead after it; on PostgreSQL it runs beside the
// servers, which refuse the old token within a second.
func TestAdminTokenRecoversAccess(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	t.Run("sqlite", func(t *testing.T) {
		if r := runBrabo(t, t.TempDir(), nil, "admin", "token", "--data", filepath.Join(t.TempDir(), "none")); r.code == 0 || !strings.Contains(r.stderr, "no database") {
			t.Errorf("admin token on an empty folder:\n%s", r)
		}
		data := t.TempDir()
		srv := startServe(t, data)
		old := srv.token
		r := runBrabo(t, t.TempDir(), nil, "admin", "token", "--data", data)
		if r.code == 0 || !strings.Contains(r.stderr, "stop the server first") ||
			!strings.Contains(r.stderr, fmt.Sprintf("in use by pid %d", srv.cmd.Process.Pid)) || strings.Contains(r.stdout, "brb_") {
			t.Fatalf("admin token beside a running server:\n%s", r)
		}
		srv.must(t, "GET", "/v1/me", old, nil, 200)
		srv.cmd.Process.Signal(syscall.SIGTERM)
		srv.cmd.Wait()

		r = runBrabo(t, t.TempDir(), nil, "admin", "token", "--data", data)
		token := newToken(t, r)
		srv = startServe(t, data)
		if srv.token != "" {
			t.Error("a restart after admin token printed a first-start token")
		}
		srv.must(t, "GET", "/v1/me", old, nil, 401)
		me := srv.must(t, "GET", "/v1/me", token, nil, 200)
		if m, _ := me["member"].(map[string]any); m["admin"] != true {
			t.Errorf("the new token is not the admin's: %v", me)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		db := storetest.PostgresURL(t)
		srv := startServe(t, t.TempDir(), "--db", db)
		old := srv.token
		srv.must(t, "GET", "/v1/me", old, nil, 200) // cached by the server now
		r := runBrabo(t, t.TempDir(), nil, "admin", "token", "--db", db)
		token := newToken(t, r)
		deadline := time.Now().Add(time.Second)
		for {
			status, _, _ := srv.call("GET", "/v1/me", old, nil)
			if status == 401 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the running server still accepts the replaced token (%d)", status)
			}
			time.Sleep(20 * time.Millisecond)
		}
		srv.must(t, "GET", "/v1/me", token, nil, 200)
	})
}

// runBounded runs the binary as runBrabo does, but kills it after 20 s: a
// command that should have been refused at once must fail the test, not
// hang it, if it starts serving instead.
func runBounded(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, braboBin, args...)
	cmd.Dir = t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("brabo %q was still running after 20 s: it was not refused\n%s", args, errOut.String())
	}
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// newToken reads the token `brabo admin token` printed, failing unless it
// succeeded.
func newToken(t *testing.T, r result) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("brabo admin token failed:\n%s", r)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if tok := strings.TrimSpace(l); strings.HasPrefix(tok, "brb_") {
			return tok
		}
	}
	t.Fatalf("brabo admin token printed no token:\n%s", r)
	return ""
}

// TestServeClosesIdleConnections: the real server is built with the API's
// bounds (brabohttp.Server.HTTPServer): a connection that sends nothing is
// closed by the header timeout (10 s), not held for good.
func TestServeClosesIdleConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for the 10 s header timeout")
	}
	srv := startServe(t, t.TempDir())
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	c.SetReadDeadline(start.Add(15 * time.Second))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("an idle connection was still open after %s", time.Since(start).Round(time.Second))
	}
	if d := time.Since(start); d < 9*time.Second {
		t.Errorf("an idle connection was closed after %s, before the header timeout (%v)", d, err)
	}
}

// TestServeLimitFlags: the limits are wired from their flags (one pending
// action per agent here), and a value that would turn a limit off, or an
// unreadable environment variable, is refused before anything starts.
func TestServeLimitFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	for _, args := range [][]string{
		{"serve", "--max-pending", "0"},
		{"serve", "--max-running", "-1"},
		{"serve", "--max-streams", "0"},
		{"serve", "--session-ttl", "1s"},
		// brabo agent keeps the pipeline's caps too (the one wiring).
		{"agent", "--max-pending", "0"},
		{"agent", "--max-running", "0"},
	} {
		r := runBounded(t, append(args, "--data", t.TempDir())...)
		if r.code != exitUsage || !strings.Contains(r.stderr, args[1]) {
			t.Errorf("brabo %q: want exit %d naming %s\n%s", args, exitUsage, args[1], r)
		}
	}
	cmd := exec.Command(braboBin, "serve", "--data", t.TempDir())
	cmd.Env = append(os.Environ(), "BRABO_MAX_PENDING=lots")
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(out), `BRABO_MAX_PENDING="lots"`) {
		t.Errorf("BRABO_MAX_PENDING=lots: exit %d\n%s", cmd.ProcessState.ExitCode(), out)
	}

	srv := startServe(t, t.TempDir(), "--max-pending", "1")
	project := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "lim", "mode": "local", "root": t.TempDir()}, 201)["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", srv.token, map[string]any{"name": "coder"}, 201)["token"].(string)
	propose := map[string]any{"type": "terminal", "payload": map[string]any{"command": "touch a"}}
	srv.must(t, "POST", "/v1/projects/"+project+"/actions", agent, propose, 201)
	if out := srv.must(t, "POST", "/v1/projects/"+project+"/actions", agent, propose, 429); out["code"] != "too_many_pending" {
		t.Errorf("the second pending action of an agent under --max-pending 1: %v", out)
	}
}
