package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/brabo-dev/brabo"
)

// execPoll is how often Exec asks the engine whether the exec's process
// still runs, so that a process it left holding the output cannot keep
// the call waiting.
const execPoll = 100 * time.Millisecond

// Exec runs x in its running container through the Engine API's exec
// (ExecCreate, ExecAttach, ExecInspect) and returns the process's exit
// code. Output goes, stdout and stderr together, to x.Output while the
// stream is open; once the process has exited Exec waits x.Linger more
// for the stream to close (something the process left may still hold
// it), then stops reading.
//
// When ctx ends first Exec stops reading and returns ctx's error at once:
// the engine has no call that kills an exec, so the process may still
// run; the caller ends it with a second exec (executor/container.go). A
// container that does not exist or does not run is brabo.ErrNoContainer.
func (e *Engine) Exec(ctx context.Context, x brabo.ContainerExec) (int, error) {
	if x.Container == "" || len(x.Cmd) == 0 {
		return -1, errors.New("docker: an exec needs a container and a command")
	}
	created, err := e.c.ExecCreate(ctx, x.Container, client.ExecCreateOptions{User: x.User, WorkingDir: x.Dir,
		Env: x.Env, Cmd: x.Cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return -1, e.wrapExec(x.Container, err)
	}
	att, err := e.c.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return -1, e.wrapExec(x.Container, err)
	}
	defer att.Close()
	out := x.Output
	if out == nil {
		out = io.Discard
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = stdcopy.StdCopy(out, out, att.Reader)
	}()
	linger := x.Linger
	if linger <= 0 {
		linger = 50 * time.Millisecond
	}
	tick := time.NewTicker(execPoll)
	defer tick.Stop()
	var exited time.Time
wait:
	for {
		select {
		case <-ctx.Done():
			att.Close()
			<-copied
			return -1, ctx.Err()
		case <-copied:
			break wait
		case <-tick.C:
			if exited.IsZero() {
				if st, err := e.c.ExecInspect(ctx, created.ID, client.ExecInspectOptions{}); err == nil && !st.Running {
					exited = time.Now()
				}
			} else if time.Since(exited) >= linger {
				att.Close()
				<-copied
				break wait
			}
		}
	}
	// The stream is over; the process has exited or is about to.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for {
		st, err := e.c.ExecInspect(ictx, created.ID, client.ExecInspectOptions{})
		if err != nil {
			return -1, e.wrapExec(x.Container, err)
		}
		if !st.Running {
			return st.ExitCode, nil
		}
		select {
		case <-ictx.Done():
			return -1, fmt.Errorf("exec in %s: the stream closed but the engine still says it runs", x.Container)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wrapExec names the container of a failed exec; a container the engine
// has not, or that does not run, is brabo.ErrNoContainer.
func (e *Engine) wrapExec(name string, err error) error {
	if cerrdefs.IsNotFound(err) || (cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "not running")) ||
		strings.Contains(err.Error(), "container state improper") {
		return fmt.Errorf("exec in %s: %v: %w", name, err, brabo.ErrNoContainer)
	}
	return fmt.Errorf("exec in %s: %w", name, err)
}
