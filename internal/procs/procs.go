// Package procs finds and stops the processes of an action on this host,
// and keeps brabo the parent of everything its commands start (a child
// subreaper that reaps what it inherits). It reads /proc: Linux only.
//
// A process belongs to an action when its environment carries
// BRABO_ACTION_ID=<id> (every process brabo starts for an action does, and
// its descendants inherit it, whatever session or group they move to), or
// when it is in the process group brabo started the action's command in,
// as long as that group is still the one recorded: its leader, when alive,
// has the recorded start time. A pid, a group id or an environment is
// only trusted on the same host and boot as the record (the caller
// checks), so a recycled pid of an unrelated process is never signalled.
package procs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// EnvName is the variable that names the action a process runs for.
const EnvName = "BRABO_ACTION_ID"

// Stat is what brabo reads of one process's /proc/<pid>/stat.
type Stat struct {
	PID, PPID, PGID int
	// State is the one-letter state: 'Z' (zombie) and 'X' (dead) are gone.
	State byte
	// Start is the start time in clock ticks since boot.
	Start int64
}

// Gone reports whether the process has exited (a zombie waits only to be
// reaped).
func (s Stat) Gone() bool { return s.State == 'Z' || s.State == 'X' }

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	var buf [1024]byte
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if err != nil {
		return Stat{}, err
	}
	return parseStat(pid, b)
}

// readSmall reads a small file into buf with three system calls and no
// allocation (os.ReadFile's stat and growing buffer cost more than the
// read, and a scan reads one file per process); a file longer than buf is
// cut.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

// parseStat reads the fields after the command name, which is in
// parentheses and may itself hold spaces and parentheses: the last ')'
// ends it.
func parseStat(pid int, b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Stat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); ppid is field 4, pgrp 5, starttime 22.
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	st := Stat{PID: pid, State: f[0][0]}
	var err1, err2, err3 error
	st.PPID, err1 = strconv.Atoi(f[1])
	st.PGID, err2 = strconv.Atoi(f[2])
	st.Start, err3 = strconv.ParseInt(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

// StartTicks is the start time of pid in clock ticks since boot, 0 when
// it cannot be read.
func StartTicks(pid int) int64 {
	st, err := ReadStat(pid)
	if err != nil {
		return 0
	}
	return st.Start
}

// all lists the live processes (zombies left out), this one excluded.
func all() ([]Stat, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	out := make([]Stat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, err := ReadStat(pid)
		if err != nil || st.Gone() {
			continue // exited meanwhile
		}
		out = append(out, st)
	}
	return out, nil
}

// hasEnv reports whether pid's environment holds the entry kv exactly.
// A process of another user (unreadable) does not.
func hasEnv(pid int, kv []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return bytes.Equal(b, kv)
		}
		if bytes.Equal(b[:i], kv) {
			return true
		}
		b = b[i+1:]
	}
	return false
}

// Target names the processes of one action.
type Target struct {
	// ActionID matches the processes whose environment carries
	// BRABO_ACTION_ID=<ActionID>; "" matches none that way.
	ActionID string
	// PGID and LeaderStart are the process group brabo started the
	// command in and its leader's start time; 0 for none. The group
	// counts only while it is still that group: its leader is gone, or
	// alive with that start time.
	PGID        int
	LeaderStart int64
	// Since, when set, is a time in clock ticks since boot (NowTicks)
	// before the action began: a process started earlier is none of its
	// own, and its environment is not read (the scan's dearest part).
	Since int64
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's start time: 100
// on every Linux ABI Go supports.
const clockTicks = 100

// NowTicks is the time since boot in clock ticks, the unit of a
// process's start time; 0 when the clock cannot be read.
func NowTicks() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return ts.Sec*clockTicks + ts.Nsec/(1e9/clockTicks)
}

// Find lists the live processes of the target.
func Find(t Target) ([]Stat, error) {
	list, err := all()
	if err != nil {
		return nil, err
	}
	group := t.PGID > 1
	if group {
		for _, st := range list {
			if st.PID == t.PGID && t.LeaderStart != 0 && st.Start != t.LeaderStart {
				group = false // the group id was recycled: not ours
			}
		}
	}
	var kv []byte
	if t.ActionID != "" {
		kv = []byte(EnvName + "=" + t.ActionID)
	}
	var out []Stat
	for _, st := range list {
		if st.Start < t.Since {
			continue
		}
		if (group && st.PGID == t.PGID) || (kv != nil && hasEnv(st.PID, kv)) {
			out = append(out, st)
		}
	}
	return out, nil
}

// Stop signals every process of the target: SIGTERM, then, to what is
// still alive after grace (or at once when grace is 0), SIGKILL, looking
// again until none is left (a process that forks while it is killed
// leaves children with the same environment). It returns how many distinct
// processes it signalled. ctx bounds the whole; what is left when it ends
// has had a SIGKILL.
func Stop(ctx context.Context, t Target, grace time.Duration) (int, error) {
	return stop(ctx, func() ([]Stat, error) { return Find(t) }, grace)
}

// Descendants lists the live descendants of this process: its children,
// theirs, and, as a subreaper, the orphans it inherited and theirs.
func Descendants() ([]Stat, error) {
	list, err := all()
	if err != nil {
		return nil, err
	}
	mine := map[int]bool{os.Getpid(): true}
	var out []Stat
	for grew := true; grew; {
		grew = false
		for _, st := range list {
			if mine[st.PPID] && !mine[st.PID] {
				mine[st.PID], grew = true, true
				out = append(out, st)
			}
		}
	}
	return out, nil
}

// StopDescendants signals every descendant of this process as Stop does:
// the last step of a graceful stop, for what a command left that carries
// neither its group nor its BRABO_ACTION_ID (it ran `env -i setsid …`)
// but, brabo being a subreaper, is still brabo's.
func StopDescendants(ctx context.Context, grace time.Duration) (int, error) {
	return stop(ctx, Descendants, grace)
}

// stop is Stop over the processes find lists.
func stop(ctx context.Context, find func() ([]Stat, error), grace time.Duration) (int, error) {
	seen := map[int]bool{}
	signal := func(sig syscall.Signal) (int, error) {
		list, err := find()
		for _, st := range list {
			seen[st.PID] = true
			_ = syscall.Kill(st.PID, sig)
		}
		return len(list), err
	}
	if grace > 0 {
		n, err := signal(syscall.SIGTERM)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			deadline := time.NewTimer(grace)
			tick := time.NewTicker(20 * time.Millisecond)
		wait:
			for {
				select {
				case <-deadline.C:
					break wait
				case <-ctx.Done():
					break wait
				case <-tick.C:
					if left, err := find(); err == nil && len(left) == 0 {
						break wait
					}
				}
			}
			deadline.Stop()
			tick.Stop()
		}
	}
	// A bounded number of rounds: a fork bomb that outruns SIGKILL is
	// still stopped as far as the rounds go, and nothing hangs.
	for round := 0; round < 50; round++ {
		n, err := signal(syscall.SIGKILL)
		if err != nil {
			return len(seen), err
		}
		if n == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return len(seen), nil
}
