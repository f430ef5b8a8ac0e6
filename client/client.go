// Package client is brabo's one /v1 API client: the agents' hook
// (agenthook, and brabo mcp through it) and every command of brabo that
// talks to a running server (queue, show, approve, deny, log, agents,
// init, install, permissions, project) call the API through it, so one
// place knows the paths, the bodies, the timeouts and the error answer.
//
// It imports the root package and the standard library only
// (imports_test.go): the hook that links it starts fast.
//
// Every failure is typed: an answer of the API is an *Error carrying the
// API's stable code (brabo.Code) and its HTTP status; a server that could
// not be reached is an *UnreachableError. Callers branch on those, never on
// an error's text.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
)

// DefaultTimeout bounds one request whose caller gives no deadline of its
// own: the API answers every call but a long-poll at once.
const DefaultTimeout = 30 * time.Second

// maxAnswer is the largest answer read: a queue of 1000 actions with
// their previews stays well under it.
const maxAnswer = 16 << 20

// Client calls one brabo server with one bearer token. It is safe for
// concurrent use.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns the client of the server at base (a URL such as
// http://127.0.0.1:8080; a trailing slash is dropped) with token.
//
// It uses no proxy: the client talks to the brabo its user named, and a
// proxy variable in an agent's environment must not reroute it (nor see
// its token).
func New(base, token string) *Client {
	return &Client{base: strings.TrimSuffix(base, "/"), token: token,
		http: &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}}
}

// Base is the server's base URL, as requests are sent to it.
func (c *Client) Base() string { return c.base }

// Token is the bearer token the client sends.
func (c *Client) Token() string { return c.token }

// Error is an error answer of the API: its HTTP status, and the stable
// code and the sentence of its {code, message} body. Code is empty only
// for an answer that is not brabo's (a proxy's 502), whose body is then
// the message.
type Error struct {
	Status  int
	Code    brabo.Code
	Message string
}

// Error says the code and the message, the code first: what a script or
// a person matches on.
func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d %s: %s", e.Status, http.StatusText(e.Status), brabo.Printable(e.Message))
	}
	return string(e.Code) + ": " + brabo.Printable(e.Message)
}

// UnreachableError is a request that got no answer: the server is not
// running at Base, or the connection broke.
type UnreachableError struct {
	Base string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("brabo at %s cannot be reached: %v", e.Base, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// CodeOf is the API's code of err, "" when err is not an API answer.
func CodeOf(err error) brabo.Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// StatusOf is the HTTP status of err's API answer, 0 when err is not one.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// Do sends one request and decodes a 2xx answer into out (nil: the
// answer is dropped; a *json.RawMessage keeps it as it came). body, when
// not nil, is sent as JSON. within bounds the request (DefaultTimeout
// when 0). It is the one place a request is made; the typed methods call
// it.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, within time.Duration) error {
	if within <= 0 {
		within = DefaultTimeout
	}
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
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return &UnreachableError{Base: c.base, Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &UnreachableError{Base: c.base, Err: fmt.Errorf("reading the answer: %w", err)}
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		var body struct {
			Code    brabo.Code `json:"code"`
			Message string     `json:"message"`
		}
		if json.Unmarshal(raw, &body) == nil && body.Code != "" {
			e.Code, e.Message = body.Code, body.Message
		} else {
			e.Message = strings.TrimSpace(string(raw))
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not what the API gives: %w", method, path, err)
	}
	return nil
}
