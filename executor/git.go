package executor

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/internal/procs"
)

// gitSession runs the git commands of one action in one directory, with one
// environment, and collects the transcript of the steps into one capped
// output.
type gitSession struct {
	e   *Executor
	ctx context.Context
	t   brabo.ActionType
	dir string
	env []string
	out *capBuf
	// pushFlags are the options of a push to the session's remote
	// (remoteFlags), in a clone of it.
	pushFlags []string

	code     int    // exit code of the last step
	timedOut bool   // a step ran out of time or ctx ended
	startErr error  // git could not be started at all
	stopped  string // the step that timed out
}

// gitEnvDrop are inherited variables that would point git at another
// repository or identity than the action's.
var gitEnvDrop = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
}

// newGit starts a session in dir for the action of req. ceiling are
// directories git must not search above (GIT_CEILING_DIRECTORIES): the
// parent of the scope root, so that a root that is not itself a
// repository never lets git act on a repository around it. extra are
// further "NAME=value" variables.
//
// The environment is the executor's filtered one (procenv), never the
// server's, without any inherited GIT_* variable and without user or
// system configuration (procenv.OwnGit): a hook runs with it. It carries BRABO_ACTION_ID, so that
// whatever a hook leaves running is found and stopped with its action, and
// git's safety configuration; the repository's hooks are off
// (core.hooksPath=/dev/null) unless the project's maintainer turned them
// on (Project.GitHooks): a hook is code the agent may have written.
func (e *Executor) newGit(ctx context.Context, t brabo.ActionType, req brabo.ExecRequest, dir string, ceiling []string, extra ...string) *gitSession {
	set := append([]string{
		"GIT_CEILING_DIRECTORIES=" + strings.Join(ceiling, ":"),
		"BRABO_ACTION_ID=" + req.Action.ID,
	}, extra...)
	var git []procenv.Config
	if req.Project == nil || !req.Project.GitHooks {
		git = append(git, procenv.NoHooks)
	}
	env := procenv.OwnGit(e.baseEnv(), set, git...)
	return &gitSession{e: e, ctx: ctx, t: t, dir: dir, env: env, out: newCapBuf(e.opts.MaxOutputBytes)}
}

// ceilingFor returns the parents of the scope root, as given and resolved.
func ceilingFor(sc *scope) []string {
	c := []string{filepath.Dir(sc.lexical)}
	if r := filepath.Dir(sc.resolved); r != c[0] {
		c = append(c, r)
	}
	return c
}

// step runs one git command whose transcript belongs in the Result, with
// GitTimeout. It returns the exit code; -1 when git did not run or was
// interrupted (see startErr and timedOut). Once a step has failed that way,
// later steps do not run.
func (g *gitSession) step(args ...string) int {
	if g.startErr != nil || g.timedOut {
		return -1
	}
	fmt.Fprintf(g.out, "$ git %s\n", displayArgs(args))
	ctx, cancel := context.WithTimeout(g.ctx, g.e.opts.GitTimeout)
	defer cancel()
	oc, err := g.e.runProc(ctx, g.dir, g.env, g.out, g.e.opts.GitPath, args...)
	g.code = oc.ExitCode
	switch {
	case err != nil:
		g.startErr = fmt.Errorf("%s: starting %s: %w", g.t, g.e.opts.GitPath, err)
		return -1
	case oc.Interrupted:
		g.timedOut, g.stopped = true, "git "+args[0]
		return -1
	}
	return oc.ExitCode
}

// query runs a git command for what it prints on stdout, trimmed, and its
// exit code; its stderr is dropped and nothing enters the transcript. The
// same timeout and group kill apply as for a step.
func (g *gitSession) query(args ...string) (string, int) {
	if g.startErr != nil || g.timedOut {
		return "", -1
	}
	ctx, cancel := context.WithTimeout(g.ctx, g.e.opts.GitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.e.opts.GitPath, args...)
	cmd.Dir, cmd.Env = g.dir, g.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = g.e.opts.WaitDelay
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := g.e.start(ctx, cmd)
	if err == nil {
		err = procs.Wait(cmd)
	}
	if cmd.Process != nil {
		_ = killGroup(cmd.Process.Pid)
	}
	if ctx.Err() != nil {
		g.timedOut, g.stopped = true, "git "+args[0]
		return "", -1
	}
	if cmd.ProcessState == nil {
		g.startErr = fmt.Errorf("%s: starting %s: %w", g.t, g.e.opts.GitPath, err)
		return "", -1
	}
	return strings.TrimSpace(stdout.String()), cmd.ProcessState.ExitCode()
}

// fail ends the action with a failed Result carrying the transcript, or
// with the error when git could not run at all.
func (g *gitSession) fail(format string, a ...any) (*brabo.Result, error) {
	if g.startErr != nil {
		return nil, g.startErr
	}
	msg := fmt.Sprintf(format, a...)
	if why := runOf(g.ctx).stopReason(); why != "" {
		msg = fmt.Sprintf("%s: %s", msg, why)
	} else if g.timedOut {
		if g.ctx.Err() != nil {
			msg = fmt.Sprintf("%s: %s interrupted (%v)", msg, g.stopped, g.ctx.Err())
		} else {
			msg = fmt.Sprintf("%s: %s timed out after %s", msg, g.stopped, g.e.opts.GitTimeout)
		}
	}
	code := g.code
	if code == 0 {
		code = 1 // a failed action never reports success
	}
	return &brabo.Result{ExitCode: code, Output: g.out.String(), Truncated: g.out.truncated(),
		TimedOut: g.timedOut, Error: msg}, nil
}

// ok ends the action with a successful Result carrying the transcript.
func (g *gitSession) ok(detail map[string]string) (*brabo.Result, error) {
	if g.startErr != nil {
		return nil, g.startErr
	}
	if g.timedOut {
		return g.fail("%s", g.t)
	}
	return &brabo.Result{Output: g.out.String(), Truncated: g.out.truncated(), Detail: detail}, nil
}

// identity is the git name and email of a credential member: the member's
// name (its id when it has none) and <id>@brabo.local.
func identity(m *brabo.Member) (name, email string) {
	name = strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, m.Name)
	if strings.TrimSpace(name) == "" {
		name = m.ID
	}
	local := strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '_' || r == '-' || r == '+') {
			return r
		}
		return '-'
	}, m.ID)
	return name, local + "@brabo.local"
}

// refNameError returns why name cannot be a branch name, or "" when it can
// (brabo.BranchNameProblem).
func refNameError(name string) string { return brabo.BranchNameProblem(name) }

// checkBranch refuses a payload ref name that is not a valid branch name.
func checkBranch(t brabo.ActionType, field, name string) error {
	if why := refNameError(name); why != "" {
		return &PayloadError{Type: t, Field: field, Value: name, Reason: "is not a valid branch name: " + why}
	}
	return nil
}

// remoteName returns the payload's remote, origin when it names none. It
// must be the name of a configured remote, not a URL or a path: pushing to
// wherever a payload points is not what approving a push means.
func remoteName(t brabo.ActionType, remote string) (string, error) {
	if remote == "" {
		return "origin", nil
	}
	if why := brabo.RemoteNameProblem(remote); why != "" {
		return "", &PayloadError{Type: t, Field: "remote", Value: remote, Reason: why}
	}
	return remote, nil
}

// displayArgs renders args as a shell would need them quoted, for the
// transcript.
func displayArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,^{}") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
