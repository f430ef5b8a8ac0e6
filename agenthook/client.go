package agenthook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo"
)

// client talks to brabo's API with a hook token: propose, wait, report.
type client struct {
	server string
	token  string
	http   *http.Client
	// poll bounds one long-poll of a wait (maxPoll when 0); onPoll is
	// called before each.
	poll   time.Duration
	onPoll func()
}

func newClient(server, token string) *client {
	return &client{server: strings.TrimSuffix(server, "/"), token: token,
		// No proxy: the hook talks to the brabo the user installed, and a
		// proxy variable in the agent's environment must not reroute it.
		http: &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}}
}

// apiError is brabo's {code, message} answer.
type apiError struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("brabo answered %d %s: %s", e.Status, e.Code, e.Message)
}

// do sends one request with a deadline and decodes the answer into out.
func (c *client) do(ctx context.Context, method, path string, body, out any, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("brabo at %s cannot be reached: %w", c.server, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("reading brabo's answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(raw))
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("brabo's answer is not an action: %w", err)
	}
	return nil
}

// proposal is what the hook proposes.
type proposal struct {
	Type      brabo.ActionType `json:"type"`
	Payload   brabo.Payload    `json:"payload"`
	Execution *brabo.Execution `json:"execution"`
}

// effectivePermissions asks brabo for the permissions.json it decides the
// project's actions with now; ok is false when it cannot say.
func (c *client) effectivePermissions(ctx context.Context, project string) (content []byte, ok bool) {
	var out struct {
		Hash    string `json:"hash"`
		Content string `json:"content"`
	}
	if err := c.do(ctx, "GET", "/v1/projects/"+project+"/permissions/effective", nil, &out, 10*time.Second); err != nil || out.Hash == "" {
		return nil, false
	}
	return []byte(out.Content), true
}

func (c *client) propose(ctx context.Context, project string, p proposal) (*brabo.ProposedAction, error) {
	a := &brabo.ProposedAction{}
	if err := c.do(ctx, "POST", "/v1/projects/"+project+"/actions", p, a, 15*time.Second); err != nil {
		return nil, err
	}
	return a, nil
}

// maxPoll is one long-poll's share of a wait: brabo answers at most after
// 60 s, so a longer wait is several polls.
const maxPoll = 50 * time.Second

// Back-off of a wait whose brabo is away (restarting): the first retry
// after minBackoff, doubling up to maxBackoff.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// wait long-polls until the action is decided or the deadline passes; an
// action still pending then is returned as such. A brabo that stops
// (503 "retry") or cannot be reached (restarting) is asked again, with
// back-off, until the deadline: the decision taken after a restart
// reaches the hook. A deadline that passes while brabo is away returns
// the last error.
//
// A wait that ends with the action still pending tells brabo the agent
// gave up (abandon): at the deadline, when the agent stops the hook
// (SIGTERM, SIGINT, SIGHUP), or when ctx ends (the MCP call cancelled).
func (c *client) wait(ctx context.Context, a *brabo.ProposedAction, deadline time.Time) (out *brabo.ProposedAction, err error) {
	if a.Status != brabo.StatusPending {
		return a, nil // decided at once: nothing to wait for
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(stop)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-stop:
			cancel(errStopped)
		case <-ctx.Done():
		}
	}()
	defer func() {
		if out != nil && out.Status == brabo.StatusPending {
			why := "no one decided before the hook's deadline"
			if cause := context.Cause(ctx); cause != nil {
				why, err = cause.Error(), cause
			}
			if ab := c.abandon(out.ID, why); ab != nil {
				out = ab
			}
		}
	}()
	backoff := minBackoff
	var away error
	for a.Status == brabo.StatusPending {
		left := time.Until(deadline)
		if left <= 0 {
			return a, away
		}
		if away != nil {
			select {
			case <-ctx.Done():
				return a, context.Cause(ctx)
			case <-time.After(min(backoff, left)):
			}
			backoff = min(2*backoff, maxBackoff)
			if left = time.Until(deadline); left <= 0 {
				return a, away
			}
		}
		poll := min(left, maxPoll)
		if c.poll > 0 {
			poll = min(poll, c.poll)
		}
		if c.onPoll != nil {
			c.onPoll()
		}
		next := &brabo.ProposedAction{}
		path := fmt.Sprintf("/v1/actions/%s/wait?timeout=%dms", a.ID, poll.Milliseconds())
		err := c.do(ctx, "GET", path, nil, next, poll+15*time.Second)
		if err != nil {
			if !retryable(err) || ctx.Err() != nil {
				return a, err
			}
			away = err
			continue
		}
		away, backoff = nil, minBackoff
		a = next
	}
	return a, nil
}

// errStopped is a hook its agent stopped while it waited.
var errStopped = errors.New("the agent stopped the hook")

// abandon tells brabo the agent no longer waits for the pending action
// (best effort, within a few seconds: the agent is going on). It returns
// the action as brabo answered, nil when it did not: an action decided
// meanwhile answers 409, and the deny the hook gives stands.
func (c *client) abandon(id, why string) *brabo.ProposedAction {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	a := &brabo.ProposedAction{}
	if c.do(ctx, "POST", "/v1/actions/"+id+"/abandon", map[string]string{"reason": why}, a, 3*time.Second) != nil {
		return nil
	}
	return a
}

// retryable is an error of a brabo that is away for a moment: stopping
// (503 "retry"), behind a proxy that lost it (502, 504), or not answering
// at all (a restart).
func retryable(err error) bool {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status == http.StatusServiceUnavailable || ae.Status == http.StatusBadGateway || ae.Status == http.StatusGatewayTimeout
	}
	return true
}

// report sends what happened to an action the agent ran. exitCode nil is
// an exit code the agent did not say.
func (c *client) report(ctx context.Context, actionID string, exitCode *int, output, errText string) error {
	body := map[string]any{"output": output, "error": errText}
	if exitCode != nil {
		body["exitCode"] = *exitCode
	}
	return c.do(ctx, "POST", "/v1/actions/"+actionID+"/result", body, nil, 15*time.Second)
}
