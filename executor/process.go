package executor

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo/internal/procs"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// procOutcome is how a process run ended.
type procOutcome struct {
	// ExitCode is the exit status, 128+signal for a process killed by a
	// signal (as a shell reports it), -1 when it is unknown.
	ExitCode int
	// Interrupted is true when ctx ended before the process did; the whole
	// process group was killed.
	Interrupted bool
}

// runProc runs name with args in dir, in a session and process group of its
// own, with stdin empty (/dev/null), stdout and stderr combined into out.
//
// When ctx ends, the whole group is killed with SIGKILL. When the leader
// exits, whatever it left running in its group is killed too, and so is
// every process carrying the action's BRABO_ACTION_ID (inside Execute): a
// command's run is over when it returns, and a background child must not
// outlive the timeout that bounded it, whatever group it moved to. The output is read through a pipe the executor
// owns: once the group is dead it waits at most WaitDelay for the pipe to
// close (a process that left the group may still hold it) and then stops
// reading, so nothing can hang an action.
//
// Its own session (Setsid, which also makes it a group leader) means the
// command has no controlling terminal: a program that would prompt on
// /dev/tty fails at once instead of waiting for the timeout.
//
// The error is non-nil only when the process could not be started.
func (e *Executor) runProc(ctx context.Context, dir string, env []string, out io.Writer, name string, args ...string) (procOutcome, error) {
	return e.runIn(ctx, nil, dir, env, out, out, name, args...)
}

// runIn is runProc, in the sandbox prep when it is set (its program,
// arguments and environment replace name, args and env; the sandbox sets
// the folder), with stdout and stderr written to their own writers: the
// same writer gets both through one pipe, in the order they came. A
// sandboxed command is its pid namespace: when its first process exits
// the kernel ends every other one before bwrap returns, so nothing of it
// is left when runIn returns.
func (e *Executor) runIn(ctx context.Context, prep *sandbox.Prepared, dir string, env []string, stdout, stderr io.Writer, name string, args ...string) (procOutcome, error) {
	if err := ctx.Err(); err != nil {
		return procOutcome{ExitCode: -1, Interrupted: true}, nil
	}
	outs := []io.Writer{stdout}
	if stderr != stdout {
		outs = append(outs, stderr)
	}
	var readers, writers []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	for range outs {
		pr, pw, err := os.Pipe()
		if err != nil {
			closeAll(readers)
			closeAll(writers)
			return procOutcome{ExitCode: -1}, err
		}
		readers, writers = append(readers, pr), append(writers, pw)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	// *os.Files: handed to the child as they are, no copying goroutine.
	cmd.Stdout, cmd.Stderr = writers[0], writers[len(writers)-1]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if prep != nil {
		prep.Apply(cmd)
	}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = e.opts.WaitDelay
	err := e.start(ctx, cmd, prep)
	if prep != nil {
		prep.Started()
	}
	closeAll(writers) // the child holds its own copies; EOF comes when every holder is gone
	if err != nil {
		closeAll(readers)
		if ctx.Err() != nil {
			return procOutcome{ExitCode: -1, Interrupted: true}, nil
		}
		return procOutcome{ExitCode: -1}, err
	}
	done := make(chan struct{})
	var copying sync.WaitGroup
	for i, pr := range readers {
		copying.Add(1)
		go func() {
			defer copying.Done()
			_, _ = io.Copy(outs[i], pr)
		}()
	}
	go func() {
		copying.Wait()
		close(done)
	}()

	_ = procs.Wait(cmd)
	_ = killGroup(cmd.Process.Pid)
	if prep != nil {
		// bwrap returns as its command exits; the rest of the namespace
		// ends a moment later, and nothing of it may be left when the
		// action's integrity check looks.
		prep.Wait(e.opts.WaitDelay)
	}
	select {
	case <-done:
	case <-time.After(pipeGrace):
		if r := runOf(ctx); r != nil {
			// Something still holds an output pipe: a descendant that
			// left the group (setsid, a double fork). It carries the
			// action's id and ends now, instead of holding the pipe for
			// WaitDelay. (When nothing holds it, this scan of /proc waits
			// for the end of the action.)
			_, _ = procs.Stop(context.Background(), procs.Target{ActionID: r.id, Since: r.since}, 0)
		}
		timer := time.NewTimer(e.opts.WaitDelay)
		select {
		case <-done:
		case <-timer.C:
			closeAll(readers) // unblocks the readers
			<-done
		}
		timer.Stop()
	}
	closeAll(readers)

	oc := procOutcome{ExitCode: -1}
	st := cmd.ProcessState
	if st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			oc.ExitCode = 128 + int(ws.Signal())
		} else {
			oc.ExitCode = st.ExitCode()
		}
	}
	// A process that exited on its own just as the deadline passed keeps its
	// own outcome; one that was killed (or never reaped) was interrupted.
	oc.Interrupted = ctx.Err() != nil && (st == nil || !st.Exited())
	return oc, nil
}

// pipeGrace is how long the output pipe may stay open after the group is
// dead before the executor looks for who else holds it.
const pipeGrace = 50 * time.Millisecond

// killGroup sends SIGKILL to the process group pgid. A group that is
// already gone is not an error.
func killGroup(pgid int) error {
	if pgid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
