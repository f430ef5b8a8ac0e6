package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
)

// limits are serve's bounds on what one agent, project or member may hold
// at once, and how long a web login lasts (docs/operations.md).
type limits struct {
	maxPending, maxRunning, maxStreams int
	sessionTTL                         time.Duration
	// waitCap is the inactivity cap of a project that sets none.
	waitCap time.Duration
	// bad holds an environment variable that could not be read: the
	// flag's default is then wrong, and check says so.
	bad error
}

func (l *limits) register(fl *flag.FlagSet) {
	fl.IntVar(&l.maxPending, "max-pending", l.envInt("BRABO_MAX_PENDING", app.DefaultMaxPending),
		"pending actions one agent may have; past it a proposal that would wait is refused with 429 too_many_pending (env BRABO_MAX_PENDING)")
	fl.IntVar(&l.maxRunning, "max-running", l.envInt("BRABO_MAX_RUNNING", app.DefaultMaxRunning),
		"commands one project runs at once; the next ones wait their turn (env BRABO_MAX_RUNNING)")
	fl.IntVar(&l.maxStreams, "max-streams", l.envInt("BRABO_MAX_STREAMS", app.DefaultMaxStreams),
		"event streams (API and web page) one member may hold open; past it 429 too_many_streams (env BRABO_MAX_STREAMS)")
	fl.DurationVar(&l.sessionTTL, "session-ttl", l.envDuration("BRABO_SESSION_TTL", app.DefaultSessionTTL),
		"how long a web login lasts (env BRABO_SESSION_TTL)")
	l.registerWaitCap(fl)
}

// registerPipeline registers the limits the pipeline keeps (the pending
// and running caps) and --wait-cap: what a process that runs agents but
// serves no API (brabo agent) enforces as brabo serve does.
func (l *limits) registerPipeline(fl *flag.FlagSet) {
	fl.IntVar(&l.maxPending, "max-pending", l.envInt("BRABO_MAX_PENDING", app.DefaultMaxPending),
		"pending actions one agent may have; past it a proposal that would wait is refused (env BRABO_MAX_PENDING)")
	fl.IntVar(&l.maxRunning, "max-running", l.envInt("BRABO_MAX_RUNNING", app.DefaultMaxRunning),
		"commands one project runs at once; the next ones wait their turn (env BRABO_MAX_RUNNING)")
	l.registerWaitCap(fl)
	l.maxStreams, l.sessionTTL = app.DefaultMaxStreams, app.DefaultSessionTTL
}

// apply puts the limits in the wiring's configuration.
func (l *limits) apply(cfg *app.Config) {
	cfg.MaxPending, cfg.MaxRunning, cfg.MaxStreams, cfg.SessionTTL, cfg.WaitCap = l.maxPending, l.maxRunning, l.maxStreams, l.sessionTTL, l.waitCap
}

// registerWaitCap registers --wait-cap alone (brabo agent runs agents but
// serves no API).
func (l *limits) registerWaitCap(fl *flag.FlagSet) {
	fl.DurationVar(&l.waitCap, "wait-cap", l.envDuration("BRABO_WAIT_CAP", brabo.DefaultWaitCap),
		"how long a dev agent, a gate area or a dev-lead turn waits for a decision before it is blocked with origin policy, "+
			"in a project that sets no cap of its own (env BRABO_WAIT_CAP)")
}

func (l *limits) envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		l.bad = fmt.Errorf("%s=%q: want a whole number", name, v)
		return def
	}
	return n
}

func (l *limits) envDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		l.bad = fmt.Errorf("%s=%q: want a duration such as 12h or 30m", name, v)
		return def
	}
	return d
}

// check refuses values that would turn a limit off or make it meaningless.
func (l *limits) check() error {
	if l.bad != nil {
		return l.bad
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"--max-pending", l.maxPending}, {"--max-running", l.maxRunning}, {"--max-streams", l.maxStreams}} {
		if f.v < 1 {
			return fmt.Errorf("%s %d: want 1 or more", f.name, f.v)
		}
	}
	if l.sessionTTL < time.Minute {
		return fmt.Errorf("--session-ttl %s: want a minute or more", l.sessionTTL)
	}
	return l.checkWaitCap()
}

func (l *limits) checkWaitCap() error {
	if l.bad != nil {
		return l.bad
	}
	if l.waitCap < time.Second {
		return fmt.Errorf("--wait-cap %s: want a second or more", l.waitCap)
	}
	return nil
}
