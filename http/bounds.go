package http

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/brabo-dev/brabo"
)

// Connection bounds. A client gets a bounded time for each part
// of a request it controls: its headers (ReadHeaderTimeout), its body
// (BodyTimeout, set per request when a body comes and lifted once it is
// read, so that it never cancels a handler that runs longer), and the
// pause between two requests on a kept-alive connection (IdleTimeout).
// Writes get a deadline per route, never one for the whole server: a quick
// route WriteTimeout, a synchronous execution the command's timeout plus a
// margin, a long-poll its wait plus a margin, a stream none (each of its
// writes has its own, so a reader that stops reading is dropped).

// Defaults of the bounds; a Server field at zero takes these.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	// DefaultMaxStreams caps the event streams (API and web page) one
	// member holds open at once.
	DefaultMaxStreams = 8
	// writeMargin is what a long route adds to its expected duration, and
	// what any answer gets to be written once it is ready.
	writeMargin = 30 * time.Second
	// maxHeaderBytes bounds a request's headers (Go's default is 1 MiB).
	maxHeaderBytes = 64 << 10
)

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// HTTPServer returns the http.Server to serve Handler with: the header and
// idle timeouts and the header size bound are set here; the body and write
// deadlines are set per request by the handler itself.
func (s *Server) HTTPServer() *http.Server {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: orDefault(s.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       orDefault(s.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    maxHeaderBytes,
	}
	// Shutdown waits for the requests in flight: the long-polls end at
	// once instead of at their timeout.
	hs.RegisterOnShutdown(s.Stop)
	return hs
}

// bounded gives each request its default write deadline and, when it has
// a body, the body's read deadline.
func (s *Server) bounded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// Every request sets it: a deadline a kept-alive connection's last
		// response left must not cut this one.
		_ = rc.SetWriteDeadline(time.Now().Add(orDefault(s.WriteTimeout, DefaultWriteTimeout)))
		if r.Body != nil && r.Body != http.NoBody {
			_ = rc.SetReadDeadline(time.Now().Add(orDefault(s.BodyTimeout, DefaultBodyTimeout)))
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, limit: orDefault(s.BodyTimeout, DefaultBodyTimeout)}
		}
		next.ServeHTTP(w, r)
	})
}

// errBodyTimeout is a body that did not arrive in time: 408.
type errBodyTimeout struct{ limit time.Duration }

func (e *errBodyTimeout) Error() string {
	return fmt.Sprintf("the request body did not arrive within %s", e.limit)
}

// deadlineBody lifts the body's read deadline once the body is read: the
// server's background read (which notices a client that goes away) must
// not hit it while a long handler runs.
type deadlineBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	limit time.Duration
	done  bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, io.EOF) && !b.done:
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &errBodyTimeout{limit: b.limit}
	}
	return n, err
}

// respondWithin moves the response's write deadline to d from now. A
// route that runs long calls it when it starts (its expected duration plus
// the margin) and, through answerWithin, again when its answer is ready:
// time spent queued behind other commands must not cost the answer.
func respondWithin(w http.ResponseWriter, d time.Duration) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
}

// answerWithin gives a ready answer the margin to be written.
func answerWithin(w http.ResponseWriter) { respondWithin(w, writeMargin) }

// execBudget is how long executing an action may take, as the executor
// bounds it: a terminal command its timeoutSec (within the executor's
// ceiling of an hour) or the default two minutes, anything else (a few
// git steps) ten minutes.
func execBudget(t brabo.ActionType, p brabo.Payload) time.Duration {
	if t != brabo.Terminal {
		return 10 * time.Minute
	}
	switch {
	case p.TimeoutSec <= 0:
		return 2 * time.Minute
	case p.TimeoutSec >= 3600:
		return time.Hour
	}
	return time.Duration(p.TimeoutSec) * time.Second
}

// forExecution sets the write deadline of a route that may run the action
// before it answers.
func forExecution(w http.ResponseWriter, t brabo.ActionType, p brabo.Payload) {
	respondWithin(w, execBudget(t, p)+writeMargin)
}

// streamWrites lifts the write deadline of an event stream (it has none as
// a whole) and returns what each flush calls first: a deadline for that
// write alone, so a client that stopped reading is dropped instead of
// holding the connection and its goroutine.
func streamWrites(w http.ResponseWriter) func() {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	return func() { _ = rc.SetWriteDeadline(time.Now().Add(writeMargin)) }
}

// openStream counts an event stream of the member against MaxStreams; the
// caller releases it when the stream ends. Past the cap it is 429, naming
// the cap: a stream costs a connection and a goroutine for as long as it
// lasts.
func (s *Server) openStream(m *brabo.Member) (release func(), err error) {
	max := s.MaxStreams
	if max <= 0 {
		max = DefaultMaxStreams
	}
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.streams == nil {
		s.streams = map[string]int{}
	}
	if s.streams[m.ID] >= max {
		return nil, errorf(http.StatusTooManyRequests, brabo.CodeTooManyStreams,
			"%s has %d event streams open, the limit per member; close one (a browser tab, a curl) and connect again", m.Name, max)
	}
	s.streams[m.ID]++
	return func() {
		s.streamsMu.Lock()
		defer s.streamsMu.Unlock()
		if s.streams[m.ID]--; s.streams[m.ID] <= 0 {
			delete(s.streams, m.ID)
		}
	}, nil
}
