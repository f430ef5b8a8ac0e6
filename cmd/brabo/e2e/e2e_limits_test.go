package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proposeRaw proposes as token without failing the test from a goroutine:
// it returns the status and the answer's code and status fields.
func (e *env) proposeRaw(token string, payload map[string]any) (int, map[string]any, error) {
	body, _ := json.Marshal(map[string]any{"type": "terminal", "payload": payload})
	req, _ := http.NewRequest("POST", e.srv.URL+e.pp("/actions"), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out := map[string]any{}
	err = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, err
}

func TestAnAgentsPendingActionsAreCapped(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.svc.MaxPending = 3
		e.setPermissions(`{"allow": ["Terminal(echo)"]}`)
		var first string
		for i := 0; i < 3; i++ {
			a := e.terminal(fmt.Sprintf("touch f%d", i))
			if a["status"] != "pending" {
				t.Fatalf("proposal %d: %v", i, a["status"])
			}
			if first == "" {
				first = a["id"].(string)
			}
		}
		before := e.written()
		out := e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "terminal", "payload": map[string]any{"command": "touch f3"}}, 429, "too_many_pending")
		if msg := out["message"].(string); !strings.Contains(msg, "3 pending actions") || !strings.Contains(msg, "(3, brabo serve --max-pending)") {
			t.Errorf("the refusal does not name the limit: %q", msg)
		}
		e.unchanged(before, "a proposal past the pending limit")
		// What would not wait is not counted: an allowed command runs.
		if a := e.terminal("echo still"); a["status"] != "executed" {
			t.Errorf("an auto-approved proposal at the limit: %v", a["status"])
		}
		// Other agents and humans have their own room.
		other, _ := e.newAgent(e.admin, "other")
		e.propose(other, "terminal", map[string]any{"command": "touch g"})
		e.propose(e.maintainer, "terminal", map[string]any{"command": "touch h"})
		// A decision makes room again.
		e.ok("POST", "/v1/actions/"+first+"/deny", e.maintainer, map[string]any{"reason": "no"}, 200)
		if a := e.terminal("touch f4"); a["status"] != "pending" {
			t.Errorf("after a denial: %v", a["status"])
		}

		// Concurrent proposals cannot slip under the limit together.
		flood, floodID := e.newAgent(e.admin, "flood")
		var wg sync.WaitGroup
		statuses := make(chan int, 20)
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				st, _, err := e.proposeRaw(flood, map[string]any{"command": fmt.Sprintf("touch x%d", i)})
				if err != nil {
					t.Error(err)
				}
				statuses <- st
			}(i)
		}
		wg.Wait()
		close(statuses)
		counts := map[int]int{}
		for st := range statuses {
			counts[st]++
		}
		queued := e.ok("GET", e.pp("/actions")+"?status=pending&actor="+floodID, e.admin, nil, 200)["actions"].([]any)
		if counts[201] != 3 || counts[429] != 17 || len(queued) != 3 {
			t.Errorf("20 concurrent proposals under a limit of 3: statuses %v, %d pending", counts, len(queued))
		}
	})
}

// TestAProjectsCommandsWaitTheirTurn: with MaxRunning 2, five commands
// proposed at once all run (none is refused), never more than two at a
// time; another project's command and a file write do not wait. Each
// command holds its slot until the test opens the project's gate (a
// FIFO it reads), so the test sees the slots full (two starts in
// runs.log) before it proposes what must not wait, and that one answers
// while the two still hold them.
func TestAProjectsCommandsWaitTheirTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs commands for seconds")
	}
	eachStore(t, func(t *testing.T, e *env) {
		e.svc.MaxRunning = 2
		e.setPermissions(`{"allow": ["Terminal(echo)", "Terminal(cat)", "Terminal(date)"]}`)
		e.ok("PUT", e.pp("/agents/"+e.agentID+"/autonomy"), e.maintainer, map[string]any{"actionType": "write_file", "mode": "auto_approve"}, 200)
		blog := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "blog", "mode": "local", "root": t.TempDir()}, 201)["id"].(string)
		e.ok("PUT", "/v1/projects/"+blog+"/permissions", e.admin, `{"allow": ["Terminal(echo)"]}`, 200)
		blogAgent := e.ok("POST", "/v1/projects/"+blog+"/agents", e.admin, map[string]any{"name": "blogger"}, 201)["token"].(string)
		gate, runs := filepath.Join(e.root, "gate"), filepath.Join(e.root, "runs.log")
		if err := syscall.Mkfifo(gate, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := `date +s%s%N >> runs.log && cat gate && date +e%s%N >> runs.log`
		var wg sync.WaitGroup
		// A test that fails early opens the gate until every command ended,
		// so that nothing is left holding a slot or the server.
		t.Cleanup(func() {
			ended := make(chan struct{})
			go func() { wg.Wait(); close(ended) }()
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
				select {
				case <-ended:
					return
				case <-time.After(10 * time.Millisecond):
				}
				if f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
		})
		results := make(chan string, 5)
		for i := 0; i < 5; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, out, err := e.proposeRaw(e.agent, map[string]any{"command": cmd})
				results <- fmt.Sprint(st, " ", out["status"], " ", err)
			}()
		}
		waitMarks(t, runs, "s", 2)
		// The project's two slots are taken: a file write runs at once.
		wrote := within(t, "a file write while the commands' slots are full", func() map[string]any {
			_, out := e.call("POST", e.pp("/actions"), e.agent, map[string]any{"type": "write_file", "payload": map[string]any{"path": "note.txt", "content": "hi"}})
			return out
		})
		if wrote["status"] != "executed" {
			t.Errorf("a file write while the commands' slots are full: %v", wrote)
		}
		// Another project's commands do not wait behind this one's.
		other := within(t, "another project's command while this one's slots are full", func() map[string]any {
			_, out := e.call("POST", "/v1/projects/"+blog+"/actions", blogAgent, map[string]any{"type": "terminal", "payload": map[string]any{"command": "echo elsewhere"}})
			return out
		})
		if other["status"] != "executed" {
			t.Errorf("another project's command while this one's slots are full: %v", other)
		}
		if n := countMarks(t, runs, "e"); n != 0 {
			t.Fatalf("%d commands ended before the gate opened", n)
		}
		// Open the gate until all five ended; the log says how many ran at once.
		releaseUntil(t, gate, runs, 5)
		wg.Wait()
		close(results)
		for r := range results {
			if r != "201 executed <nil>" {
				t.Errorf("a queued command: %s", r)
			}
		}
		if max := maxOverlap(t, runs); max != 2 {
			t.Errorf("at most %d commands ran at once, want 2", max)
		}
	})
}

// within runs fn and returns what it returns; the bound only ends a test
// that would otherwise hang on a call that waits when it must not.
func within(t *testing.T, what string, fn func() map[string]any) map[string]any {
	t.Helper()
	done := make(chan map[string]any, 1)
	go func() { done <- fn() }()
	select {
	case out := <-done:
		return out
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer (it waits for a slot)", what)
		return nil
	}
}

// releaseUntil opens the FIFO at gate for writing, again and again,
// until runs.log holds n ends: each opening releases the commands blocked
// reading it then (they read end of file), and one not reading yet waits
// for the next. The bound only ends a hung test.
func releaseUntil(t *testing.T, gate, runs string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for countMarks(t, runs, "e") < n {
		if time.Now().After(deadline) {
			t.Fatalf("runs.log never held %d ends (it holds %d)", n, countMarks(t, runs, "e"))
		}
		// no reader: ENXIO, and nothing to release yet
		if f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countMarks counts the lines of runs.log that start with kind ("s" a
// command's start, "e" its end).
func countMarks(t *testing.T, path, kind string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, kind) {
			n++
		}
	}
	return n
}

// waitMarks waits until runs.log holds at least n marks of kind, reading
// the file as the commands write it; the bound only ends a hung test.
func waitMarks(t *testing.T, path, kind string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for countMarks(t, path, kind) < n {
		if time.Now().After(deadline) {
			t.Fatalf("runs.log never held %d %q marks (it holds %d)", n, kind, countMarks(t, path, kind))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// maxOverlap reads "s<ns>" and "e<ns>" lines (a command's start and end)
// and returns how many commands ran at once at most.
func maxOverlap(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type mark struct {
		at    int64
		delta int
	}
	var marks []mark
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		kind, ns := l[:1], l[1:]
		n, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			t.Fatalf("runs.log line %q", l)
		}
		marks = append(marks, mark{n, map[string]int{"s": 1, "e": -1}[kind]})
	}
	if len(marks) != 10 {
		t.Fatalf("runs.log has %d marks, want 10:\n%s", len(marks), raw)
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i].at < marks[j].at })
	open, max := 0, 0
	for _, m := range marks {
		open += m.delta
		max = maxInt(max, open)
	}
	return max
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

var pagerRE = regexp.MustCompile(`(\d+)–(\d+) of (\d+), risky first, then newest first`)

// TestTheQueuePagesWithTheTrueCount: 230 pending actions show as pages of
// 100 whose title and count say 230, not as a silent cut; the API pages
// the same way with its total.
func TestTheQueuePagesWithTheTrueCount(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.svc.MaxPending = 1000
		const n = 230
		for i := 0; i < n; i++ {
			if st, out, err := e.proposeRaw(e.agent, map[string]any{"command": fmt.Sprintf("touch q%03d", i)}); st != 201 || err != nil {
				t.Fatalf("proposal %d: %d %v %v", i, st, out, err)
			}
		}
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		for _, tc := range []struct {
			page        string
			cards       int
			from, to    string
			first, last string // the commands of the first and last card
			prev, next  string
		}{
			{"", 100, "1", "100", "touch q229", "touch q130", "", "2"},
			{"?page=2", 100, "101", "200", "touch q129", "touch q030", "1", "3"},
			{"?page=3", 30, "201", "230", "touch q029", "touch q000", "2", ""},
		} {
			resp, page := w.do("GET", "/"+tc.page, nil, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("page %q: %d", tc.page, resp.StatusCode)
			}
			if !strings.Contains(page, "<title>(230) brabo — approval queue</title>") || !strings.Contains(page, `id="queue-count" aria-label="pending actions">230<`) {
				t.Errorf("page %q does not show the true count 230", tc.page)
			}
			cards := regexp.MustCompile(`<pre class="subject"><code>([^<]*)</code>`).FindAllStringSubmatch(page, -1)
			if len(cards) != tc.cards || cards[0][1] != tc.first || cards[len(cards)-1][1] != tc.last {
				t.Errorf("page %q: %d cards from %q to %q, want %d from %q to %q", tc.page, len(cards), first(cards), last(cards), tc.cards, tc.first, tc.last)
			}
			if m := pagerRE.FindStringSubmatch(page); m == nil || m[1] != tc.from || m[2] != tc.to || m[3] != "230" {
				t.Errorf("page %q: pager %v, want %s–%s of 230", tc.page, m, tc.from, tc.to)
			}
			for rel, want := range map[string]string{"prev": tc.prev, "next": tc.next} {
				has := regexp.MustCompile(`href="/\?page=(\d+)" rel="` + rel + `"`).FindStringSubmatch(page)
				if (want == "") != (has == nil) || (has != nil && has[1] != want) {
					t.Errorf("page %q: %s link %v, want %q", tc.page, rel, has, want)
				}
			}
		}
		// The fragment the live page merges carries the count too.
		resp, frag := w.do("GET", "/ui/queue?page=3", nil, nil)
		if resp.Header.Get("X-Queue-Total") != "230" || strings.Count(frag, `<article class="card `) != 30 {
			t.Errorf("the fragment of page 3: total %q, %d cards", resp.Header.Get("X-Queue-Total"), strings.Count(frag, `<article class="card `))
		}
		if resp, _ := w.do("GET", "/?page=zero", nil, nil); resp.StatusCode != 400 {
			t.Errorf("a bad page number: %d", resp.StatusCode)
		}
		// The API: a page and the total.
		out := e.ok("GET", "/v1/queue?limit=100&offset=200", e.maintainer, nil, 200)
		if got := len(out["actions"].([]any)); got != 30 || out["total"] != float64(230) {
			t.Errorf("GET /v1/queue?offset=200: %d actions, total %v", got, out["total"])
		}
		e.refused("GET", "/v1/queue?offset=-1", e.maintainer, nil, 400, "invalid_action")
	})
}

func first(m [][]string) string {
	if len(m) == 0 {
		return ""
	}
	return m[0][1]
}

func last(m [][]string) string {
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}
