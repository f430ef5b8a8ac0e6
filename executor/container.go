package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procenv"
)

// A terminal action of a container project runs in its container
// (ExecRequest.Container): through the engine's exec, as `bash -c`, as the
// user who owns the project folder, in the cwd translated to the
// container's /work just before the call.
//
// The engine cannot kill an exec, so the command runs under runWrapper, a
// few lines of bash that put it in a process group of its own (job
// control) and end that group when it returns. Whatever the outcome (the
// end, a timeout, a cancellation), a second exec runs stopScript, which
// kills every process of the action: those carrying its BRABO_ACTION_ID,
// their descendants, their process groups and the orphans it left; it
// reports how many are left, which must be none.

// runWrapper runs $1 with bash in a process group of its own, waits for
// it, kills what it left in its group and exits with its status. Its own
// messages (job control's "Done") go nowhere; the command's stderr is
// the exec's.
const runWrapper = `exec 3>&2 2>/dev/null
set -m
bash -c "$1" 2>&3 3>&- &
j=$!
wait "$j"
s=$?
kill -9 -- "-$j" 2>/dev/null
exit "$s"`

// stopScript kills, inside the container, every process of the action $1
// and prints "brabo-left=N", the number still there after it tried. Its
// processes are those carrying BRABO_ACTION_ID=$1, their descendants and
// their process groups, and the orphans it left that also cleared their
// environment: children of PID 1 outside PID 1's group and session that
// started within the last $2 clock ticks (the action's time) and carry no
// other action's id. It is bash with builtins only (the image may have
// nothing else): it reads /proc, never kills PID 1 or itself.
const stopScript = `id=$1
self=$$
read -r up _ < /proc/uptime; up=${up/./}; since=$(( 10#$up - $2 ))
read -r line < /proc/1/stat; rest=${line##*) }; read -r _ _ init isid _ <<< "$rest"
read -r line < /proc/$self/stat; rest=${line##*) }; read -r _ _ mine _ <<< "$rest"
declare -A pp pg st
A=()
scan() {
  pp=(); pg=(); st=(); A=()
  local d p line rest kv other
  local -a f
  declare -A in=()
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [[ $p == "$self" ]] && continue
    read -r line 2>/dev/null < "$d/stat" || continue
    rest=${line##*) }
    read -r -a f <<< "$rest"
    st[$p]=${f[0]}; pp[$p]=${f[1]}; pg[$p]=${f[2]}
    [[ $p == 1 || ${f[0]} == Z || ${f[0]} == X ]] && continue
    other=
    while IFS= read -r -d '' kv; do
      if [[ $kv == "BRABO_ACTION_ID=$id" ]]; then in[$p]=1; break; fi
      if [[ $kv == BRABO_ACTION_ID=* ]]; then other=1; break; fi
    done 2>/dev/null < "$d/environ"
    if [[ -z ${in[$p]} && -z $other && ${f[1]} == 1 && ${f[2]} != "$init" && ${f[3]} != "$isid" ]] && (( ${f[19]} >= since )); then
      in[$p]=1
    fi
  done
  local grew=1
  while (( grew )); do
    grew=0
    for p in "${!pp[@]}"; do
      [[ $p == 1 || ${in[$p]} || ${st[$p]} == Z || ${st[$p]} == X ]] && continue
      if [[ ${in[${pp[$p]}]} ]]; then in[$p]=1; grew=1; fi
    done
  done
  A=("${!in[@]}")
}
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  scan
  (( ${#A[@]} == 0 )) && break
  declare -A groups=()
  for p in "${A[@]}"; do
    g=${pg[$p]}
    [[ $g && $g != 0 && $g != 1 && $g != "$init" && $g != "$mine" ]] && groups[$g]=1
  done
  for g in "${!groups[@]}"; do kill -9 -- "-$g" 2>/dev/null; done
  for p in "${A[@]}"; do kill -9 "$p" 2>/dev/null; done
done
scan
echo "brabo-left=${#A[@]}"`

// ContainerCwd translates dir, a folder inside the project folder root on
// the host (both resolved), into the container, and checks the result is
// inside brabo.ContainerWork: the broker's own check, independent of the
// host's. A dir outside root, or a translation outside /work, is a
// *CwdError.
func ContainerCwd(root, dir string) (string, error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsAbs(root) || !filepath.IsAbs(dir) {
		return "", &CwdError{Dir: dir, Reason: "is not a folder inside the project folder"}
	}
	work := path.Join(brabo.ContainerWork, filepath.ToSlash(rel))
	return work, checkWork(work, dir)
}

// checkWork is the re-validation of a translated cwd: clean, absolute, and
// /work or below it.
func checkWork(work, dir string) error {
	if strings.ContainsRune(work, 0) || path.Clean(work) != work ||
		(work != brabo.ContainerWork && !strings.HasPrefix(work, brabo.ContainerWork+"/")) {
		return &CwdError{Dir: dir, Work: work, Reason: "is outside " + brabo.ContainerWork}
	}
	return nil
}

// CwdError refuses a terminal action whose working folder does not
// translate into the container's /work: nothing runs.
type CwdError struct {
	Dir, Work string
	Reason    string
}

func (e *CwdError) Error() string {
	if e.Work != "" {
		return fmt.Sprintf("terminal: cwd %q translates to %q in the container, which %s; nothing ran", e.Dir, e.Work, e.Reason)
	}
	return fmt.Sprintf("terminal: cwd %q %s; nothing ran", e.Dir, e.Reason)
}

// Code reports the stable code of the failure.
func (e *CwdError) Code() brabo.Code { return brabo.CodeCwdOutsideWork }

// folderOwner is "uid:gid" of the project folder: the user commands run
// as in the container.
func folderOwner(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("terminal: the project folder's owner: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", errors.New("terminal: the project folder's owner is unknown on this system")
	}
	return strconv.FormatUint(uint64(st.Uid), 10) + ":" + strconv.FormatUint(uint64(st.Gid), 10), nil
}

// stopTimeout bounds the second exec that ends an action's processes.
const stopTimeout = 20 * time.Second

// runInContainer runs a terminal action in req.Container: the payload's
// cwd resolved and confined on the host as for the host executor, then
// translated and re-checked; the timeout, the output cap, the exit code
// and the cancellation are the host executor's. A container that is gone
// is a failed result with brabo.CodeContainerGone, a cwd outside /work one
// with brabo.CodeCwdOutsideWork: nothing ran, and nothing falls back to
// the host.
func (e *Executor) runInContainer(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	p, t := req.Action.Payload, req.Container
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
	// The translation, right before the call: Decide saw host paths.
	work, err := ContainerCwd(sc.resolved, dir)
	if err != nil {
		return &brabo.Result{Code: brabo.CodeCwdOutsideWork, Error: err.Error()}, nil
	}
	user, err := folderOwner(sc.resolved)
	if err != nil {
		return nil, err
	}
	executedAs := ""
	if req.Credential != nil {
		executedAs = req.Credential.ID
	}
	env := procenv.Child(nil, []string{"BRABO_ACTION_ID=" + req.Action.ID, "BRABO_EXECUTED_AS=" + executedAs})
	container := t.ID
	if container == "" {
		container = t.Name
	}
	limit := e.timeout(p.TimeoutSec, req.Project)
	began := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out := newCapBuf(e.opts.MaxOutputBytes)
	code, runErr := t.Engine.Exec(runCtx, brabo.ContainerExec{Container: container, User: user, Dir: work, Env: env,
		Cmd: []string{"bash", "-c", runWrapper, "brabo-run", p.Command}, Output: out})
	// Whatever happened, nothing of the action stays in the container.
	left, stopErr := e.stopInContainer(t.Engine, container, req.Action.ID, time.Since(began))
	if errors.Is(runErr, brabo.ErrNoContainer) {
		return &brabo.Result{Code: brabo.CodeContainerGone,
			Error:  fmt.Sprintf("the project's container %s is gone (%v); nothing ran, and a command meant for the container never runs on the host", t.Name, runErr),
			Detail: map[string]string{"container": t.Name}}, nil
	}
	res := &brabo.Result{ExitCode: code, Output: out.String(), Truncated: out.truncated(),
		Detail: map[string]string{"container": t.Name, "cwd": work, "user": user}}
	switch {
	case runErr == nil:
		if code == 127 && strings.Contains(res.Output, "brabo-run") {
			// bash ran the wrapper but could not find bash for the command.
			res.Error = "the container has no bash on its PATH for the command"
		}
	case runCtx.Err() != nil && ctx.Err() == nil:
		res.ExitCode, res.TimedOut = -1, true
		res.Error = fmt.Sprintf("timed out after %s; the command's processes in the container were killed", limit)
	case ctx.Err() != nil:
		res.ExitCode = -1
		if why := runOf(ctx).stopReason(); why != "" {
			res.Error = why
		} else if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.TimedOut = true
			res.Error = "timed out: the caller's deadline passed; the command's processes in the container were killed"
		} else {
			res.Error = fmt.Sprintf("interrupted (%v); the command's processes in the container were killed", ctx.Err())
		}
	default:
		return nil, fmt.Errorf("terminal: in the container %s: %w", t.Name, runErr)
	}
	switch {
	case stopErr != nil:
		res.Error = strings.TrimPrefix(res.Error+"; ", "; ") + "ending its processes in the container failed: " + stopErr.Error()
	case left > 0:
		res.Error = strings.TrimPrefix(res.Error+"; ", "; ") + fmt.Sprintf("%d of its processes are still in the container", left)
	}
	if res.Error != "" && res.ExitCode == 0 {
		res.ExitCode = -1
	}
	return res, nil
}

// stopInContainer runs stopScript for the action in the container, as
// root, and returns how many of its processes are left. elapsed is how
// long the action has run; a second more is taken as its time, counted
// on the container's own clock (/proc/uptime), so a remote engine's
// different boot time does not matter.
func (e *Executor) stopInContainer(eng brabo.ContainerEngine, container, actionID string, elapsed time.Duration) (int, error) {
	ticks := strconv.FormatInt(int64(elapsed/(10*time.Millisecond))+100, 10)
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	out := newCapBuf(4 << 10)
	code, err := eng.Exec(ctx, brabo.ContainerExec{Container: container, User: "0:0", Dir: "/",
		Cmd: []string{"bash", "-c", stopScript, "brabo-stop", actionID, ticks}, Output: out})
	if errors.Is(err, brabo.ErrNoContainer) {
		return 0, nil // no container, no process of it
	}
	if err != nil {
		return 0, err
	}
	text := out.String()
	i := strings.LastIndex(text, "brabo-left=")
	if code != 0 || i < 0 {
		return 0, fmt.Errorf("the stop exec exited %d: %s", code, strings.TrimSpace(text))
	}
	n, err := strconv.Atoi(strings.TrimSpace(text[i+len("brabo-left="):]))
	if err != nil {
		return 0, fmt.Errorf("the stop exec said %q", strings.TrimSpace(text))
	}
	return n, nil
}
