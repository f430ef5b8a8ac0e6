package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/brabo-dev/brabo"
)

func (s *Server) propose(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r)
	// Propose itself refuses a project the caller cannot see (not_found):
	// an agent of another project, a member with no role in it.
	var in struct {
		Type      brabo.ActionType `json:"type"`
		Payload   brabo.Payload    `json:"payload"`
		Execution *brabo.Execution `json:"execution"`
	}
	head := &bodyHead{ReadCloser: r.Body}
	r.Body = head
	if err := s.decode(w, r, &in); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) && head.proposesWrite() {
			// A write no card could show whole: said as such, not as
			// a bare 413.
			return brabo.WriteTooLarge(r.ContentLength, mbe.Limit, "the proposal's body")
		}
		return err
	}
	if !in.Type.Valid() {
		return badRequest("type %q is not an action type", in.Type)
	}
	if in.Execution == nil {
		forExecution(w, in.Type, in.Payload) // an auto-approved one runs before the answer
	}
	a, err := s.Actions.Propose(r.Context(), brabo.ProposeRequest{ProjectID: r.PathValue("project"), Actor: c.actor(),
		Type: in.Type, Payload: in.Payload, Execution: in.Execution})
	if err != nil {
		return err
	}
	answerWithin(w)
	s.withText(r.Context(), a)
	writeJSON(w, http.StatusCreated, a)
	return nil
}

// bodyHead keeps the first bytes of a proposal's body, so that a body over
// the limit can still be told apart as a write_file.
type bodyHead struct {
	io.ReadCloser
	b []byte
}

// bodyHeadBytes is how much of a body bodyHead keeps.
const bodyHeadBytes = 4 << 10

func (h *bodyHead) Read(p []byte) (int, error) {
	n, err := h.ReadCloser.Read(p)
	if keep := min(n, bodyHeadBytes-len(h.b)); keep > 0 {
		h.b = append(h.b, p[:keep]...)
	}
	return n, err
}

// proposesWrite reports whether the body's first member is "type":
// "write_file", as every client brabo ships writes it.
func (h *bodyHead) proposesWrite() bool {
	dec := json.NewDecoder(bytes.NewReader(h.b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		if k == "type" {
			v, err := dec.Token()
			return err == nil && v == string(brabo.WriteFile)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
}

func (s *Server) listActions(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r)
	p, _, err := s.projectAccess(r.Context(), c, r.PathValue("project"))
	if err != nil {
		return err
	}
	f, err := actionFilter(r)
	if err != nil {
		return err
	}
	f.ProjectIDs = []string{p.ID}
	if c.agent != nil {
		f.ActorID = c.agent.ID // an agent reads its own actions only
	}
	return s.writeActions(w, r, f)
}

func actionFilter(r *http.Request) (brabo.ActionFilter, error) {
	q := r.URL.Query()
	f := brabo.ActionFilter{Status: brabo.ActionStatus(q.Get("status")), Type: brabo.ActionType(q.Get("type")),
		ActorID: q.Get("actor"), Text: q.Get("q")}
	if len(f.Text) > 200 {
		return f, badRequest("q: at most 200 bytes")
	}
	if f.Status != "" && !validStatus(f.Status) {
		return f, badRequest("status %q is not an action status", f.Status)
	}
	if f.Type != "" && !f.Type.Valid() {
		return f, badRequest("type %q is not an action type", f.Type)
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return f, badRequest("limit %q: want a number from 1 to 1000", l)
		}
		f.Limit = n
	}
	if o := q.Get("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 || n > 1_000_000 {
			return f, badRequest("offset %q: want a number from 0", o)
		}
		f.Offset = n
	}
	return f, nil
}

// writeActions answers one page of the actions f selects (limit and
// offset), and total, how many it selects in all: a list longer than a
// page is never cut silently.
func (s *Server) writeActions(w http.ResponseWriter, r *http.Request, f brabo.ActionFilter) error {
	out, total, err := s.Actions.Actions(r.Context(), f)
	if err != nil {
		return err
	}
	for i, a := range out {
		out[i] = s.Actions.CardNow(r.Context(), a)
	}
	s.withText(r.Context(), out...)
	writeJSON(w, http.StatusOK, map[string]any{"actions": nonNil(out), "total": total})
	return nil
}

// queue lists actions across every project the member has a role in:
// pending ones by default, newest first.
func (s *Server) queue(w http.ResponseWriter, r *http.Request) error {
	m, err := callerOf(r).requireMember("read the approval queue")
	if err != nil {
		return err
	}
	f, err := actionFilter(r)
	if err != nil {
		return err
	}
	if f.Status == "" {
		f.Status = brabo.StatusPending
	}
	ms, err := s.Projects.Memberships(r.Context(), m.ID)
	for _, x := range ms {
		f.ProjectIDs = append(f.ProjectIDs, x.ProjectID)
	}
	if err != nil {
		return err
	}
	if len(f.ProjectIDs) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"actions": []any{}, "total": 0})
		return nil
	}
	return s.writeActions(w, r, f)
}

// visibleAction loads an action the caller may read: an agent its own, a
// member those of its projects. Anything else is 404.
func (s *Server) visibleAction(r *http.Request) (*brabo.ProposedAction, error) {
	c := callerOf(r)
	id := r.PathValue("action")
	a, err := s.Actions.VisibleAction(r.Context(), c.actor(), id)
	if errors.Is(err, brabo.ErrNotFound) {
		return nil, notFound("action " + id)
	}
	return a, err
}

// maxWait bounds a long-poll (GET /v1/actions/{action}?wait=N).
const maxWait = 60 * time.Second

// getAction answers the action; with ?wait=N (seconds, up to 60) it is a
// long-poll: the answer waits until the action is settled (executed,
// failed or denied) or N seconds have passed, whichever comes first, so an
// agent waiting for a human needs neither a stream nor a tight loop.
func (s *Server) getAction(w http.ResponseWriter, r *http.Request) error {
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || time.Duration(n)*time.Second > maxWait {
			return badRequest("wait %q: want a number of seconds from 0 to %d", v, int(maxWait/time.Second))
		}
		wait = time.Duration(n) * time.Second
	}
	a, err := s.visibleAction(r)
	if err != nil {
		return err
	}
	if wait > 0 && !a.Status.Settled() {
		respondWithin(w, wait+writeMargin)
		if a, err = s.awaitAction(r, a, wait, settled); err != nil {
			return err
		}
	}
	// A pending action's card as it is now: its revision is what an
	// approve names.
	a = s.Actions.CardNow(r.Context(), a)
	s.withText(r.Context(), a)
	writeJSON(w, http.StatusOK, a)
	return nil
}

// execDeadline sets the write deadline of a decision that may run the
// action it names before answering: the action's execution budget plus
// the margin. An action it cannot read keeps the default; the decision
// itself then says why.
func (s *Server) execDeadline(w http.ResponseWriter, r *http.Request) {
	if a, err := s.Actions.Action(r.Context(), r.PathValue("action")); err == nil {
		forExecution(w, a.Type, a.Payload)
	}
}

// decider returns the calling member; agents never decide.
func (s *Server) decider(r *http.Request) (*brabo.Member, error) {
	return callerOf(r).requireMember("decide actions")
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) error {
	m, err := s.decider(r)
	if err != nil {
		return err
	}
	rev, err := s.revisionOf(w, r)
	if err != nil {
		return err
	}
	s.execDeadline(w, r)
	d, err := s.Actions.Approve(r.Context(), r.PathValue("action"), m, rev)
	if err != nil {
		return err
	}
	answerWithin(w)
	s.withText(r.Context(), d.Action)
	writeJSON(w, http.StatusOK, d)
	return nil
}

// revisionOf reads the revision an approve names: the body
// {"revision": "r1…"}. An empty body names none; the pipeline refuses
// that as card_changed, saying which revision the card has now.
func (s *Server) revisionOf(w http.ResponseWriter, r *http.Request) (string, error) {
	if r.ContentLength == 0 {
		return "", nil
	}
	var in struct {
		Revision string `json:"revision"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return "", err
	}
	return in.Revision, nil
}

func (s *Server) deny(w http.ResponseWriter, r *http.Request) error {
	m, err := s.decider(r)
	if err != nil {
		return err
	}
	var in struct {
		Reason string `json:"reason"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	a, err := s.Actions.Deny(r.Context(), r.PathValue("action"), m, in.Reason)
	if err != nil {
		return err
	}
	// The same shape as approve's answer: the action and what the
	// decision did.
	s.withText(r.Context(), a)
	writeJSON(w, http.StatusOK, brabo.Decided{Action: a, Outcome: brabo.OutcomeDenied})
	return nil
}

func (s *Server) previewAlways(w http.ResponseWriter, r *http.Request) error {
	m, err := s.decider(r)
	if err != nil {
		return err
	}
	d, err := s.Actions.AlwaysAllowPreview(r.Context(), r.PathValue("action"), m)
	if err != nil {
		return err
	}
	out := map[string]any{"patterns": nonNil(d.Patterns), "autonomy": d.Autonomy}
	if d.AgentID != "" {
		out["agentPatterns"], out["agentId"] = nonNil(d.AgentPatterns), d.AgentID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) approveAlways(w http.ResponseWriter, r *http.Request) error {
	m, err := s.decider(r)
	if err != nil {
		return err
	}
	rev, err := s.revisionOf(w, r)
	if err != nil {
		return err
	}
	s.execDeadline(w, r)
	d, err := s.Actions.ApproveAlways(r.Context(), r.PathValue("action"), m, rev)
	if err != nil {
		return err
	}
	answerWithin(w)
	s.withText(r.Context(), d.Action)
	d.Patterns = nonNil(d.Patterns)
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	p, _, err := s.memberProject(r, brabo.Developer, "reading the event log")
	if err != nil {
		return err
	}
	after, limit, err := eventParams(r)
	if err != nil {
		return err
	}
	out, err := s.Events.Events(r.Context(), p.ID, after, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": nonNil(out)})
	return nil
}

func eventParams(r *http.Request) (after int64, limit int, err error) {
	q := r.URL.Query()
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return 0, 0, badRequest("after %q: want a sequence number", v)
		}
	}
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return 0, 0, badRequest("Last-Event-ID %q: want a sequence number", v)
		}
	}
	limit = 500
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 1000 {
			return 0, 0, badRequest("limit %q: want a number from 1 to 1000", v)
		}
	}
	return after, limit, nil
}

// streamEvents is the project's event log as Server-Sent Events: every
// event after ?after= (or Last-Event-ID), then each new one as it is
// committed. A store signal is the fast path; a short poll catches what a
// missed signal would hide.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Developer, "reading the event log")
	if err != nil {
		return err
	}
	after, _, err := eventParams(r)
	if err != nil {
		return err
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming unsupported by the response writer")
	}
	release, err := s.openStream(m)
	if err != nil {
		return err
	}
	defer release()
	signal, cancel := s.Events.Subscribe(p.ID)
	defer cancel()
	beforeWrite := streamWrites(w)
	beforeWrite()
	beat, tick := s.startStream(w, flusher, ": brabo events\n\n")
	defer beat.Stop()
	defer tick.Stop()
	for {
		evs, err := s.Events.Events(r.Context(), p.ID, after, 500)
		if err != nil {
			return nil // the client went away or the store did; the stream ends
		}
		for _, e := range evs {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, jsonLine(e))
			after = e.Seq
		}
		if len(evs) > 0 {
			beforeWrite()
			flusher.Flush()
			if len(evs) == 500 {
				continue
			}
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-signal:
		case <-tick.C:
		case <-beat.C:
			beforeWrite()
			fmt.Fprint(w, ": ping\n\n")
			flusher.Flush()
		}
	}
}

// startStream answers 200 as an SSE stream, writes its first lines, and
// returns the heartbeat ticker (keeps proxies from closing an idle stream)
// and the poll ticker (the reliable path behind the store's signal).
func (s *Server) startStream(w http.ResponseWriter, flusher http.Flusher, first string) (beat, poll *time.Ticker) {
	heartbeat, every := s.Heartbeat, s.Poll
	if heartbeat <= 0 {
		heartbeat = 15 * time.Second
	}
	if every <= 0 {
		every = 2 * time.Second
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, first)
	flusher.Flush()
	return time.NewTicker(heartbeat), time.NewTicker(every)
}

// jsonLine encodes v on one line: an SSE data line cannot hold a newline,
// and encoding/json escapes those inside strings.
func jsonLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"error":"unencodable event"}`)
	}
	return b
}
