package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/confine"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/internal/procs"
	"github.com/brabo-dev/brabo/internal/progfind"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// timeout is a terminal command's timeout: the payload's, or
// DefaultTimeout when it sets none, within MaxTimeout and within the
// project's own ceiling (Project.MaxTimeoutSec) when it has one.
func (e *Executor) timeout(sec int, p *brabo.Project) time.Duration {
	max := e.opts.MaxTimeout
	if p != nil && p.MaxTimeoutSec > 0 && int64(p.MaxTimeoutSec) < int64(max/time.Second) {
		max = time.Duration(p.MaxTimeoutSec) * time.Second
	}
	d := e.opts.DefaultTimeout
	// Compare in seconds: a huge TimeoutSec must not overflow a Duration.
	if sec > 0 {
		if int64(sec) >= int64(max/time.Second) {
			return max
		}
		d = time.Duration(sec) * time.Second
	}
	return min(d, max)
}

// confined reports whether Landlock can confine commands here; without it
// they run unconfined (brabo says so at start and in /healthz).
func confined() bool {
	_, err := confine.ABI()
	return err == nil
}

// projectCache makes and returns the project's cache folder under root.
func projectCache(root string, p *brabo.Project) (string, error) {
	name := "default"
	if p != nil && p.WorkspaceDir != "" {
		name = p.WorkspaceDir
	}
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", fmt.Errorf("the project's folder name %q is not a plain name", name)
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the project's cache folder: %w", err)
	}
	return dir, nil
}

// runTerminal runs `Shell -c Command` in the payload's Cwd (relative to the
// root, resolved and confined to it), in a process group of its own, with
// the timeout of the payload (capped), stdin empty and the combined output
// capped. The environment is Options.Env (the executor's own, filtered, by
// default) plus BRABO_ACTION_ID, BRABO_EXECUTED_AS (the credential's member
// id), TMPDIR (a private temp folder, removed after) and git's safety
// configuration (procenv.Child). With Options.Confine and Landlock, the
// shell runs under the launcher: it writes only in the scope root, its
// temp folder and its project's cache folder.
//
// A nonzero exit is a Result with that ExitCode and no Error. A timeout
// kills the whole group and sets TimedOut and Error; a cancelled ctx kills
// it too and sets Error.
func (e *Executor) runTerminal(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	p := req.Action.Payload
	if strings.TrimSpace(p.Command) == "" {
		return nil, &PayloadError{Type: brabo.Terminal, Field: "command", Reason: "is empty"}
	}
	if strings.ContainsRune(p.Command, 0) {
		return nil, &PayloadError{Type: brabo.Terminal, Field: "command", Reason: "holds a NUL byte"}
	}
	sc, err := newScope(brabo.Terminal, req.Root)
	if err != nil {
		return nil, err
	}
	dir, err := sc.dir("cwd", p.Cwd)
	if err != nil {
		return nil, err
	}
	executedAs := ""
	if req.Credential != nil {
		executedAs = req.Credential.ID
	}
	set := []string{"BRABO_ACTION_ID=" + req.Action.ID, "BRABO_EXECUTED_AS=" + executedAs}
	cache := ""
	if c := e.opts.Confine; c != nil && c.CacheRoot != "" && (e.opts.Sandbox != nil || (c.Launcher != "" && confined())) {
		if cache, err = projectCache(c.CacheRoot, req.Project); err != nil {
			return nil, fmt.Errorf("terminal: %w", err)
		}
		set = append(set, "GOCACHE="+filepath.Join(cache, "go-build"), "GOMODCACHE="+filepath.Join(cache, "go-mod"),
			"XDG_CACHE_HOME="+filepath.Join(cache, "xdg"))
	}
	// The PATH the pipeline resolved the line's programs in: nothing the
	// agent can write (the project, its cache, the temp folders) is on it,
	// so no program of the agent's shadows the one a rule named.
	set = append(set, "PATH="+progfind.SafePATH(envValue(e.baseEnv(), "PATH"), progfind.AgentWritable(sc.resolved, cache)))
	name, args := e.opts.Shell, []string{"-c", p.Command}
	// The way out through brabo's egress proxy (network.go): in the
	// sandbox, its socket and the forwarder are bound in and the
	// forwarder starts the command.
	nr, err := e.openNetwork(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	defer nr.close()
	var spec sandbox.Spec
	var argv []string
	sb := e.opts.Sandbox
	if sb != nil {
		// The sandbox's own /tmp is the command's private temp folder,
		// gone with its mount namespace.
		spec = sandbox.Spec{Root: sc.resolved, Dir: dir, Cache: cache, MayWrite: req.MayWriteProtected,
			Env: procenv.Child(e.baseEnv(), set)}
		nr.sandbox(&spec)
		argv = []string{name, "-c", p.Command}
	} else {
		// A private temp folder per action: nothing of another action's
		// is in it, and confinement lets the command write there. Named
		// by the action, so that a restart can remove what a killed
		// server left (procs.Host.StopAction).
		tmp, err := os.MkdirTemp("", procs.TempPattern(req.Action.ID))
		if err != nil {
			return nil, fmt.Errorf("terminal: private temp folder: %w", err)
		}
		defer os.RemoveAll(tmp)
		set = append(set, "TMPDIR="+tmp)
		if c := e.opts.Confine; c != nil && c.Launcher != "" && confined() {
			write := []string{sc.resolved, tmp}
			if cache != "" {
				write = append(write, cache)
			}
			name, args = c.Launcher, confine.Spec{Write: write, Hide: c.Hide}.Args(e.opts.Shell, "-c", p.Command)
		}
		name, args = nr.wrap(nr.socket(), name, args)
	}
	env := procenv.Child(e.baseEnv(), set)

	limit := e.timeout(p.TimeoutSec, req.Project)
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var out *capBuf
	oc, err := withSetupRetry(runCtx, func() (procOutcome, string, error) {
		out = newCapBuf(e.opts.MaxOutputBytes)
		var prep *sandbox.Prepared
		if sb != nil {
			var err error
			if prep, err = sb.Prepare(spec, argv); err != nil {
				return procOutcome{ExitCode: -1}, "", err
			}
		}
		oc, err := e.runIn(runCtx, prep, dir, env, out, out, name, args...)
		if prep == nil || err != nil || oc.ExitCode != 1 {
			return oc, "", err // only bwrap's exit 1 can be a lost race
		}
		return oc, out.String(), nil
	})
	if err != nil {
		if sb != nil {
			return sandboxFailed(&SandboxError{Err: err}), nil
		}
		return nil, fmt.Errorf("terminal: starting %s: %w", name, err)
	}
	if why, ok := nr.cannotForward(oc.ExitCode, out.String()); ok {
		if sb != nil {
			return sandboxFailed(&SandboxError{Reason: why}), nil
		}
		return nil, fmt.Errorf("terminal: %s", why)
	}
	if sb != nil {
		if why := sandboxFailure(oc, out.String()); why != "" {
			return sandboxFailed(&SandboxError{Reason: why}), nil
		}
	}
	if oc.ExitCode == 126 && (name != e.opts.Shell || sb != nil) && strings.Contains(out.String(), "brabo: cannot confine the command") {
		// The launcher refused: nothing ran.
		return nil, fmt.Errorf("terminal: %s", strings.TrimSpace(out.String()))
	}
	res := &brabo.Result{ExitCode: oc.ExitCode, Output: out.String(), Truncated: out.truncated()}
	nr.finish(res)
	if why := runOf(runCtx).stopReason(); why != "" && oc.ExitCode != 0 {
		// brabo stopped it; a command that still finished well keeps its
		// outcome.
		res.Error = why
	} else if oc.Interrupted {
		switch {
		case ctx.Err() == nil: // our own deadline
			res.TimedOut = true
			res.Error = fmt.Sprintf("timed out after %s; the command's process group was killed", limit)
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			res.TimedOut = true
			res.Error = "timed out: the caller's deadline passed; the command's process group was killed"
		default:
			res.Error = fmt.Sprintf("interrupted (%v); the command's process group was killed", ctx.Err())
		}
	}
	return res, nil
}

// setupTries is how many times a sandbox whose set-up lost the race of
// rebindRace is set up before the action fails.
const setupTries = 3

// rebindRace reports whether bwrap failed, before the command started, to
// bind a protected file of the scope root read-only because the file was
// replaced by a rename in that moment (the mount point's old entry is gone:
// ENOENT). brabo itself does that (Always allow, a trust restore), and so
// does an editor or a hook agent on the host. The set-up is then tried
// again with a fresh plan. A command that prints this line and exits 1
// itself would run again: that gives it nothing it could not do by
// looping, and it still runs only in the sandbox.
func rebindRace(oc procOutcome, out string) bool {
	return oc.ExitCode == 1 && strings.HasPrefix(out, "bwrap: Can't bind mount ") &&
		strings.HasSuffix(strings.TrimSpace(out), "No such file or directory") && strings.Count(strings.TrimSpace(out), "\n") == 0
}

// envValue is the value of name in env ("" when it is not set).
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
