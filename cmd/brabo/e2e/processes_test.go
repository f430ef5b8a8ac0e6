package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/procs"
	"github.com/jackc/pgx/v5"
)

// lingering is a command whose descendants escape its process group
// (setsid) and its parent (a double fork), then waits: a command that
// would outlive its action. It writes started.txt once all are running.
const lingering = `setsid sh -c 'sleep 300' & (sleep 300 &); echo started > started.txt; sleep 300`

// actionProcs counts the live processes carrying the action's id, as
// brabo's own scan finds them.
func actionProcs(t *testing.T, actionID string) int {
	t.Helper()
	list, err := procs.Find(procs.Target{ActionID: actionID})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// noneLeft waits up to 10 s for the action's processes to be gone, and
// kills them (so the test leaks nothing) before it fails.
func noneLeft(t *testing.T, actionID, when string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); actionProcs(t, actionID) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			n := actionProcs(t, actionID)
			procs.Stop(context.Background(), procs.Target{ActionID: actionID}, 0)
			t.Fatalf("%s: %d processes of action %s are still running", when, n, actionID)
		}
	}
}

// approveAsync approves the action in the background, with no client
// deadline shorter than the command, and sends the answer (status code
// and body, or the error) on the channel.
func approveAsync(s *server, actionID, token string) <-chan string {
	ch := make(chan string, 1)
	go func() {
		// The approve names the card's revision, read first.
		var body io.Reader
		if st, a, err := s.bareCall("GET", "/v1/actions/"+actionID, token, nil); err == nil && st == 200 {
			b, _ := json.Marshal(map[string]any{"revision": a["revision"]})
			body = bytes.NewReader(b)
		}
		req, _ := http.NewRequest("POST", s.url+"/v1/actions/"+actionID+"/approve", body)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
		if err != nil {
			ch <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		ch <- fmt.Sprintf("%d %s", resp.StatusCode, b.String())
	}()
	return ch
}

// lingeringAction proposes the lingering command in a fresh local project
// of s, approves it in the background, and returns once its processes run:
// the action's id, the approval's answer and the project folder.
func lingeringAction(t *testing.T, s *server, admin string) (string, <-chan string, string) {
	return lingeringCommand(t, s, admin, lingering)
}

// lingeringCommand is lingeringAction with another command, which must
// also start the lingering one's processes and write started.txt.
func lingeringCommand(t *testing.T, s *server, admin, command string) (string, <-chan string, string) {
	t.Helper()
	root := t.TempDir()
	p := s.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": fmt.Sprintf("p%d", time.Now().UnixNano()), "mode": "local", "root": root}, 201)
	project := p["id"].(string)
	agent := s.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "coder"}, 201)["token"].(string)
	a := s.must(t, "POST", "/v1/projects/"+project+"/actions", agent,
		map[string]any{"type": "terminal", "payload": map[string]any{"command": command, "timeoutSec": 600}}, 201)
	if a["status"] != "pending" {
		t.Fatalf("the lingering command was %v, want pending", a["status"])
	}
	id := a["id"].(string)
	t.Cleanup(func() { procs.Stop(context.Background(), procs.Target{ActionID: id}, 0) })
	answer := approveAsync(s, id, admin)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(root, "started.txt")); string(b) == "started\n" && actionProcs(t, id) >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start: %d processes; server log:\n%s", actionProcs(t, id), s.logs)
		}
	}
	return id, answer, root
}

// The two tests below hold the host's process tracker, what stops a
// command's processes where no sandbox does (brabo serve --no-sandbox):
// in the sandbox they end with its PID namespace (cmd/brabo/sandbox_test.go
// attacks that with setsid and env -i children).

// TestSIGTERMStopsARunningCommandAndAnswersItsApprover: a graceful stop
// mid-command signals every process of the command (the setsid and
// double-forked descendants included), settles the action failed with the
// reason, answers the approval with it, and exits 0.
func TestSIGTERMStopsARunningCommandAndAnswersItsApprover(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	data := t.TempDir()
	srv := startServe(t, data, "--no-sandbox")
	admin := srv.token
	// One descendant also sheds BRABO_ACTION_ID and its group: only the
	// subreaper knows it is brabo's.
	id, answer, root := lingeringCommand(t, srv, admin,
		`env -i setsid sh -c 'echo $$ > hidden.pid; exec sleep 300' & while [ ! -s hidden.pid ]; do sleep 0.01; done; `+lingering)
	hidden, _ := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(root, "hidden.pid"))))
	t.Cleanup(func() { syscall.Kill(hidden, syscall.SIGKILL) })

	srv.cmd.Process.Signal(syscall.SIGTERM)
	var got string
	select {
	case got = <-answer:
	case <-time.After(30 * time.Second):
		t.Fatal("the approver got no answer within 30 s of SIGTERM")
	}
	if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"status":"failed"`) ||
		!strings.Contains(got, "interrupted: brabo was stopped") {
		t.Errorf("the approval's answer: %s", got)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Errorf("brabo serve exited with %v after SIGTERM; log:\n%s", err, srv.logs)
	}
	noneLeft(t, id, "after SIGTERM")
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(hidden, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if st, err := procs.ReadStat(hidden); err == nil && st.Gone() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the descendant that shed its action's id (pid %d) outlived the server", hidden)
		}
	}

	srv = startServe(t, data, "--no-sandbox")
	a := srv.must(t, "GET", "/v1/actions/"+id, admin, nil, 200)
	res, _ := a["result"].(map[string]any)
	if a["status"] != "failed" || res == nil || !strings.Contains(fmt.Sprint(res["error"]), "brabo was stopped") {
		t.Errorf("after the restart the action is %v: %v", a["status"], res)
	}
}

// TestSIGKILLThenRestartStopsWhatTheCommandLeft: after kill -9 of the
// server mid-command, the command's processes run on (nobody is left to
// stop them); the next start finds them by the action's record and its
// BRABO_ACTION_ID, stops them, and fails the action with the reason.
func TestSIGKILLThenRestartStopsWhatTheCommandLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	data := t.TempDir()
	srv := startServe(t, data, "--no-sandbox")
	admin := srv.token
	id, answer, _ := lingeringAction(t, srv, admin)

	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()
	<-answer // the connection dropped with the process
	if n := actionProcs(t, id); n < 3 {
		t.Fatalf("after kill -9 only %d processes of the command run: the test proves nothing", n)
	}

	srv = startServe(t, data, "--no-sandbox")
	noneLeft(t, id, "after the restart")
	a := srv.must(t, "GET", "/v1/actions/"+id, admin, nil, 200)
	res, _ := a["result"].(map[string]any)
	if a["status"] != "failed" || res == nil || !strings.Contains(fmt.Sprint(res["error"]), "died while this action ran") {
		t.Errorf("after the restart the action is %v: %v", a["status"], res)
	}
}

// TestAnotherLiveInstancesCommandIsLeftAlone: on one PostgreSQL database,
// a server starting (which recovers what dead instances left) does not
// touch the command another live server runs; once that server is killed,
// the next start on this host stops its command and fails the action.
func TestAnotherLiveInstancesCommandIsLeftAlone(t *testing.T) {
	base := os.Getenv("BRABO_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("BRABO_TEST_POSTGRES is not set, and CI is: .ci/run sets it")
		}
		t.Skip("BRABO_TEST_POSTGRES is not set; .ci/run sets it, and under CI this fails")
	}
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("procs_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); conn.Close(ctx) })
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db := u.String()

	a := startServe(t, t.TempDir(), "--db", db)
	admin := a.token
	id, answer, _ := lingeringAction(t, a, admin)
	b := startServe(t, t.TempDir(), "--db", db)
	time.Sleep(200 * time.Millisecond)
	if n := actionProcs(t, id); n < 4 {
		t.Fatalf("a second server's start touched the first one's command: %d processes left", n)
	}
	if act := b.must(t, "GET", "/v1/actions/"+id, admin, nil, 200); act["status"] != "approved" {
		t.Fatalf("a second server's start settled the first one's running action: %v", act["status"])
	}

	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cmd.Wait()
	<-answer
	c := startServe(t, t.TempDir(), "--db", db)
	noneLeft(t, id, "after a third server started")
	act := c.must(t, "GET", "/v1/actions/"+id, admin, nil, 200)
	if res, _ := act["result"].(map[string]any); act["status"] != "failed" || !strings.Contains(fmt.Sprint(res["error"]), "died while this action ran") {
		t.Errorf("the dead server's action is %v: %v", act["status"], res)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
