// Package http is brabo's JSON API under /v1: bearer-token auth, the
// action queue and decisions, agent autonomy, permissions.json, and the
// event log with its SSE stream.
package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// DefaultMaxBody is the largest request body accepted by default: 1 MiB,
// the one constant that also bounds a write_file's content
// (brabo.MaxWriteBytes), so that every write that fits in a request is
// one a card shows whole.
const DefaultMaxBody = brabo.MaxWriteBytes

// Server serves the API. Set the fields, then use Handler.
type Server struct {
	// The services every route works through (brabo's service.go): the
	// server opens no transaction and holds no store. Use sets them all
	// from one implementation.
	Actions   brabo.ActionService
	Events    brabo.EventService
	Projects  brabo.ProjectService
	Agents    brabo.AgentService
	Trust     brabo.TrustService
	Execution brabo.ExecutionService
	// Rules reads a project's permissions.json and the rules brabo decides
	// with: its answers are policy's types, which the root cannot name.
	Rules Rules

	Log *slog.Logger
	// MaxBody bounds request bodies (DefaultMaxBody when 0).
	MaxBody int64
	// OwnPaths are brabo's own folders (data dir, checkout): no local
	// project may overlap them.
	OwnPaths []string
	// OwnPathsHint ends the refusal of a project folder that overlaps
	// OwnPaths: how to move them (serve names its --data flag).
	OwnPathsHint string
	// DirProbe checks a local project's folder on the real disk.
	DirProbe func(path string) (isDir, writable bool, err error)
	// Heartbeat is the SSE keep-alive period (15 s when 0).
	Heartbeat time.Duration
	// Poll is the SSE fallback poll period (2 s when 0).
	Poll time.Duration
	// Conversations is the dev lead's conversation (lead.go); nil answers
	// 501 not_configured.
	Conversations brabo.Conversations
	// Gates runs the QA gate on a task (gate.go); nil answers 501
	// not_configured.
	Gates brabo.Gates
	// Health are fields /healthz reports beside "status" (the server's
	// "landlock": whether terminal commands are confined).
	Health map[string]any

	// SessionTTL is how long a web login lasts (DefaultSessionTTL when 0).
	SessionTTL time.Duration
	// ReadHeaderTimeout, BodyTimeout and IdleTimeout bound what a client
	// may take to send its headers, its body, and its next request on a
	// kept-alive connection; WriteTimeout bounds the answer of a quick
	// route (bounds.go). Zero takes the Default… value.
	ReadHeaderTimeout, BodyTimeout, IdleTimeout, WriteTimeout time.Duration
	// MaxStreams caps the event streams one member holds open
	// (DefaultMaxStreams when 0).
	MaxStreams int

	tokens tokenCache
	// authSignal is the store's AuthSignal subscription: a revocation
	// anywhere drops the cached credentials (tokenCache).
	authOnce   sync.Once
	authSignal <-chan struct{}

	streamsMu sync.Mutex
	streams   map[string]int // member id → open event streams

	// stopped is closed when the server stops gracefully (Stop): the
	// long-polls answer "retry" at once (external.go).
	stopOnce sync.Once
	stopped  chan struct{}
}

// Rules is what the permissions routes and the check page read of a
// project's permissions.json; the pipeline implements it.
type Rules interface {
	// ScopeRoot is the folder the project's actions are confined to.
	ScopeRoot(p *brabo.Project) (policy.Scope, error)
	// ReadPermissions reads permissions.json under root, bounded.
	ReadPermissions(root string) ([]byte, error)
	// EffectiveRules are the rules decisions use now, and the trust
	// state that says which version they come from.
	EffectiveRules(ctx context.Context, p *brabo.Project) (*policy.Rules, *brabo.TrustState, error)
	// Check decides a terminal command as a proposal of it would be
	// decided now, recording nothing (the check page).
	Check(ctx context.Context, p *brabo.Project, req brabo.CheckRequest) (*brabo.CheckAnswer, error)
}

// Services is every service the server uses, as one implementation
// (the pipeline) provides them.
type Services interface {
	brabo.ActionService
	brabo.EventService
	brabo.ProjectService
	brabo.AgentService
	brabo.TrustService
	brabo.ExecutionService
	Rules
}

// Use sets every service field from svc and returns s.
func (s *Server) Use(svc Services) *Server {
	s.Actions, s.Events, s.Projects, s.Agents = svc, svc, svc, svc
	s.Trust, s.Execution, s.Rules = svc, svc, svc
	return s
}

// route is one API endpoint; the table is also what the OpenAPI test
// checks the document against.
type route struct {
	method, pattern string
	handle          func(*Server, http.ResponseWriter, *http.Request) error
}

var routes = []route{
	{"POST", "/v1/projects", (*Server).createProject},
	{"GET", "/v1/projects", (*Server).listProjects},
	{"GET", "/v1/projects/{project}", (*Server).getProject},
	{"PATCH", "/v1/projects/{project}", (*Server).patchProject},
	{"PUT", "/v1/projects/{project}/container", (*Server).putContainer},
	{"PUT", "/v1/projects/{project}/infra-agent", (*Server).putInfraAgent},
	{"POST", "/v1/projects/{project}/members", (*Server).createMember},
	{"POST", "/v1/projects/{project}/agents", (*Server).createAgent},
	{"GET", "/v1/projects/{project}/agents", (*Server).listAgents},
	{"GET", "/v1/projects/{project}/agents/{agent}/autonomy", (*Server).getAutonomy},
	{"PUT", "/v1/projects/{project}/agents/{agent}/autonomy", (*Server).putAutonomy},
	{"GET", "/v1/projects/{project}/agents/{agent}/patterns", (*Server).listAgentPatterns},
	{"DELETE", "/v1/projects/{project}/agents/{agent}/patterns", (*Server).deleteAgentPattern},
	{"GET", "/v1/projects/{project}/permissions", (*Server).getPermissions},
	{"PUT", "/v1/projects/{project}/permissions", (*Server).putPermissions},
	{"GET", "/v1/projects/{project}/permissions/trust", (*Server).getTrust},
	{"GET", "/v1/projects/{project}/permissions/effective", (*Server).getEffectivePermissions},
	{"POST", "/v1/projects/{project}/permissions/accept", (*Server).acceptPermissions},
	{"POST", "/v1/projects/{project}/permissions/restore", (*Server).restorePermissions},
	{"POST", "/v1/projects/{project}/actions", (*Server).propose},
	{"GET", "/v1/projects/{project}/actions", (*Server).listActions},
	{"GET", "/v1/projects/{project}/pulls", (*Server).listPulls},
	{"POST", "/v1/projects/{project}/tasks", (*Server).createTask},
	{"GET", "/v1/projects/{project}/tasks", (*Server).listTasks},
	{"GET", "/v1/tasks/{task}", (*Server).getTask},
	{"GET", "/v1/projects/{project}/events", (*Server).listEvents},
	{"GET", "/v1/projects/{project}/events/stream", (*Server).streamEvents},
	{"GET", "/v1/queue", (*Server).queue},
	{"GET", "/v1/me", (*Server).me},
	{"GET", "/v1/sessions", (*Server).listSessions},
	{"DELETE", "/v1/sessions/{session}", (*Server).revokeSession},
	{"DELETE", "/v1/members/{member}/token", (*Server).revokeMemberToken},
	{"DELETE", "/v1/projects/{project}/agents/{agent}/token", (*Server).revokeAgentToken},
	{"POST", "/v1/projects/{project}/agents/{agent}/token", (*Server).rotateAgentToken},
	{"POST", "/v1/actions/{action}/abandon", (*Server).abandonAction},
	{"GET", "/v1/actions/{action}", (*Server).getAction},
	{"GET", "/v1/actions/{action}/wait", (*Server).waitDecided},
	{"POST", "/v1/actions/{action}/result", (*Server).reportResult},
	{"PUT", "/v1/projects/{project}/mcp-tools", (*Server).putMcpTools},
	{"GET", "/v1/projects/{project}/webhooks", (*Server).getWebhooks},
	{"PUT", "/v1/projects/{project}/webhooks", (*Server).putWebhooks},
	{"POST", "/v1/projects/{project}/webhooks/secret", (*Server).rotateWebhookSecret},
	{"POST", "/v1/actions/{action}/approve", (*Server).approve},
	{"POST", "/v1/actions/{action}/deny", (*Server).deny},
	{"GET", "/v1/actions/{action}/approve-always", (*Server).previewAlways},
	{"POST", "/v1/actions/{action}/approve-always", (*Server).approveAlways},
	{"POST", "/v1/actions/{action}/allow-network", (*Server).allowNetwork},
	{"POST", "/v1/projects/{project}/lead/messages", (*Server).postLeadMessage},
	{"GET", "/v1/projects/{project}/lead/messages", (*Server).getLeadMessages},
	{"POST", "/v1/tasks/{task}/gate", (*Server).triggerGate},
	{"POST", "/v1/projects/{project}/activate", (*Server).activateExecution},
	{"GET", "/v1/projects/{project}/budget", (*Server).getBudget},
	{"PUT", "/v1/projects/{project}/budget", (*Server).putBudget},
	{"GET", "/v1/projects/{project}/modules", (*Server).getModules},
	{"PUT", "/v1/projects/{project}/modules", (*Server).putModules},
	{"GET", "/v1/projects/{project}/protected-branches", (*Server).listProtectedBranches},
	{"GET", "/v1/projects/{project}/agents/{agent}/instructions", (*Server).getInstructions},
	{"GET", "/v1/containers", (*Server).listContainers},
}

// Handler returns the API's handler: every /v1 route needs a bearer token.
func (s *Server) Handler() http.Handler {
	s.authOnce.Do(func() {
		// Held for the server's life: the Server has no Close, and one
		// subscription per Server is all it costs.
		s.authSignal, _ = s.Events.Subscribe(brabo.AuthSignal)
	})
	mux := http.NewServeMux()
	for _, r := range routes {
		r := r
		mux.Handle(r.method+" "+r.pattern, s.authenticated(func(w http.ResponseWriter, req *http.Request) error {
			if err := hookMay(callerOf(req), r); err != nil {
				return err
			}
			return r.handle(s, w, req)
		}))
	}
	mux.Handle("/v1/", s.authenticated(func(w http.ResponseWriter, r *http.Request) error {
		return &apiError{status: http.StatusNotFound, code: brabo.CodeNotFound, msg: "no such endpoint: " + r.Method + " " + r.URL.Path}
	}))
	s.mountWeb(mux)
	mux.HandleFunc("GET /openapi.json", serveOpenAPI)
	mux.HandleFunc("GET /healthz", s.healthz)
	return s.bounded(http.NewCrossOriginProtection().Handler(mux))
}

func (s *Server) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// apiError is an error with its HTTP status and stable code.
type apiError struct {
	status int
	code   brabo.Code
	msg    string
	detail any
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, code brabo.Code, format string, a ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, a...)}
}

// writeError answers {code, message}; an unexpected error is a 500 whose
// detail goes to the log, not to the client.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.classify(r, err)
	body := map[string]any{"code": ae.code, "message": ae.msg}
	if ae.detail != nil {
		body["detail"] = ae.detail
	}
	writeJSON(w, ae.status, body)
}

// classify gives an error its status and stable code, for the API and the
// web page alike; an unexpected error is logged and becomes "internal".
func (s *Server) classify(r *http.Request, err error) *apiError {
	var ae *apiError
	var mbe *http.MaxBytesError
	var slow *errBodyTimeout
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &mbe):
		ae = errorf(http.StatusRequestEntityTooLarge, brabo.CodeTooLarge, "the request body is over %d bytes", mbe.Limit)
	case errors.As(err, &slow):
		ae = errorf(http.StatusRequestTimeout, brabo.CodeRequestTimeout, "%s", slow.Error())
	default:
		code := brabo.ErrorCode(err)
		if status, ok := code.HTTPStatus(); ok {
			msg := err.Error()
			var be *brabo.Error
			if errors.As(err, &be) && be.Message != "" && code != brabo.CodeNotFound {
				msg = be.Message
			}
			ae = &apiError{status: status, code: code, msg: msg}
			if code == brabo.CodeInvalidPermissions {
				ae.detail = err
			}
		} else {
			s.log().Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			ae = errorf(http.StatusInternalServerError, brabo.CodeInternal, "internal error; see the server log")
		}
	}
	return ae
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decode reads a JSON body strictly: bounded, no unknown fields, one value.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	max := s.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	body := http.MaxBytesReader(w, r.Body, max)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var slow *errBodyTimeout
		if errors.As(err, &mbe) || errors.As(err, &slow) {
			return err
		}
		if errors.Is(err, io.EOF) {
			return errorf(http.StatusBadRequest, brabo.CodeInvalidAction, "the request needs a JSON body")
		}
		return errorf(http.StatusBadRequest, brabo.CodeInvalidAction, "malformed JSON: %v", err)
	}
	// Only white space may follow the value. Decoder.More is not enough: it
	// reports false before a stray ']' or '}', which then went unnoticed.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		var slow *errBodyTimeout
		if errors.As(err, &mbe) || errors.As(err, &slow) {
			return err
		}
		return errorf(http.StatusBadRequest, brabo.CodeInvalidAction, "malformed JSON: the body holds more than one value")
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return err
	}
	return nil
}

func badRequest(format string, a ...any) error {
	return errorf(http.StatusBadRequest, brabo.CodeInvalidAction, format, a...)
}

// badProject is a 400 invalid_project: the project cannot be created or
// changed as asked.
func badProject(format string, a ...any) error {
	return errorf(http.StatusBadRequest, brabo.CodeInvalidProject, format, a...)
}

func notFound(what string) error {
	return errorf(http.StatusNotFound, brabo.CodeNotFound, "%s not found", what)
}

// bodyText reads a raw body bounded by max and by MaxBody, whichever is
// smaller: the server's limit holds for every request body.
func (s *Server) bodyText(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	limit := s.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	max = min(max, limit)
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}

func trimmed(s string) string { return strings.TrimSpace(s) }
