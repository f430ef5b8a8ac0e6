package executor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/gitguard"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/internal/sandbox"
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
	// box, when set, is the sandbox every step and query runs in
	// (gitbox.go); hostStep runs its step on the host.
	box *sandbox.Spec
	// root and layout are the scope root and the repository gitguard
	// found there (nil: none yet), for rootGit's sessions.
	root   string
	layout *gitguard.Layout
	req    brabo.ExecRequest
	set    []string

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

// newGit starts a session in dir for the action of req, on the host
// (sandboxed moves it into the sandbox). ceiling are
// directories git must not search above (GIT_CEILING_DIRECTORIES): the
// parent of the scope root, so that a root that is not itself a
// repository never lets git act on a repository around it. extra are
// further "NAME=value" variables.
//
// The environment is the executor's filtered one (procenv), never the
// server's, without any inherited GIT_* variable and without user or
// system configuration (procenv.OwnGit). It carries BRABO_ACTION_ID, so
// that whatever git leaves running is found and stopped with its action,
// and git's safety configuration; the repository's hooks are off
// (core.hooksPath=/dev/null), see gitEnv.
func (e *Executor) newGit(ctx context.Context, t brabo.ActionType, req brabo.ExecRequest, dir string, ceiling []string, extra ...string) *gitSession {
	set := append([]string{
		"GIT_CEILING_DIRECTORIES=" + strings.Join(ceiling, ":"),
		"BRABO_ACTION_ID=" + req.Action.ID,
	}, extra...)
	return &gitSession{e: e, ctx: ctx, t: t, dir: dir, env: e.gitEnv(req, set, false), req: req, set: set,
		out: newCapBuf(e.opts.MaxOutputBytes)}
}

// gitEnv is the environment of a session's git: hooks off
// (core.hooksPath=/dev/null) unless the session runs in the sandbox and
// the project's maintainer turned hooks on (Project.GitHooks). A hook is
// code the agent may have written: it runs only where brabo's data
// folder, tokens, sockets and /proc are absent, never on the host.
func (e *Executor) gitEnv(req brabo.ExecRequest, set []string, boxed bool) []string {
	var git []procenv.Config
	if !boxed || req.Project == nil || !req.Project.GitHooks {
		git = append(git, procenv.NoHooks)
	}
	return procenv.OwnGit(e.baseEnv(), set, git...)
}

// with adds variables to the session's environment, wherever it runs.
func (g *gitSession) with(kv ...string) {
	g.set = append(g.set, kv...)
	g.env = procenv.Set(g.env, kv...)
}

// sandboxed runs the session's steps in spec from now on (nil: on the
// host), with the environment that goes with it.
func (g *gitSession) sandboxed(spec *sandbox.Spec) {
	g.box = spec
	g.env = g.e.gitEnv(g.req, g.set, spec != nil)
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
	if ctx.Err() != nil {
		// Ended already: nothing starts, here or in a sandbox.
		g.timedOut, g.stopped = true, "git "+args[0]
		return -1
	}
	var head *headBuf
	oc, err := g.run(ctx, args, func() (io.Writer, io.Writer, *headBuf) {
		head = &headBuf{}
		out := io.MultiWriter(g.out, head)
		return out, out, head
	})
	g.code = oc.ExitCode
	switch {
	case err != nil:
		g.startErr = err
		return -1
	case oc.Interrupted:
		g.timedOut, g.stopped = true, "git "+args[0]
		return -1
	}
	if g.box != nil {
		if why := sandboxFailure(oc, string(head.b)); why != "" {
			g.startErr = &SandboxError{Reason: why}
			return -1
		}
	}
	return oc.ExitCode
}

// run runs one git command of a step or a query, on the host or in the
// session's sandbox, where a set-up that lost the rename race is set up
// again (withSetupRetry; a step's transcript then shows bwrap's line of
// the lost attempt). attempt returns the writers of one attempt: stdout,
// stderr, and the buffer bwrap's own refusal would be in. The error is a
// *SandboxError when the sandbox could not be set up or started, and
// says that git could not be started otherwise.
func (g *gitSession) run(ctx context.Context, args []string, attempt func() (stdout, stderr io.Writer, head *headBuf)) (procOutcome, error) {
	return withSetupRetry(ctx, func() (procOutcome, string, error) {
		stdout, stderr, head := attempt()
		prep, err := g.prepare(ctx, args)
		if err != nil {
			return procOutcome{ExitCode: -1}, "", err
		}
		oc, err := g.e.runIn(ctx, prep, g.dir, g.env, stdout, stderr, g.e.opts.GitPath, args...)
		switch {
		case err != nil && prep != nil:
			return oc, "", &SandboxError{Err: err}
		case err != nil:
			return oc, "", fmt.Errorf("%s: starting %s: %w", g.t, g.e.opts.GitPath, err)
		case prep == nil:
			return oc, "", nil
		}
		return oc, string(head.b), nil
	})
}

// hostStep is step on the host, for a step that talks to a network
// remote (push, ls-remote, clone) and git_merge's clone and push back:
// gitguard has read the repository as data, and hooks are off
// (docs/sandbox.md, "Git actions").
func (g *gitSession) hostStep(args ...string) int {
	return g.onHost(func() int { return g.step(args...) })
}

// hostQuery is query on the host, as hostStep is step.
func (g *gitSession) hostQuery(args ...string) (string, int) {
	var out string
	code := g.onHost(func() int {
		var c int
		out, c = g.query(args...)
		return c
	})
	return out, code
}

// onHost runs run (a step or a query) out of the session's sandbox.
func (g *gitSession) onHost(run func() int) int {
	if g.box != nil && g.startErr == nil && !g.timedOut {
		// What the sandboxed steps left is read as data again before git
		// runs on the host there: a control file they could not be kept
		// from making (a commondir) must not be obeyed outside.
		if _, err := guardRepo(g.t, g.box.Root, g.dir); err != nil {
			g.startErr = err
			return -1
		}
	}
	box := g.box
	g.sandboxed(nil)
	defer g.sandboxed(box)
	return run()
}

// prepare is the sandboxed command of one git step, nil when the session
// runs on the host. A sandbox that cannot be set up is a *SandboxError:
// the step never runs outside it.
func (g *gitSession) prepare(ctx context.Context, args []string) (*sandbox.Prepared, error) {
	if g.box == nil {
		return nil, nil
	}
	spec := *g.box
	spec.Dir, spec.Env = g.dir, g.env
	prep, err := g.e.opts.Sandbox.Prepare(spec, append([]string{g.e.opts.GitPath}, args...))
	if err != nil {
		return nil, &SandboxError{Err: err}
	}
	return prep, nil
}

// headBuf keeps the first KiB written to it: enough to tell bwrap's own
// refusal from git's output.
type headBuf struct{ b []byte }

func (h *headBuf) Write(p []byte) (int, error) {
	if n := 1024 - len(h.b); n > 0 {
		h.b = append(h.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
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
	if ctx.Err() != nil {
		// Ended already: nothing starts, here or in a sandbox.
		g.timedOut, g.stopped = true, "git "+args[0]
		return "", -1
	}
	var stdout *bytes.Buffer
	var stderr *headBuf
	oc, err := g.run(ctx, args, func() (io.Writer, io.Writer, *headBuf) {
		stdout, stderr = &bytes.Buffer{}, &headBuf{}
		return stdout, stderr, stderr
	})
	if err != nil {
		g.startErr = err
		return "", -1
	}
	if ctx.Err() != nil || oc.Interrupted {
		g.timedOut, g.stopped = true, "git "+args[0]
		return "", -1
	}
	code := oc.ExitCode
	if g.box != nil {
		if why := sandboxFailure(oc, string(stderr.b)); why != "" {
			g.startErr = &SandboxError{Reason: why}
			return "", -1
		}
	}
	return strings.TrimSpace(stdout.String()), code
}

// fail ends the action with a failed Result carrying the transcript, or
// with the error when git could not run at all.
func (g *gitSession) fail(format string, a ...any) (*brabo.Result, error) {
	if se, ok := g.startErr.(*SandboxError); ok {
		return sandboxFailed(se), nil
	}
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
		return g.fail("%s", g.t)
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
