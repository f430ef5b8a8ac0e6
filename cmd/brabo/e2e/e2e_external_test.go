package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/postgres"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// External execution: a hook agent proposes what its agent
// runs itself; brabo decides, records and queues it, never runs it; the
// agent waits for the decision and reports the result, once.
func TestExternalExecution(t *testing.T) {
	eachWatchedStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"], "deny": ["Terminal(curl)"]}`)
		hook := e.ok("POST", e.pp("/agents"), e.maintainer, map[string]any{"name": "claude", "kind": "hook"}, 201)
		token := hook["token"].(string)
		hookID := str(hook, "agent", "id")
		if str(hook, "agent", "kind") != "hook" {
			t.Fatalf("hook agent: %v", hook)
		}
		external := func(command, tool string) map[string]any {
			return e.ok("POST", e.pp("/actions"), token, map[string]any{"type": "terminal",
				"payload":   map[string]any{"command": command},
				"execution": map[string]any{"mode": "external", "runner": "claude-code", "sessionId": "sess-1", "turnId": "turn-1", "toolUseId": tool}}, 201)
		}

		// Auto-approved: decided, not run; the agent reports.
		echo := external("echo hello", "toolu_2")
		if echo["status"] != "auto_approved" || echo["result"] != nil || str(echo, "execution", "toolUseId") != "toolu_2" {
			t.Fatalf("auto-approved external: %v", echo)
		}
		id := echo["id"].(string)
		if got := e.eventsOf(id, brabo.EventActionExecuted); len(got) != 0 {
			t.Fatal("brabo ran an external action")
		}
		created := payloadOf(e.eventsOf(id, brabo.EventActionCreated)[0])
		if created["execution"] == nil {
			t.Errorf("created event without the execution: %v", created)
		}
		got := e.ok("GET", "/v1/actions/"+id+"/wait?timeout=5", token, nil, 200)
		if got["status"] != "auto_approved" {
			t.Fatalf("wait on a decided action: %v", got)
		}
		rep := e.ok("POST", "/v1/actions/"+id+"/result", token, map[string]any{"exitCode": 0, "output": "hello\n"}, 200)
		if rep["status"] != "executed" || str(rep, "result", "output") != "hello\n" || str(rep, "result", "detail", "executedBy") != "agent:"+hookID {
			t.Fatalf("report: %v", rep)
		}
		ev := e.eventsOf(id, brabo.EventActionExecuted)
		if len(ev) != 1 || ev[0].ActorID != hookID || payloadOf(ev[0])["by"] != "agent" {
			t.Fatalf("action.executed by the agent: %v", ev)
		}
		e.refused("POST", "/v1/actions/"+id+"/result", token, map[string]any{"exitCode": 0}, 409, "already_reported")

		// Pending: the wait runs out with the action pending, then a human
		// approves and the wait answers at once, without running it.
		pending := external("touch made.txt", "toolu_3")
		pid := pending["id"].(string)
		if pending["status"] != "pending" {
			t.Fatalf("pending external: %v", pending)
		}
		e.refused("POST", "/v1/actions/"+pid+"/result", token, map[string]any{"exitCode": 0}, 409, "not_decided")
		start := time.Now()
		if got := e.ok("GET", "/v1/actions/"+pid+"/wait?timeout=1500ms", token, nil, 200); got["status"] != "pending" || time.Since(start) < time.Second {
			t.Fatalf("wait that runs out: %v after %s", got, time.Since(start))
		}
		// The approval comes once the wait is seen subscribed to the
		// project's signal, so the wait is in flight when it lands.
		done := make(chan map[string]any, 1)
		watch := e.store.(subscribeWatcher).watch()
		go func() {
			_, out := e.call("GET", "/v1/actions/"+pid+"/wait?timeout=30", token, nil)
			done <- out
		}()
		select {
		case <-watch:
		case out := <-done:
			t.Fatalf("the wait answered before the approval: %v", out)
		case <-time.After(10 * time.Second):
			t.Fatal("the wait never subscribed to the project's signal")
		}
		ap := e.ok("POST", "/v1/actions/"+pid+"/approve", e.developer, nil, 200)
		if str(ap, "action", "status") != "approved" {
			t.Fatalf("approval of an external action: %v", ap)
		}
		select {
		case out := <-done:
			if out["status"] != "approved" {
				t.Fatalf("wait woke with %v", out)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the wait did not wake on the approval")
		}
		if _, err := os.Stat(filepath.Join(e.root, "made.txt")); err == nil {
			t.Fatal("brabo ran an approved external action")
		}
		if got := e.ok("GET", "/v1/actions/"+pid, e.admin, nil, 200); got["status"] != "approved" || got["execution"] == nil {
			t.Fatalf("decided, unreported: %v", got)
		}
		failed := e.ok("POST", "/v1/actions/"+pid+"/result", token, map[string]any{"exitCode": 1, "error": "the tool was interrupted"}, 200)
		if failed["status"] != "failed" || len(e.eventsOf(pid, brabo.EventActionFailed)) != 1 {
			t.Fatalf("failed report: %v", failed)
		}

		// Denied: the reason is what the hook reads; no report.
		denied := external("curl https://example.com", "toolu_4")
		if denied["status"] != "denied" || denied["reason"] != "permissions.json deny: Terminal(curl)" {
			t.Fatalf("denied external: %v", denied)
		}
		e.refused("POST", "/v1/actions/"+denied["id"].(string)+"/result", token, map[string]any{"exitCode": 0}, 409, "action_already_denied")

		// What a hook token may not do.
		e.refused("POST", e.pp("/actions"), token, map[string]any{"type": "terminal", "payload": map[string]any{"command": "echo x"}}, 403, "forbidden_role")
		e.refused("GET", "/v1/actions/"+id, token, nil, 403, "forbidden_role")
		e.refused("GET", e.pp("/actions"), token, nil, 403, "forbidden_role")
		e.refused("POST", "/v1/actions/"+pid+"/approve", token, nil, 403, "forbidden_role")
		e.refused("GET", e.pp("/events"), token, nil, 403, "forbidden_role")
		// Another agent's actions are not the hook's to wait on or report.
		other := e.terminal("touch other.txt")
		e.refused("GET", "/v1/actions/"+other["id"].(string)+"/wait?timeout=0", token, nil, 404, "not_found")
		e.refused("POST", "/v1/actions/"+other["id"].(string)+"/result", token, map[string]any{"exitCode": 0}, 404, "not_found")
		// A member cannot report, and brabo's own actions take no report.
		e.refused("POST", "/v1/actions/"+pid+"/result", e.admin, map[string]any{"exitCode": 0}, 403, "forbidden_role")
		own := e.terminal("echo own")
		e.refused("POST", "/v1/actions/"+own["id"].(string)+"/result", e.agent, map[string]any{"exitCode": 0}, 400, "invalid_action")
		e.refused("GET", "/v1/actions/"+pid+"/wait?timeout=61", token, nil, 400, "invalid_action")
		// A hook agent cannot take the name of brabo's own agents.
		e.refused("POST", e.pp("/agents"), e.maintainer, map[string]any{"name": "dev-web", "kind": "hook"}, 400, "invalid_action")
	})
}

// read_file and mcp_tool are decided only: proposed external, never run by
// brabo; an unmapped MCP tool needs a maintainer to approve it.
func TestDecideOnlyTypes(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		hook := e.ok("POST", e.pp("/agents"), e.admin, map[string]any{"name": "codex", "kind": "hook"}, 201)
		token := hook["token"].(string)
		ext := map[string]any{"mode": "external", "runner": "codex"}
		e.refused("POST", e.pp("/actions"), e.agent, map[string]any{"type": "read_file", "payload": map[string]any{"path": "/etc/hosts"}}, 400, "invalid_action")
		read := e.ok("POST", e.pp("/actions"), token, map[string]any{"type": "read_file", "payload": map[string]any{"path": "/etc/hosts"}, "execution": ext}, 201)
		if read["status"] != "pending" || !strings.HasPrefix(read["reason"].(string), "default") {
			t.Fatalf("a read outside: %v", read)
		}
		inside := e.ok("POST", e.pp("/actions"), token, map[string]any{"type": "read_file", "payload": map[string]any{"path": "src/notes.txt"}, "execution": ext}, 201)
		if inside["status"] != "auto_approved" {
			t.Fatalf("a read inside: %v", inside)
		}
		mcp := func() map[string]any {
			return e.ok("POST", e.pp("/actions"), token, map[string]any{"type": "mcp_tool",
				"payload": map[string]any{"tool": "github__create_issue", "extra": map[string]any{"title": "x"}}, "execution": ext}, 201)
		}
		a := mcp()
		if str(a, "decision", "requiredRole") != "maintainer" {
			t.Fatalf("unmapped tool: %v", a)
		}
		e.refused("POST", "/v1/actions/"+a["id"].(string)+"/approve", e.developer, nil, 403, "forbidden_role")
		e.refused("PUT", e.pp("/mcp-tools"), e.developer, map[string]any{"tools": []string{"github__*"}}, 403, "forbidden_role")
		e.refused("PUT", e.pp("/mcp-tools"), e.maintainer, map[string]any{"tools": []string{"github"}}, 400, "invalid_action")
		p := e.ok("PUT", e.pp("/mcp-tools"), e.maintainer, map[string]any{"tools": []string{"github__*"}}, 200)
		if tools, _ := p["mcpTools"].([]any); len(tools) != 1 {
			t.Fatalf("mapped: %v", p)
		}
		b := mcp()
		if str(b, "decision", "requiredRole") != "developer" {
			t.Fatalf("mapped tool: %v", b)
		}
		e.ok("POST", "/v1/actions/"+b["id"].(string)+"/approve", e.developer, nil, 200)
		e.refused("POST", e.pp("/actions"), token, map[string]any{"type": "mcp_tool", "payload": map[string]any{"tool": "nope"}, "execution": ext}, 400, "invalid_action")
		var n int
		e.store.View(context.Background(), func(tx brabo.Tx) error {
			evs, _ := tx.Events(context.Background(), e.project, 0, 1000)
			for _, ev := range evs {
				if ev.Type == brabo.EventProjectMcpTools {
					n++
				}
			}
			return nil
		})
		if n != 1 {
			t.Errorf("%d project.mcp_tools_changed events", n)
		}
	})
}

// The card of an action its agent runs itself says who runs it, and once
// approved, that its result was not reported.
func TestWebCardOfAnExternalAction(t *testing.T) {
	s, err := sqlite.Open(t.Context(), t.TempDir()+"/brabo.db")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	hook := e.ok("POST", e.pp("/agents"), e.maintainer, map[string]any{"name": "claude", "kind": "hook"}, 201)
	a := e.ok("POST", e.pp("/actions"), hook["token"].(string), map[string]any{"type": "terminal",
		"payload":   map[string]any{"command": "touch web-ext.txt"},
		"execution": map[string]any{"mode": "external", "runner": "claude-code", "sessionId": "sess-9", "toolUseId": "toolu_9"}}, 201)
	id := a["id"].(string)
	w := newWebClient(t, e.srv.URL)
	w.login(e.maintainer)
	_, page := w.do("GET", "/", nil, nil)
	if !strings.Contains(page, "claude-code runs it itself once it is approved; brabo only decides · session sess-9 · tool call toolu_9") {
		t.Fatalf("the pending card does not say who runs it:\n%s", page)
	}
	_, body := w.do("POST", "/ui/actions/"+id+"/approve", url.Values{}, map[string]string{"X-CSRF-Token": w.csrf})
	if !strings.Contains(body, "the agent runs it itself, and has not reported a result yet") {
		t.Fatalf("the approved card does not say it is unreported:\n%s", body)
	}
	if _, err := os.Stat(filepath.Join(e.root, "web-ext.txt")); err == nil {
		t.Fatal("brabo ran it")
	}
}

// eachWatchedStore is eachStore on stores that tell when a project's
// signal is subscribed to (subscribeWatcher): a test then acts once a
// wait is in flight, not after a sleep.
func eachWatchedStore(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
		if err != nil {
			t.Fatal(err)
		}
		fn(t, newEnv(t, watchSubscribe(s)))
	})
	t.Run("postgres", func(t *testing.T) {
		url := postgresURL(t)
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		fn(t, newEnvWith(t, watchSubscribe(s), onDB(url)))
	})
}

// subscribeWatcher is a store whose watch channel receives the next
// Subscribe of a project (not the all-projects "").
type subscribeWatcher interface {
	brabo.Store
	watch() <-chan struct{}
}

type subscribeWatch struct {
	brabo.Store
	mu   sync.Mutex
	next chan struct{}
}

// subscribeWatchLatest keeps the store's ViewLatest, which the pipeline
// uses where the store offers it.
type subscribeWatchLatest struct {
	*subscribeWatch
	brabo.LatestViewer
}

func watchSubscribe(s brabo.Store) subscribeWatcher {
	w := &subscribeWatch{Store: s}
	if lv, ok := s.(brabo.LatestViewer); ok {
		return subscribeWatchLatest{w, lv}
	}
	return w
}

// watch returns a channel closed at the next Subscribe of a project.
func (w *subscribeWatch) watch() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next = make(chan struct{})
	return w.next
}

func (w *subscribeWatch) Subscribe(projectID string) (<-chan struct{}, func()) {
	ch, cancel := w.Store.Subscribe(projectID)
	if projectID != "" {
		w.mu.Lock()
		if w.next != nil {
			close(w.next)
			w.next = nil
		}
		w.mu.Unlock()
	}
	return ch, cancel
}
