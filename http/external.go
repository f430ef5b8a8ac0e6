package http

import (
	"net/http"
	"strconv"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// The routes of agents that run their tools themselves: a hook
// proposes with execution "external", waits for the decision with
// GET /v1/actions/{id}/wait, and reports what happened with
// POST /v1/actions/{id}/result.

// hookRoutes are all a hook token may call: propose what its agent runs
// itself, wait for its own actions' decisions, report their results, say
// who it is, and read the permissions brabo decides with.
var hookRoutes = map[string]bool{
	"POST /v1/projects/{project}/actions": true,
	"GET /v1/actions/{action}/wait":       true,
	"POST /v1/actions/{action}/result":    true,
	"POST /v1/actions/{action}/abandon":   true,
	"GET /v1/me":                          true,
	// The rules brabo decides with now: the hook decides a read inside
	// the project with them, never with the file on disk.
	"GET /v1/projects/{project}/permissions/effective": true,
}

// hookMay refuses a hook token every route but hookRoutes: it never reads
// other actions, the queue or the log, and never decides.
func hookMay(c caller, rt route) error {
	if c.agent == nil || !c.agent.IsHook() || hookRoutes[rt.method+" "+rt.pattern] {
		return nil
	}
	return errorf(http.StatusForbidden, brabo.CodeForbiddenRole,
		"a hook token only proposes the actions its agent runs itself, waits for their decisions and reports their results")
}

// parseWait reads a long-poll's duration: whole seconds ("30") or a Go
// duration ("1500ms"), from 0 to maxWait.
func parseWait(name, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if n, aerr := strconv.Atoi(v); aerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d < 0 || d > maxWait {
		return 0, badRequest("%s %q: want seconds (or a duration such as 1500ms) from 0 to %d s", name, v, int(maxWait/time.Second))
	}
	return d, nil
}

// waitDecided answers the action once it is decided (no longer pending) or
// when the timeout passes, whichever comes first: what a hook needs before
// it lets its agent run the tool. It is ?wait=N of GET /v1/actions/{id}
// with "decided" in place of "settled": an approved action answers at
// once, without waiting for its execution.
func (s *Server) waitDecided(w http.ResponseWriter, r *http.Request) error {
	wait, err := parseWait("timeout", r.URL.Query().Get("timeout"))
	if err != nil {
		return err
	}
	a, err := s.visibleAction(r)
	if err != nil {
		return err
	}
	if wait > 0 && a.Status == brabo.StatusPending {
		respondWithin(w, wait+writeMargin)
		if a, err = s.awaitAction(r, a, wait, decided); err != nil {
			if err == errStopping {
				w.Header().Set("Retry-After", "1")
			}
			return err
		}
	}
	s.withText(r.Context(), a)
	writeJSON(w, http.StatusOK, a)
	return nil
}

// Stop ends the long-polls in flight, and those that come later, with a
// 503 "retry" answer: a graceful stop takes seconds, not the longest
// wait, and a waiting hook asks again once brabo is back. HTTPServer's
// Shutdown calls it.
func (s *Server) Stop() { s.stopCh(); s.stopOnce.Do(func() { close(s.stopped) }) }

// stopCh is the channel Stop closes.
func (s *Server) stopCh() <-chan struct{} {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.stopped == nil {
		s.stopped = make(chan struct{})
	}
	return s.stopped
}

// errStopping is a long-poll cut by Stop.
var errStopping = errorf(http.StatusServiceUnavailable, brabo.CodeRetry,
	"brabo is stopping: the action is as it was; ask again in a moment (Retry-After)")

func decided(a *brabo.ProposedAction) bool { return a.Status != brabo.StatusPending }

func settled(a *brabo.ProposedAction) bool { return a.Status.Settled() }

// awaitAction reads the action again on each signal of its project (the
// store's signal the wake worker listens to as well), and each second
// behind a missed signal, until done says so, wait runs out or the client
// goes away. When wait runs out it reads the row once more: a signal lost
// at the last moment must not answer "pending" for an action a human has
// decided, which a hook would turn into a deny.
func (s *Server) awaitAction(r *http.Request, a *brabo.ProposedAction, wait time.Duration, done func(*brabo.ProposedAction) bool) (*brabo.ProposedAction, error) {
	stopping := s.stopCh()
	select {
	case <-stopping:
		return a, errStopping
	default:
	}
	signal, cancel := s.Events.Subscribe(a.ProjectID)
	defer cancel()
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := false
	for {
		select {
		case <-r.Context().Done():
			return a, nil
		case <-stopping:
			return a, errStopping
		case <-timeout.C:
			last = true
		case <-signal:
		case <-tick.C:
		}
		cur, err := s.Actions.Action(r.Context(), a.ID)
		if err == nil {
			a = cur
		}
		if err != nil || done(a) || last {
			return a, err
		}
	}
}

// reportResult records the result of an action its agent ran itself: the
// proposing agent's token, once.
func (s *Server) reportResult(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r)
	// An action the caller cannot see is 404 before anything else.
	if _, err := s.visibleAction(r); err != nil {
		return err
	}
	if c.agent == nil {
		return errorf(http.StatusForbidden, brabo.CodeForbiddenRole, "only the agent that ran an action reports its result")
	}
	var in struct {
		ExitCode  *int   `json:"exitCode"`
		Output    string `json:"output"`
		Error     string `json:"error"`
		TimedOut  bool   `json:"timedOut"`
		Truncated bool   `json:"truncated"`
		// NotRun says the agent refused the call itself after brabo
		// approved it; Error is then the agent's reason.
		NotRun bool `json:"notRun"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	res := brabo.Result{Output: in.Output, Error: in.Error, TimedOut: in.TimedOut, Truncated: in.Truncated}
	if in.NotRun {
		if in.ExitCode != nil {
			return badRequest("a call its agent did not run has no exit code")
		}
		res.Code = brabo.CodeNotRun
	} else if in.ExitCode != nil {
		res.ExitCode = *in.ExitCode
	} else {
		// Some agents report a tool's output without its exit code
		// (Codex's PostToolUse): the record says so rather than a 0.
		res.Detail = map[string]string{"exitCode": "unknown"}
	}
	a, err := s.Actions.Report(r.Context(), r.PathValue("action"), c.agent, res)
	if err != nil {
		return err
	}
	s.withText(r.Context(), a)
	writeJSON(w, http.StatusOK, a)
	return nil
}

// abandonAction records that the agent that proposed a pending external
// action stopped waiting for it (pipeline's Abandon): the proposing
// agent's token.
func (s *Server) abandonAction(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r)
	if _, err := s.visibleAction(r); err != nil {
		return err
	}
	if c.agent == nil {
		return errorf(http.StatusForbidden, brabo.CodeForbiddenRole, "only the agent that waits for an action abandons it")
	}
	var in struct {
		Reason string `json:"reason"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	a, err := s.Actions.Abandon(r.Context(), r.PathValue("action"), c.agent, in.Reason)
	if err != nil {
		return err
	}
	s.withText(r.Context(), a)
	writeJSON(w, http.StatusOK, a)
	return nil
}

// putMcpTools replaces the MCP tools a maintainer maps to the developer
// role: an mcp_tool action of a mapped tool is approved by a developer, any
// other needs a maintainer (DESIGN §9, "Effective role").
func (s *Server) putMcpTools(w http.ResponseWriter, r *http.Request) error {
	p, m, err := s.memberProject(r, brabo.Maintainer, "mapping MCP tools")
	if err != nil {
		return err
	}
	var in struct {
		Tools []string `json:"tools"`
	}
	if err := s.decode(w, r, &in); err != nil {
		return err
	}
	if len(in.Tools) > 1000 {
		return badRequest("at most 1000 tools")
	}
	tools := []string{}
	for i, t := range in.Tools {
		if err := policy.CheckMcpToolPattern(t); err != nil {
			return badRequest("tools[%d] %q: %v", i, t, err)
		}
		tools = append(tools, t)
	}
	if err := s.Projects.SetMcpTools(r.Context(), p.ID, m.ID, tools); err != nil {
		return err
	}
	p.McpTools = tools
	writeJSON(w, http.StatusOK, p)
	return nil
}
