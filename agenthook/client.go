package agenthook

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
)

// The hook reaches brabo only through the one API client (package
// client): propose, wait, report, and the install's agent and token
// calls. What is the hook's own is here: a wait its agent can stop.

// newClient is the API client of a hook's configuration.
func newClient(server, token string) *client.Client { return client.New(server, token) }

// errStopped is a hook its agent stopped while it waited.
var errStopped = errors.New("the agent stopped the hook")

// waitStoppable is client.Wait that the agent's stop (SIGTERM, SIGINT,
// SIGHUP) also ends: the action, still pending, is abandoned with
// errStopped as its reason, as at the hook's deadline.
func waitStoppable(ctx context.Context, c *client.Client, a *brabo.ProposedAction, deadline time.Time, poll time.Duration, onPoll func()) (*brabo.ProposedAction, error) {
	if a.Status != brabo.StatusPending {
		return a, nil
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
	return c.Wait(ctx, a, client.WaitOptions{Deadline: deadline, Poll: poll, OnPoll: onPoll,
		GiveUp: "no one decided before the hook's deadline"})
}
