package procs

import (
	"context"
	"os"
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
// or boot, where its pids would name unrelated processes.
func (h *Host) StopAction(ctx context.Context, r *brabo.RunningAction, grace time.Duration) (int, error) {
	if !h.local(r.Host, r.BootID) {
		return 0, nil
	}
	return Stop(ctx, Target{ActionID: r.ActionID, PGID: r.PGID, LeaderStart: r.LeaderStart}, grace)
}
