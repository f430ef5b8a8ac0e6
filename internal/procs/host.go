package procs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
)

// BootID is the kernel's boot id (/proc/sys/kernel/random/boot_id), which
// changes at every boot; "" when it cannot be read.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Host is this machine's processes as brabo.Processes: the identity of
// this process, the liveness of other instances, and the stopping of what
// an action left.
type Host struct {
	once sync.Once
	self brabo.Instance
}

var _ brabo.Processes = (*Host)(nil)

// Self is this process: host name, boot id, pid and the pid's start time.
func (h *Host) Self() brabo.Instance {
	h.once.Do(func() {
		name, _ := os.Hostname()
		h.self = brabo.Instance{Host: name, BootID: BootID(), PID: os.Getpid(), PIDStart: StartTicks(os.Getpid())}
	})
	return h.self
}

// local reports whether a record of host and boot id names this machine
// in this boot: only then do its pids mean anything here.
func (h *Host) local(host, boot string) bool {
	self := h.Self()
	return host == self.Host && boot != "" && boot == self.BootID
}

// Alive reports whether the instance runs. On this host: the same boot, a
// live pid with the start time recorded (a lease that ran out does not
// make a live process dead: it may be paused). On another host, or a
// previous boot of this one: its lease holds at now, and never for a
// previous boot.
func (h *Host) Alive(in *brabo.Instance, now time.Time) bool {
	self := h.Self()
	if in.Host == self.Host {
		if in.BootID != self.BootID {
			return false // the machine rebooted since: nothing of it runs
		}
		st, err := ReadStat(in.PID)
		return err == nil && !st.Gone() && st.Start == in.PIDStart
	}
	return now.Before(in.LeaseUntil)
}

// StopAction stops the action's processes left on this host (Stop: TERM,
// then KILL after grace), and nothing when the record names another host
// or boot, where its pids would name unrelated processes. Then, for a
// record of this host (any boot: a temp folder on disk outlives a
// reboot), it removes the private temp folders its commands had
// (RemoveTemp), which a server killed while they ran left behind.
func (h *Host) StopAction(ctx context.Context, r *brabo.RunningAction, grace time.Duration) (int, error) {
	n := 0
	if h.local(r.Host, r.BootID) {
		var err error
		if n, err = Stop(ctx, Target{ActionID: r.ActionID, PGID: r.PGID, LeaderStart: r.LeaderStart}, grace); err != nil {
			return n, err
		}
	}
	if r.Host == h.Self().Host {
		if _, err := RemoveTemp(r.ActionID); err != nil {
			return n, fmt.Errorf("the temp folders of action %s: %w", r.ActionID, err)
		}
	}
	return n, nil
}

// tempPrefix starts the name of every private temp folder an action's
// command gets (executor: its TMPDIR), followed by the action's id when
// that id is a plain name, so that what a dead server left can be found
// by the action.
const tempPrefix = "brabo-action-"

// TempPattern is the os.MkdirTemp pattern of the private temp folder of
// action id's command: "brabo-action-<id>-*", or "brabo-action-*" for an
// id that is not made only of letters, digits and '_' (brabo's ids are;
// with no '-' in an id, one id's pattern never matches another's folder).
func TempPattern(id string) string {
	if id == "" || strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}) >= 0 {
		return tempPrefix + "*"
	}
	return tempPrefix + id + "-*"
}

// RemoveTemp removes the private temp folders of action id's commands
// left in this process's temp folder (os.TempDir) and returns how many it
// removed. Only a folder named by TempPattern(id) is touched, and only
// when the id is a plain name.
func RemoveTemp(id string) (int, error) {
	pattern := TempPattern(id)
	if pattern == tempPrefix+"*" {
		return 0, nil
	}
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), pattern))
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue // not a folder MkdirTemp made: leave it
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
