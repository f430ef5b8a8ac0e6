package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// sseEvent is one event read off the stream.
type sseEvent struct {
	id, event string
	data      brabo.Event
}

// stream is an open GET …/events/stream.
type stream struct {
	t      *testing.T
	br     *bufio.Reader
	cancel context.CancelFunc
	resp   *http.Response
	pings  int // ": ping" comments read so far
}

// openStream opens the project's event stream with token; query is added to
// the URL and header to the request. The stream is closed when the test
// ends, before the server is.
func (e *env) openStream(token, query string, header map[string]string) *stream {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+e.pp("/events/stream")+query, nil)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	s := &stream{t: e.t, br: bufio.NewReader(resp.Body), cancel: cancel, resp: resp}
	e.t.Cleanup(s.close)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		e.t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return s
}

func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next reads the next event, skipping comments (the greeting, pings).
func (s *stream) next() sseEvent {
	s.t.Helper()
	var ev sseEvent
	var data string
	fields := 0
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading the stream: %v (partial %q)", err, line)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if fields == 0 {
				continue // the end of a comment block
			}
			if err := json.Unmarshal([]byte(data), &ev.data); err != nil {
				s.t.Fatalf("event %s: data is not an event: %q", ev.id, data)
			}
			return ev
		case line == ": ping":
			s.pings++
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.id, fields = strings.TrimPrefix(line, "id: "), fields+1
		case strings.HasPrefix(line, "event: "):
			ev.event, fields = strings.TrimPrefix(line, "event: "), fields+1
		case strings.HasPrefix(line, "data: "):
			if data != "" {
				s.t.Fatalf("an event with two data lines: %q", line)
			}
			data, fields = strings.TrimPrefix(line, "data: "), fields+1
		default:
			s.t.Fatalf("an unexpected stream line %q", line)
		}
	}
}

// createdSeq is the seq of an action's proposed_action.created event.
func (e *env) createdSeq(actionID string) int64 {
	e.t.Helper()
	ev := e.eventsOf(actionID, brabo.EventActionCreated)
	if len(ev) != 1 {
		e.t.Fatalf("%s: %d created events", actionID, len(ev))
	}
	return ev[0].Seq
}

// wantCreated checks that ev is actionID's created event, with its id equal
// to its seq.
func (e *env) wantCreated(ev sseEvent, actionID string) int64 {
	e.t.Helper()
	seq := e.createdSeq(actionID)
	if ev.event != brabo.EventActionCreated || ev.data.ActionID != actionID {
		e.t.Fatalf("got %s of %s, want %s of %s", ev.event, ev.data.ActionID, brabo.EventActionCreated, actionID)
	}
	if ev.id != strconv.FormatInt(seq, 10) || ev.data.Seq != seq || ev.data.Type != ev.event {
		e.t.Fatalf("event id %q, data seq %d type %s; the log has seq %d", ev.id, ev.data.Seq, ev.data.Type, seq)
	}
	if ev.data.ActorID != e.agentID || ev.data.ProjectID != e.project {
		e.t.Errorf("event actor %s project %s", ev.data.ActorID, ev.data.ProjectID)
	}
	return seq
}

func TestStreamDeliversEventsWithTheirSeq(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		a0 := e.terminal("touch zero")["id"].(string)

		s := e.openStream(e.maintainer, "", nil)
		// What was logged before the connection is replayed first.
		e.wantCreated(s.next(), a0)
		a1 := e.terminal("touch one")["id"].(string)
		ev := s.next()
		seq1 := e.wantCreated(ev, a1)
		var p map[string]any
		json.Unmarshal(ev.data.Payload, &p)
		if p["status"] != "pending" || p["type"] != "terminal" {
			t.Errorf("created payload: %v", p)
		}
		// A decision streams its events in order.
		e.ok("POST", "/v1/actions/"+a1+"/approve", e.maintainer, nil, 200)
		for i, want := range []string{brabo.EventActionApproved, brabo.EventActionExecuted} {
			ev := s.next()
			if ev.event != want || ev.data.ActionID != a1 || ev.id != strconv.FormatInt(seq1+int64(i)+1, 10) {
				t.Fatalf("after the approval: %s %s id %s, want %s id %d", ev.event, ev.data.ActionID, ev.id, want, seq1+int64(i)+1)
			}
		}
		last := seq1 + 2
		s.close()

		// Reconnecting with Last-Event-ID resumes after it: nothing already
		// seen is replayed, and the next event arrives.
		blog := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "blog", "mode": "local", "root": t.TempDir()}, 201)["id"].(string)
		s = e.openStream(e.maintainer, "", map[string]string{"Last-Event-ID": strconv.FormatInt(last, 10)})
		// Another project's events never show on this stream.
		e.ok("POST", "/v1/projects/"+blog+"/actions", e.admin, map[string]any{"type": "terminal", "payload": map[string]any{"command": "touch elsewhere"}}, 201)
		a2 := e.terminal("touch two")["id"].(string)
		if seq2 := e.wantCreated(s.next(), a2); seq2 != last+1 {
			t.Fatalf("the next event has seq %d, want %d", seq2, last+1)
		}
		s.close()

		// ?after= does the same for a first connection.
		s = e.openStream(e.developer, "?after="+strconv.FormatInt(seq1-1, 10), nil)
		e.wantCreated(s.next(), a1)
		if ev := s.next(); ev.event != brabo.EventActionApproved {
			t.Fatalf("after a1's creation: %s", ev.event)
		}
	})
}

func TestStreamSurvivesABurstAndPings(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		s := e.openStream(e.developer, "", nil)
		const n = 30
		ids := make([]string, n)
		for i := range ids {
			ids[i] = e.terminal("touch f" + strconv.Itoa(i))["id"].(string)
		}
		for i := range ids {
			e.wantCreated(s.next(), ids[i])
		}
		// The heartbeat (1 s in this env) keeps an idle stream open, and
		// the next event still arrives.
		time.Sleep(1500 * time.Millisecond)
		last := e.terminal("touch last")["id"].(string)
		e.wantCreated(s.next(), last)
		if s.pings == 0 {
			t.Error("no heartbeat on an idle stream")
		}
	})
}
