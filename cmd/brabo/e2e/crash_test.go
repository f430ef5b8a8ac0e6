package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
	"github.com/brabo-dev/brabo/store/storetest"
)

// server is a running `brabo serve` process.
type server struct {
	cmd   *exec.Cmd
	url   string
	token string // only on the first start
	logs  *logBuffer
	out   []string // what it printed until it listened
}

// logBuffer keeps what a server wrote to its standard error.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// scriptedModel writes script (the scripted provider's JSON) to a file
// and returns the --model value that plays it.
func scriptedModel(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return "scripted:" + path
}

// startServe starts the real binary on dataDir and waits until it listens.
func startServe(t testing.TB, dataDir string, extra ...string) *server {
	t.Helper()
	return startServeEnv(t, dataDir, nil, extra...)
}

// startServeEnv is startServe with more variables in the server's
// environment.
func startServeEnv(t testing.TB, dataDir string, env []string, extra ...string) *server {
	t.Helper()
	return startServeIn(t, "", env, append([]string{"--data", dataDir}, extra...)...)
}

// startServeIn starts `brabo serve args…` in the folder dir ("" for the
// test's own) on a free port, with more variables in its environment, and
// waits until it listens. Its standard output is in s.out.
func startServeIn(t testing.TB, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(braboBin, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)...)
	cmd.Dir = dir
	// A temp folder of the test's: a server the test kills leaves its
	// actions' private temp folders there, not in the machine's /tmp.
	cmd.Env = append(append(os.Environ(), "BRABO_DB=", "TMPDIR="+t.TempDir()), env...)
	return runServeCmd(t, cmd)
}

// runServeCmd starts the `brabo serve` command cmd and waits until it
// listens (startServeIn).
func runServeCmd(t testing.TB, cmd *exec.Cmd) *server {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s := &server{cmd: cmd, logs: logs}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	for s.url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("brabo serve exited before it listened")
			}
			s.out = append(s.out, l)
			if tok := strings.TrimSpace(l); strings.HasPrefix(tok, "brb_") {
				s.token = tok
			}
			if u, ok := strings.CutPrefix(l, "brabo serving on "); ok {
				s.url = u
			}
		case <-deadline:
			t.Fatal("brabo serve did not start in 30 s")
		}
	}
	go func() {
		for range lines {
		}
	}()
	return s
}

// approvePath matches an approve (or approve-always) of one action.
var approvePath = regexp.MustCompile(`^/v1/actions/([^/?]+)/approve(-always)?$`)

// call sends one request. An approve without a body names the revision of
// the card as the caller reads it first (GET /v1/actions/{id}), as a
// human approves the card they saw.
func (s *server) call(method, path, token string, body any) (int, map[string]any, error) {
	if m := approvePath.FindStringSubmatch(path); m != nil && method == "POST" && body == nil {
		if st, a, err := s.bareCall("GET", "/v1/actions/"+m[1], token, nil); err == nil && st == 200 {
			if rev, _ := a["revision"].(string); rev != "" {
				body = map[string]any{"revision": rev}
			}
		}
	}
	return s.bareCall(method, path, token, body)
}

// bareCall is call without the approve's revision.
func (s *server) bareCall(method, path, token string, body any) (int, map[string]any, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, s.url+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out := map[string]any{}
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, nil
}

func (s *server) must(t testing.TB, method, path, token string, body any, want int) map[string]any {
	t.Helper()
	status, out, err := s.call(method, path, token, body)
	if err != nil || status != want {
		t.Fatalf("%s %s: %d %v %v (want %d)", method, path, status, out, err, want)
	}
	return out
}

var markerRE = regexp.MustCompile(`(auto|manual|always|long)-[0-9]+`)

// TestCrashSafety kills `brabo serve` with SIGKILL while it takes
// proposals, approvals and always-allow clicks, restarts it on the same
// SQLite file, and checks the invariants of DESIGN §6: every action has its
// created event; nothing executed twice; no permission.granted without an
// approval; nothing left claimed and unsettled. Each round also runs a
// long command whose descendants escape its process group; after each
// restart no process of a settled action is still running.
//
// It runs on SQLite and, with BRABO_TEST_POSTGRES, on PostgreSQL, whose
// group commit (store/postgres/writer.go) must keep the same guarantees.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts and kills real servers")
	}
	data := t.TempDir()
	crashSafety(t, data, nil, func() brabo.Store {
		st, err := sqlite.Open(context.Background(), filepath.Join(data, "brabo.db"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// TestCrashSafetyPostgres is TestCrashSafety on PostgreSQL: the server
// killed and restarted on one database (a fresh schema of
// BRABO_TEST_POSTGRES); what the dead instance claimed is recovered by
// the next one's start (RecoverDead), as on SQLite.
func TestCrashSafetyPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts and kills real servers")
	}
	db := storetest.PostgresURL(t)
	crashSafety(t, t.TempDir(), []string{"--db", db}, func() brabo.Store {
		st, err := postgres.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// crashSafety is the crash test on the store that args name (SQLite in
// data without), read back at the end with open.
func crashSafety(t *testing.T, data string, args []string, open func() brabo.Store) {
	root := t.TempDir()
	ranLog := filepath.Join(root, "ran.log")
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(echo)", "Terminal(setsid)", "Terminal(sleep)"]}`), 0o644)

	// One temp folder for every start: what a killed server's commands
	// left there, the next start must remove.
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	// Slots for every worker's command and the long one: with the default
	// four, a loaded machine (each sandboxed start costs tens of ms) kept
	// the long command queued past the deadline below.
	// and no pending limit the workers' proposals reach: a 429 for the
	// long command (its answer is not read) would leave it never started.
	args = append(append([]string(nil), args...), "--max-running", "32", "--max-pending", "100000")
	srv := startServeEnv(t, data, env, args...)
	admin := srv.token
	if admin == "" {
		t.Fatal("the first start printed no token")
	}
	p := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "crash", "mode": "local", "root": root}, 201)
	project := p["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "coder"}, 201)["token"].(string)
	lingerer := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "lingerer"}, 201)
	lingerToken, lingerID := lingerer["token"].(string), lingerer["agent"].(map[string]any)["id"].(string)

	var marker atomic.Int64
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					n := marker.Add(1)
					var cmd string
					switch n % 3 {
					case 0: // auto-approved: runs at once
						cmd = fmt.Sprintf("echo auto-%d >> ran.log", n)
					case 1: // pending, then approved by two racing clicks
						cmd = fmt.Sprintf("printf 'manual-%d\\n' >> ran.log", n)
					default: // pending, then always-allowed: the like ones then run at once
						cmd = fmt.Sprintf("tee -a ran.log <<< always-%d", n)
					}
					status, a, err := srv.call("POST", "/v1/projects/"+project+"/actions", agent,
						map[string]any{"type": "terminal", "payload": map[string]any{"command": cmd}})
					if err != nil || status != 201 || a["status"] != "pending" {
						continue
					}
					id := a["id"].(string)
					if n%3 == 1 {
						go srv.call("POST", "/v1/actions/"+id+"/approve", admin, nil)
						srv.call("POST", "/v1/actions/"+id+"/approve", admin, nil)
					} else {
						srv.call("POST", "/v1/actions/"+id+"/approve-always", admin, nil)
					}
				}
			}(w)
		}
		// A long command, auto-approved, whose descendants leave its
		// group: it runs when the server is killed.
		long := fmt.Sprintf("long-%d", marker.Add(1))
		longAnswer := make(chan string, 1)
		go func() {
			status, a, err := srv.call("POST", "/v1/projects/"+project+"/actions", lingerToken, map[string]any{"type": "terminal",
				"payload": map[string]any{"command": "echo " + long + " >> ran.log; setsid sleep 300 & (sleep 300 &); sleep 300"}})
			longAnswer <- fmt.Sprintf("%d %v %v", status, a, err)
		}()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if b, _ := os.ReadFile(ranLog); strings.Contains(string(b), long+"\n") {
				break
			}
			if time.Now().After(deadline) {
				answer := "(no answer yet)"
				select {
				case answer = <-longAnswer:
				default:
				}
				t.Fatalf("round %d: the long command did not start; its proposal answered %s; the server's log:\n%s", round, answer, srv.logs)
			}
		}
		time.Sleep(time.Duration(150+100*round) * time.Millisecond)
		srv.cmd.Process.Signal(syscall.SIGKILL)
		srv.cmd.Wait()
		close(stop)
		wg.Wait()
		if sandbox.Available() == nil {
			// Sandboxed, the command's temp folder is its own tmpfs, and
			// bubblewrap (--die-with-parent) ends it with the server: a
			// kill -9 leaves neither a folder nor a process.
			if left := actionTemps(t, tmp); len(left) != 0 {
				t.Fatalf("round %d: a sandboxed command left host temp folders: %v", round, left)
			}
		} else if n := len(actionTemps(t, tmp)); n == 0 {
			t.Fatalf("round %d: the killed server left no temp folder, though its long command ran", round)
		}
		srv = startServeEnv(t, data, env, args...) // Recover runs at start-up
		// No command of a settled action is still running: the restart
		// stopped what the killed server left.
		list := srv.must(t, "GET", "/v1/projects/"+project+"/actions?actor="+lingerID+"&limit=1000", admin, nil, 200)
		actions, _ := list["actions"].([]any)
		if len(actions) != round+1 {
			t.Fatalf("round %d: %d long actions recorded, want %d", round, len(actions), round+1)
		}
		for _, a := range actions {
			a := a.(map[string]any)
			if st := a["status"]; st != "executed" && st != "failed" {
				t.Errorf("round %d: the long action %s is %v after the restart", round, a["id"], st)
			}
			noneLeft(t, a["id"].(string), fmt.Sprintf("round %d, after the restart", round))
		}
		// Nothing runs now, so every action temp folder is a dead one's.
		if left := actionTemps(t, tmp); len(left) != 0 {
			t.Errorf("round %d: the restart left the killed server's temp folders: %v", round, left)
		}
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()

	ctx := context.Background()
	st := open()
	defer st.Close()
	var actions []*brabo.ProposedAction
	var events []brabo.Event
	err := st.View(ctx, func(tx brabo.Tx) error {
		for _, s := range []brabo.ActionStatus{brabo.StatusPending, brabo.StatusAutoApproved, brabo.StatusApproved,
			brabo.StatusDenied, brabo.StatusExecuted, brabo.StatusFailed} {
			// Page by page: a fast machine runs well over a thousand in
			// the rounds' time.
			for f := (brabo.ActionFilter{Status: s, Limit: 1000}); ; f.Offset += f.Limit {
				list, err := tx.Actions(ctx, f)
				if err != nil {
					return err
				}
				actions = append(actions, list...)
				if len(list) < f.Limit {
					break
				}
			}
		}
		for after := int64(0); ; {
			page, err := tx.Events(ctx, project, after, 1000)
			if err != nil || len(page) == 0 {
				return err
			}
			events = append(events, page...)
			after = page[len(page)-1].Seq
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) < 10 {
		t.Fatalf("only %d actions were taken before the kills: the test proves little", len(actions))
	}
	count := map[string]map[string]int{}
	for _, e := range events {
		if count[e.ActionID] == nil {
			count[e.ActionID] = map[string]int{}
		}
		count[e.ActionID][e.Type]++
	}
	for _, a := range actions {
		c := count[a.ID]
		if c[brabo.EventActionCreated] != 1 {
			t.Errorf("action %s has %d created events", a.ID, c[brabo.EventActionCreated])
		}
		if c[brabo.EventActionExecuted]+c[brabo.EventActionFailed] > 1 {
			t.Errorf("action %s settled %d times", a.ID, c[brabo.EventActionExecuted]+c[brabo.EventActionFailed])
		}
		if c[brabo.EventActionApproved] > 1 {
			t.Errorf("action %s approved %d times", a.ID, c[brabo.EventActionApproved])
		}
		if c[brabo.EventPermissionGranted] > 0 && c[brabo.EventActionApproved] == 0 {
			t.Errorf("action %s: permission.granted without an approval", a.ID)
		}
		if a.Status == brabo.StatusApproved || a.Status == brabo.StatusAutoApproved {
			t.Errorf("action %s left %s after the restart", a.ID, a.Status)
		}
	}
	// The file the commands wrote is the ground truth of execution: no
	// marker twice, and none from an action that never got approved.
	status := map[string]brabo.ActionStatus{}
	for _, a := range actions {
		status[markerRE.FindString(a.Payload.Command)] = a.Status
	}
	ran, _ := os.ReadFile(ranLog)
	seen := map[string]bool{}
	for _, line := range strings.Fields(string(ran)) {
		if seen[line] {
			t.Errorf("%s ran twice", line)
		}
		seen[line] = true
		switch status[line] {
		case brabo.StatusExecuted, brabo.StatusFailed:
		default:
			t.Errorf("%s ran, but its action is %q", line, status[line])
		}
	}
	kinds := map[string]int{}
	for m := range seen {
		kinds[m[:strings.IndexByte(m, '-')]]++
	}
	if kinds["auto"] == 0 || kinds["manual"] == 0 || kinds["always"] == 0 {
		t.Fatalf("ran %v: every path (auto, manual, always) must have run for the test to prove anything", kinds)
	}
	t.Logf("%d actions, %d events, commands ran %v across 3 SIGKILLs", len(actions), len(events), kinds)
}

// actionTemps are the actions' private temp folders in tmp.
func actionTemps(t *testing.T, tmp string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(tmp, "brabo-action-*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}
