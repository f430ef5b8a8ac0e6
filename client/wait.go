package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/brabo-dev/brabo"
)

// MaxPoll is one long-poll's share of a wait: brabo answers a wait at
// most after 60 s, so a longer wait is several polls.
const MaxPoll = 50 * time.Second

// Back-off of a wait whose brabo is away (restarting): the first retry
// after minBackoff, doubling up to maxBackoff.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// WaitOptions shape a wait.
type WaitOptions struct {
	// Deadline is when the wait gives up.
	Deadline time.Time
	// Poll bounds one long-poll (MaxPoll when 0).
	Poll time.Duration
	// OnPoll, when set, is called before each long-poll.
	OnPoll func()
	// GiveUp is the reason told to brabo when the deadline passes with
	// the action still pending; an ended ctx tells its cause instead.
	GiveUp string
}

// Wait long-polls until the action is decided or opt.Deadline passes; an
// action still pending then is returned as such. A brabo that stops (503
// retry) or cannot be reached (restarting) is asked again, with back-off,
// until the deadline: the decision taken after a restart reaches the
// waiter. A deadline that passes while brabo is away returns the last
// error.
//
// A wait that ends with the action still pending tells brabo the waiter
// gave up (Abandon, best effort): at the deadline, or when ctx ends (with
// its cause as the reason and the error). The action is then returned as
// brabo answered the abandon.
func (c *Client) Wait(ctx context.Context, a *brabo.ProposedAction, opt WaitOptions) (out *brabo.ProposedAction, err error) {
	if a.Status != brabo.StatusPending {
		return a, nil // decided at once: nothing to wait for
	}
	defer func() {
		if out != nil && out.Status == brabo.StatusPending {
			why := opt.GiveUp
			if why == "" {
				why = "no one decided before the deadline"
			}
			if cause := context.Cause(ctx); cause != nil {
				why, err = cause.Error(), cause
			}
			actx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if ab, aerr := c.Abandon(actx, out.ID, why); aerr == nil {
				out = ab
			}
		}
	}()
	backoff := minBackoff
	var away error
	for a.Status == brabo.StatusPending {
		left := time.Until(opt.Deadline)
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
			if left = time.Until(opt.Deadline); left <= 0 {
				return a, away
			}
		}
		poll := min(left, MaxPoll)
		if opt.Poll > 0 {
			poll = min(poll, opt.Poll)
		}
		if opt.OnPoll != nil {
			opt.OnPoll()
		}
		next := &brabo.ProposedAction{}
		path := fmt.Sprintf("/v1/actions/%s/wait?timeout=%dms", url.PathEscape(a.ID), poll.Milliseconds())
		err := c.Do(ctx, "GET", path, nil, next, poll+15*time.Second)
		if err != nil {
			if !Retryable(err) || ctx.Err() != nil {
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

// Retryable reports whether err is of a brabo that is away for a moment:
// stopping (503 retry), behind a proxy that lost it (502, 504), or not
// answering at all (a restart). Any other answer of the API is final.
func Retryable(err error) bool {
	switch StatusOf(err) {
	case 0, http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}
