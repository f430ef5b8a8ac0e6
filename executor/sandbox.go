package executor

import (
	"context"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// SandboxError fails an action whose sandbox could not be set up
// (bubblewrap refused, the helper could not map the project folder): the
// command did not run, inside the sandbox or outside it.
type SandboxError struct {
	// Reason is what bwrap or the helper said; Err the error, when it
	// came from brabo's side.
	Reason string
	Err    error
}

func (e *SandboxError) Error() string {
	why := e.Reason
	if e.Err != nil {
		why = e.Err.Error()
	}
	return "the sandbox could not be set up, so the command did not run: " + strings.TrimPrefix(why, "sandbox: ")
}

func (e *SandboxError) Unwrap() error { return e.Err }

// Code reports the API code of the failure.
func (e *SandboxError) Code() brabo.Code { return brabo.CodeSandboxFailed }

// sandboxFailure is why a sandboxed command never ran, "" when it ran:
// the helper's refusal (exit 126 and sandbox.FailurePrefix) or bwrap's
// own (exit 1, its output starting with "bwrap: "). A command that prints
// "bwrap: " and exits 1 itself is reported as a failed sandbox: it failed
// either way, and nothing ran outside.
func sandboxFailure(oc procOutcome, out string) string {
	switch {
	case oc.ExitCode == 126 && strings.HasPrefix(out, sandbox.FailurePrefix):
		return strings.TrimSpace(strings.TrimPrefix(out, sandbox.FailurePrefix))
	case oc.ExitCode == 1 && strings.HasPrefix(out, "bwrap: "):
		return strings.TrimSpace(out)
	}
	return ""
}

// sandboxFailed is the failed result of an action whose sandbox could not
// be set up: a stable code, no exit code (nothing ran).
func sandboxFailed(err *SandboxError) *brabo.Result {
	return &brabo.Result{Code: brabo.CodeSandboxFailed, ExitCode: -1, Error: err.Error()}
}

// withSetupRetry runs one start of a command (set-up, start, wait) and
// starts it again, up to setupTries times in all, while its sandbox lost
// the rename race (rebindRace) and ctx still runs. run returns the
// outcome, what the command printed first when it ran sandboxed ("" on
// the host: a command there is never started twice), and the error that
// ends the action. The terminal, a git step and a git query all start
// through it.
func withSetupRetry(ctx context.Context, run func() (oc procOutcome, head string, err error)) (procOutcome, error) {
	for try := 1; ; try++ {
		oc, head, err := run()
		if err != nil || try >= setupTries || head == "" || !rebindRace(oc, head) || ctx.Err() != nil {
			return oc, err
		}
	}
}
