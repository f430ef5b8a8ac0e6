package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo/internal/procs"
	"golang.org/x/sys/unix"
)

// direct is what Start needs to do the root helper's work in this
// process (Main's steps 1 to 4) rather than in a helper it starts: bwrap
// and its arguments before staging, the uid and gid to drop to, the
// folders to map with their user namespaces, and how many of the
// Prepared's ExtraFiles bwrap gets (the user namespaces after them stay
// here).
type direct struct {
	bwrap    string
	bargs    []string
	uid, gid int
	maps     []mapping
	files    int
}

// mapping is one folder the sandbox maps to its uid, with the user
// namespace that maps its owner.
type mapping struct {
	path   string
	userns *os.File
}

// Start starts cmd, to which Apply was applied, through procs.Start. Under
// root it starts no helper: the goroutine locks itself to a thread of its
// own for good, gives that thread a private mount namespace
// (unshare(CLONE_NEWNS)), maps the writable folders and stages the bind
// sources there as the helper does (idmap, stage), sets no_new_privs on
// it and starts bwrap from it as the sandbox's uid and gid with no
// supplementary groups (and so no capabilities); the thread waits for
// bwrap to exit and ends with its goroutine, and nothing else of this
// process ever sees its mounts. The result is the helper's — bwrap as the
// unprivileged user, in a mount namespace where the folders are mapped —
// one process start sooner (docs/PERFORMANCE.md). A command that could
// not be set up does not start, and the error (an *Error) says why.
// cmd.SysProcAttr.Pdeathsig must be unset: it would follow the setup
// thread, not the caller's.
func (p *Prepared) Start(cmd *exec.Cmd) error {
	d := p.direct
	if d == nil {
		return procs.Start(cmd)
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0 {
		return &Error{Reason: "a sandboxed command cannot have a parent-death signal: it would follow the thread that sets the sandbox up, not the caller's"}
	}
	if len(cmd.ExtraFiles) < len(p.ExtraFiles) {
		return &Error{Reason: "Start needs a command to which Apply was applied"}
	}
	cmd.Path = d.bwrap
	cmd.ExtraFiles = append(cmd.ExtraFiles[:len(cmd.ExtraFiles)-len(p.ExtraFiles)], p.ExtraFiles[:d.files]...)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Cloneflags &^= syscall.CLONE_NEWNS
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(d.uid), Gid: uint32(d.gid), Groups: []uint32{}}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			d.onThread(cmd, errc)
			return
		}
		// The process's main thread, which the runtime keeps (parked
		// for good) rather than ends when its locked goroutine returns:
		// it would stay in the private mount namespace, and /proc/self
		// shows that thread's. Held here, it cannot take the work.
		c := make(chan error, 1)
		go d.onThread(cmd, c)
		err := <-c
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// onThread runs start on the calling goroutine, locked to its thread and
// never unlocked: the runtime ends a locked thread whose goroutine
// returns, so no other goroutine ever runs in its mount namespace, and
// the threads the runtime starts later are cloned from a thread of its own
// (not a locked one). It sends start's result on errc, and then, when
// bwrap started, stays until bwrap has exited: the kernel sends a
// parent-death signal (what --die-with-parent asks for, in whichever of
// bwrap's processes a version of bwrap sets it) when the *thread* that
// forked the process ends, so this thread lives as long as the command,
// and ends with brabo.
func (d *direct) onThread(cmd *exec.Cmd, errc chan<- error) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		runtime.UnlockOSThread()
		errc <- &Error{Reason: "the sandbox's setup landed on the process's main thread"}
		return
	}
	// Opened before the result is sent: the caller may reap bwrap at
	// once, and a pidfd of a reaped pid would name nothing (or another
	// process).
	err := d.start(cmd)
	pidfd := -1
	if err == nil {
		pidfd, _ = unix.PidfdOpen(cmd.Process.Pid, 0)
	}
	errc <- err
	if err != nil {
		return
	}
	if pidfd < 0 {
		// No pidfd (a kernel before 5.3): bwrap's start time tells it
		// from a later process of the same pid.
		pid := cmd.Process.Pid
		start := procs.StartTicks(pid)
		for {
			if st, err := procs.ReadStat(pid); err != nil || st.Gone() || st.Start != start {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	defer unix.Close(pidfd)
	for {
		// A pidfd polls readable once its process has exited.
		_, perr := unix.Poll([]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}, -1)
		if perr != unix.EINTR {
			return
		}
	}
}

// start is Start's work on the locked thread: Main's steps, then the
// start of bwrap, and nothing else (no file of this process is written
// from here: /tmp is the staging tmpfs).
func (d *direct) start(cmd *exec.Cmd) error {
	fail := func(format string, a ...any) error { return &Error{Reason: fmt.Sprintf(format, a...)} }
	before, err := os.Readlink("/proc/thread-self/ns/mnt")
	if err != nil {
		return fail("reading the thread's mount namespace: %v", err)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
		return fail("a mount namespace of its own: %v", err)
	}
	// What follows mounts over /tmp and the scope root: never in the
	// mount namespace this process had (the host's), whatever went
	// wrong above.
	if after, err := os.Readlink("/proc/thread-self/ns/mnt"); err != nil || after == before {
		return fail("the thread's mount namespace did not change (%s, %v)", before, err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("making the mounts private: %v", err)
	}
	for _, m := range d.maps {
		if err := idmap(m.path, int(m.userns.Fd())); err != nil {
			return fail("mapping %s to the sandbox's user: %v (does its file system support idmapped mounts?)", m.path, err)
		}
	}
	bargs, err := stage(d.bargs)
	if err != nil {
		return fail("%v", err)
	}
	cmd.Args = append([]string{d.bwrap}, bargs...)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	if err := procs.Start(cmd); err != nil {
		return &Error{Reason: "starting bwrap as the sandbox's user", Err: err}
	}
	return nil
}

// output runs the prepared command cmd (Apply applied) through Start and
// procs.Wait and returns its combined output, at most 4 KiB.
func (p *Prepared) output(cmd *exec.Cmd) ([]byte, error) {
	var b limitedBuf
	cmd.Stdout, cmd.Stderr = &b, &b
	err := p.Start(cmd)
	p.Started()
	if err != nil {
		return b.b, err
	}
	err = procs.Wait(cmd)
	return b.b, err
}
