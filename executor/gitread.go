package executor

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/internal/procs"
)

// gitReadTimeout bounds one git command of a preview: a card must not
// wait on a slow repository.
const gitReadTimeout = 10 * time.Second

// maxGitRead caps what a preview's git command may print.
const maxGitRead = 1 << 20

var _ brabo.RepoReader = (*Executor)(nil)

// GitRead runs one read-only git command for a card's preview (brabo.RepoReader)
// in dir, a folder inside the scope root (relative to it; "" is the root),
// with the environment and git safety of brabo's own git: the filtered
// environment, no hooks, no filesystem monitor, no planted bare
// repository, no pager, no signature check (log.showSignature runs gpg),
// no optional lock (git diff would refresh the index), no prompt. The
// caller passes only reading subcommands (log, rev-parse, rev-list,
// diff --numstat --no-ext-diff --no-textconv, ls-files, merge-base).
func (e *Executor) GitRead(ctx context.Context, root, dir string, args ...string) (string, int, error) {
	sc, err := newScope("preview", root)
	if err != nil {
		return "", -1, err
	}
	d, err := sc.dir("cwd", dir)
	if err != nil {
		return "", -1, err
	}
	env := procenv.Child(procenv.Drop(e.baseEnv(), gitEnvDrop...), []string{
		"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_CEILING_DIRECTORIES=" + ceilingFor(sc)[0],
	}, procenv.NoHooks)
	ctx, cancel := context.WithTimeout(ctx, min(e.opts.GitTimeout, gitReadTimeout))
	defer cancel()
	full := append([]string{"--no-pager", "-c", "core.quotepath=false", "-c", "log.showSignature=false",
		"-c", "diff.external=", "-c", "color.ui=false"}, args...)
	cmd := exec.CommandContext(ctx, e.opts.GitPath, full...)
	cmd.Dir, cmd.Env = d, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = e.opts.WaitDelay
	out := &capped{max: maxGitRead}
	cmd.Stdout = out
	err = procs.Start(cmd)
	if err == nil {
		err = procs.Wait(cmd)
	}
	if cmd.Process != nil {
		_ = killGroup(cmd.Process.Pid)
	}
	switch {
	case ctx.Err() != nil:
		return "", -1, fmt.Errorf("git %s: %w", args[0], ctx.Err())
	case cmd.ProcessState == nil:
		return "", -1, fmt.Errorf("starting %s: %w", e.opts.GitPath, err)
	}
	return out.buf.String(), cmd.ProcessState.ExitCode(), nil
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
