package procs

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A child subreaper inherits every orphan among its descendants: a
// command's `setsid sh -c 'sleep 300' &` or `(sleep 300 &)` stays brabo's
// child instead of becoming init's, so brabo can find it, stop it, and reap
// it. Reaping is the delicate part: Go's os/exec waits for the children it
// started by pid, and a reaper that waited for any child (wait4(-1)) would
// steal their exit status. So every child brabo starts goes through Start
// and Wait, which register it, and the reaper only waits for the zombie
// children nobody registered: the orphans it inherited.

var (
	// starting is held for reading while a child starts and is
	// registered, and for writing while the reaper looks for zombies: a
	// child that exits before its registration is never taken for an
	// orphan.
	starting sync.RWMutex
	mu       sync.Mutex
	started  = map[int]bool{} // pids of the children started through Start, until Wait returns
	reaping  atomic.Bool
)

// Start starts cmd and registers its process as one a caller will Wait
// for, so the reaper leaves it alone. Every exec of brabo's goes through
// Start and Wait (or Run, Output).
func Start(cmd *exec.Cmd) error {
	starting.RLock()
	defer starting.RUnlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	mu.Lock()
	started[cmd.Process.Pid] = true
	mu.Unlock()
	return nil
}

// Wait waits for a command started with Start and ends its registration.
func Wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	mu.Lock()
	delete(started, cmd.Process.Pid)
	mu.Unlock()
	return err
}

// Run is cmd.Run through Start and Wait.
func Run(cmd *exec.Cmd) error {
	if err := Start(cmd); err != nil {
		return err
	}
	return Wait(cmd)
}

// BecomeSubreaper makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER) and starts reaping the orphans it inherits, for
// the life of the process. Only a process whose every exec goes through
// Start may call it (brabo serve and brabo agent): the reaper would take
// any other child's exit status.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err)
	}
	if reaping.Swap(true) {
		return nil
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	go func() {
		// SIGCHLD is the fast path; the ticker catches a coalesced
		// signal.
		tick := time.NewTicker(5 * time.Second)
		for {
			select {
			case <-sig:
			case <-tick.C:
			}
			Reap()
		}
	}()
	return nil
}

// Reap waits for every zombie child of this process that was not started
// through Start (an orphan it inherited as a subreaper), and returns how
// many it reaped.
func Reap() int {
	starting.Lock()
	defer starting.Unlock()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range ents {
		pid := 0
		for _, c := range e.Name() {
			if c < '0' || c > '9' {
				pid = -1
				break
			}
			pid = pid*10 + int(c-'0')
		}
		if pid <= 0 {
			continue
		}
		st, err := ReadStat(pid)
		if err != nil || st.PPID != self || !st.Gone() {
			continue
		}
		mu.Lock()
		mine := started[pid]
		mu.Unlock()
		if mine {
			continue // its Wait reaps it
		}
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err == nil && got == pid {
			n++
		}
	}
	return n
}
