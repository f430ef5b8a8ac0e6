package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLongRoutesOutliveTheQuickRoutesDeadline: with a write deadline of
// one second for quick routes, a synchronous execution of two seconds (an
// auto-approved command, an approval), a long-poll of two seconds and an
// event stream held for three still get their answers: the deadline is
// per route, not one for the whole server.
func TestLongRoutesOutliveTheQuickRoutesDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits seconds on purpose")
	}
	eachStore(t, func(t *testing.T, e *env) {
		e.api.WriteTimeout = time.Second
		e.setPermissions(`{"allow": ["Terminal(sleep)", "Terminal(echo)"]}`)
		stream := e.openStream(e.maintainer, "", nil)

		a := e.terminal("sleep 2 && echo slept")
		if a["status"] != "executed" || !strings.Contains(str(a, "result", "output"), "slept") {
			t.Errorf("an auto-approved two-second command: %v", a)
		}
		id := e.terminal("touch later && sleep 2 && echo approved")["id"].(string)
		d := e.ok("POST", "/v1/actions/"+id+"/approve", e.maintainer, nil, 200)
		if str(d, "action", "status") != "executed" || !strings.Contains(str(d, "action", "result", "output"), "approved") {
			t.Errorf("an approval running two seconds: %v", d)
		}

		// The long-poll: an undecided action comes back pending after the
		// wait; one decided during the wait comes back as soon as it is.
		waiting := e.terminal("touch polled")["id"].(string)
		start := time.Now()
		if got := e.ok("GET", "/v1/actions/"+waiting+"?wait=2", e.agent, nil, 200); got["status"] != "pending" || time.Since(start) < 2*time.Second {
			t.Errorf("a long-poll on an undecided action: %v after %s", got["status"], time.Since(start))
		}
		go func() {
			time.Sleep(1500 * time.Millisecond)
			e.call("POST", "/v1/actions/"+waiting+"/deny", e.maintainer, map[string]any{"reason": "not now"})
		}()
		start = time.Now()
		got := e.ok("GET", "/v1/actions/"+waiting+"?wait=10", e.agent, nil, 200)
		if got["status"] != "denied" || time.Since(start) > 5*time.Second {
			t.Errorf("a long-poll across a denial: %v after %s", got["status"], time.Since(start))
		}
		e.refused("GET", "/v1/actions/"+waiting+"?wait=61", e.agent, nil, 400, "invalid_action")
		e.refused("GET", "/v1/actions/"+waiting+"?wait=soon", e.agent, nil, 400, "invalid_action")

		// The stream, open for seconds past the quick deadline, still
		// carries what happened.
		for {
			ev := stream.next()
			if ev.data.ActionID == waiting && ev.event == "proposed_action.denied" {
				break
			}
		}
	})
}

// TestEventStreamsPerMemberAreCapped: past MaxStreams a member's next
// stream, from the API or the web page, is 429 naming the cap; other
// members are not affected, and a closed stream frees its place.
func TestEventStreamsPerMemberAreCapped(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.api.MaxStreams = 2
		first := e.openStream(e.maintainer, "", nil)
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/ui/stream", nil)
		web, err := w.c.Do(req)
		if err != nil || web.StatusCode != 200 {
			t.Fatalf("the web page's stream: %v %v", web, err)
		}
		defer web.Body.Close()

		out := e.refused("GET", e.pp("/events/stream"), e.maintainer, nil, 429, "too_many_streams")
		if !strings.Contains(out["message"].(string), "2 event streams") {
			t.Errorf("the refusal does not name the cap: %v", out)
		}
		if resp, body := w.do("GET", "/ui/stream", nil, nil); resp.StatusCode != 429 || !strings.Contains(body, "too_many_streams") {
			t.Errorf("a third stream from the web page: %d %s", resp.StatusCode, body)
		}
		e.openStream(e.admin, "", nil) // another member has its own count

		first.close()
		deadline := time.Now().Add(5 * time.Second)
		for {
			status, _ := e.callStream(e.maintainer)
			if status == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a closed stream did not free its place (%d)", status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// callStream opens the event stream and closes it at once, returning the
// status.
func (e *env) callStream(token string) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+e.pp("/events/stream"), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestASlowBodyIs408: a body that does not arrive within BodyTimeout is
// answered 408 request_timeout and nothing is proposed; a handler that
// runs longer than the body timeout once its body is in is not cut.
func TestASlowBodyIs408(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.api.BodyTimeout = 500 * time.Millisecond
		before := e.written()
		c, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: brabo\r\nAuthorization: Bearer %s\r\nContent-Length: 100\r\n\r\n{\"type\": ", e.pp("/actions"), e.agent)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no answer to a stalled body: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"request_timeout"`) || !strings.Contains(string(body), "500ms") {
			t.Errorf("a stalled body: %d %s", resp.StatusCode, body)
		}
		e.unchanged(before, "a stalled body")

		// The body read in time, the handler may take longer than the body
		// timeout: its context is not cancelled by the lifted deadline.
		e.setPermissions(`{"allow": ["Terminal(sleep)", "Terminal(echo)"]}`)
		if a := e.terminal("sleep 1 && echo done"); a["status"] != "executed" || !strings.Contains(str(a, "result", "output"), "done") {
			t.Errorf("a command longer than the body timeout: %v", a)
		}
	})
}
