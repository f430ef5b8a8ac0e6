package procs

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"time"
)

// What a command leaves that escapes both ways of finding an action's
// processes: a descendant that cleared its environment (env -i) and left
// the process group (setsid). As a subreaper brabo inherits it when its
// parent exits, so it is one of the orphans brabo did not start. An action
// ends, and its integrity check runs, only once those have ended too.

// Orphans lists the live orphans this process inherited as a subreaper
// (its children it did not start through Start) and their descendants,
// started at or after since (clock ticks since boot, NowTicks), leaving
// out those whose environment names another action than actionID. Without
// BecomeSubreaper there are none to find: an orphan is init's.
func Orphans(actionID string, since int64) ([]Stat, error) {
	if !reaping.Load() {
		return nil, nil
	}
	list, err := all()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	mu.Lock()
	mine := map[int]bool{}
	for _, st := range list {
		if st.PPID == self && !started[st.PID] {
			mine[st.PID] = true
		}
	}
	mu.Unlock()
	for grew := true; grew; {
		grew = false
		for _, st := range list {
			if mine[st.PPID] && !mine[st.PID] {
				mine[st.PID], grew = true, true
			}
		}
	}
	var out []Stat
	for _, st := range list {
		if !mine[st.PID] || st.Start < since {
			continue
		}
		if id, ok := envValue(st.PID, EnvName); ok && id != actionID {
			continue // another action's: its own end stops it
		}
		out = append(out, st)
	}
	return out, nil
}

// EndOrphans waits up to grace for the orphans of an action (Orphans) to
// exit, then stops what is left (SIGKILL, looking again until none is
// left), and returns how many it had to stop.
func EndOrphans(ctx context.Context, actionID string, since int64, grace time.Duration) (int, error) {
	find := func() ([]Stat, error) { return Orphans(actionID, since) }
	left, err := find()
	if err != nil || len(left) == 0 {
		return 0, err
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(left) > 0 {
		select {
		case <-deadline.C:
			return stop(ctx, find, 0)
		case <-ctx.Done():
			return stop(context.Background(), find, 0)
		case <-tick.C:
		}
		if left, err = find(); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// envValue reads one variable of pid's environment.
func envValue(pid int, name string) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	prefix := []byte(name + "=")
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}
