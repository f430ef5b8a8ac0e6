// Package executor runs approved actions (DESIGN §2): terminal commands in
// their own process group with a timeout and an output cap, file writes
// confined to the scope root, and git operations on local repositories
// (commit, branch, push, the local provider's pr_open and a real git_merge).
// A type it has no runner for is refused with a *NoRunnerError; Register adds
// runners for the rest.
//
// It imports the standard library and the root package only.
//
// What is an error and what is a Result: a request the executor refuses
// before running anything (a path outside the scope, a bad ref name, a
// missing field) returns a nil Result and an error (*ScopeError,
// *PayloadError, *NoRunnerError). Once something ran, the outcome is a
// Result: a failed git step, a merge conflict or a timeout set Result.Error;
// a terminal command that exits nonzero is not a failure of the executor
// and only sets Result.ExitCode, since the command ran and its exit code is
// its outcome.
package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/internal/sandbox"
)

// Runner runs one type of approved action.
type Runner func(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error)

// Options tune an Executor. A zero or negative field takes its default.
type Options struct {
	// MaxOutputBytes caps the output kept in a Result (default 64 KiB); the
	// rest is counted and named by a marker appended to the output.
	MaxOutputBytes int
	// DefaultTimeout is a terminal command's timeout when its payload sets
	// none (default 2 min); it never exceeds MaxTimeout.
	DefaultTimeout time.Duration
	// MaxTimeout caps the timeout a payload may ask for (default 1 h).
	MaxTimeout time.Duration
	// GitTimeout bounds every single git command (default 2 min).
	GitTimeout time.Duration
	// WaitDelay is how long, once a command's process group has been killed
	// or its leader has exited, the executor waits for the output pipe to
	// close before it stops reading (default 2 s): a process that escaped
	// the group and still holds the pipe cannot hang an action.
	WaitDelay time.Duration
	// ReposRoot is the folder git_repo_create makes the local provider's
	// bare repositories in (<ReposRoot>/<workspace dir>.git); empty
	// refuses git_repo_create.
	ReposRoot string
	// GitPath is the git binary (default "git", looked up in PATH).
	GitPath string
	// Shell runs terminal commands as `Shell -c command` (default "bash").
	Shell string
	// Env is the base environment of every process the executor starts
	// (terminal commands and git), to which BRABO_ACTION_ID,
	// BRABO_EXECUTED_AS and git's safety configuration are added
	// (procenv.Child). Nil means the executor's own environment filtered
	// by procenv.Own: never the server's whole environment, whose secrets
	// a hook or a test the agent wrote could print.
	Env []string
	// Confine, when set, runs every terminal command under Landlock
	// (internal/confine) where the kernel has it: it may write only in its
	// scope root, its private temp folder and its project's cache folder.
	// Nil runs commands unconfined (tests, and kernels without Landlock).
	Confine *Confinement
	// Sandbox, when set, runs every terminal command in bubblewrap
	// (internal/sandbox, docs/sandbox.md): its scope root and its
	// project's cache writable, its protected paths read-only, nothing of
	// brabo's or of other projects there, its own pid and network
	// namespaces, and Landlock inside. A sandbox that cannot be set up
	// fails the action (CodeSandboxFailed); the command never runs
	// outside it. Nil runs commands unsandboxed (--no-sandbox, a machine
	// without bubblewrap, where the pipeline makes a human approve each).
	Sandbox *sandbox.Sandbox
	// Network, when set, routes every terminal command's connections
	// through brabo's egress proxy (network.go, docs/network.md); brabo
	// sets it with the sandbox, whose network namespace makes it the only
	// way out.
	Network *Network
}

// Confinement says how terminal commands are confined.
type Confinement struct {
	// Launcher is the program that runs confine.Main when its first
	// argument is confine.Subcommand: brabo itself (os.Executable), or a
	// test binary whose TestMain does.
	Launcher string
	// Hide are the paths a command may neither read nor write: brabo's
	// data folder, token files.
	Hide []string
	// CacheRoot, when set, holds one cache folder per project
	// (<CacheRoot>/<workspace dir>), which the project's commands may
	// write: GOCACHE, GOMODCACHE and XDG_CACHE_HOME point there, since
	// the home folder's caches are out of their reach.
	CacheRoot string
}

func (o Options) withDefaults() Options {
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = 64 << 10
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = time.Hour
	}
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = 2 * time.Minute
	}
	if o.DefaultTimeout > o.MaxTimeout {
		o.DefaultTimeout = o.MaxTimeout
	}
	if o.GitTimeout <= 0 {
		o.GitTimeout = 2 * time.Minute
	}
	if o.WaitDelay <= 0 {
		o.WaitDelay = 2 * time.Second
	}
	if o.GitPath == "" {
		o.GitPath = "git"
	}
	if o.Shell == "" {
		o.Shell = "bash"
	}
	return o
}

// Executor runs approved actions with the runner registered for their type.
// It is safe for concurrent use, Register included.
type Executor struct {
	opts    Options
	mu      sync.RWMutex
	runners map[brabo.ActionType]Runner

	// The actions running now (running.go): Stop ends them.
	runMu    sync.Mutex
	running  map[*run]bool
	stopping bool
	runWG    sync.WaitGroup
}

var _ brabo.Executor = (*Executor)(nil)

// New returns an Executor with the built-in runners registered: terminal,
// write_file, git_commit, git_branch_create, git_push, pr_open,
// git_merge, git_repo_create, open_adr_pr and open_infra_pr. The types
// whose execution changes brabo's own state (git_branch_protect,
// instruction_patch, spend) and the container types are the pipeline's,
// which owns the store they write.
func New(opts Options) *Executor {
	e := &Executor{opts: opts.withDefaults(), runners: map[brabo.ActionType]Runner{}}
	e.Register(brabo.Terminal, e.runTerminal)
	e.Register(brabo.WriteFile, e.runWriteFile)
	e.Register(brabo.GitCommit, e.runGitCommit)
	e.Register(brabo.GitBranchCreate, e.runGitBranchCreate)
	e.Register(brabo.GitPush, e.runGitPush)
	e.Register(brabo.PrOpen, e.runPROpen)
	e.Register(brabo.GitMerge, e.runGitMerge)
	e.Register(brabo.GitRepoCreate, e.runGitRepoCreate)
	e.Register(brabo.OpenAdrPr, e.runOpenDocPR)
	e.Register(brabo.OpenInfraPr, e.runOpenDocPR)
	return e
}

// baseEnv is the environment every child starts from: Options.Env, or the
// executor's own filtered.
func (e *Executor) baseEnv() []string {
	if e.opts.Env != nil {
		return e.opts.Env
	}
	return procenv.Own()
}

// Options returns the options in effect, defaults filled in.
func (e *Executor) Options() Options { return e.opts }

// Register sets the runner for a type, replacing any earlier one (a
// built-in included). A nil runner removes the registration, so that the
// type is refused with a *NoRunnerError.
func (e *Executor) Register(t brabo.ActionType, r Runner) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r == nil {
		delete(e.runners, t)
		return
	}
	e.runners[t] = r
}

// Runs reports whether a runner is registered for t: whether Execute runs
// an action of t rather than refusing it with a *NoRunnerError.
func (e *Executor) Runs(t brabo.ActionType) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.runners[t] != nil
}

// Execute runs req.Action with the runner registered for its type. A type
// with no runner returns a *NoRunnerError and runs nothing; a runner that
// panics is reported as an error, never as a panic. Every Result it returns
// carries Detail["executedAs"], the credential's member id, when the
// request has a credential.
//
// When the runner returns, every process still carrying the action's
// BRABO_ACTION_ID is killed: nothing an action started outlives it. Once
// Stop has begun, Execute refuses with ErrStopping.
func (e *Executor) Execute(ctx context.Context, req brabo.ExecRequest) (res *brabo.Result, err error) {
	if req.Action == nil {
		return nil, &PayloadError{Field: "action", Reason: "is missing from the request"}
	}
	t := req.Action.Type
	e.mu.RLock()
	r := e.runners[t]
	e.mu.RUnlock()
	if t == brabo.Terminal && req.Container != nil {
		r = e.runInContainer // the project's container, not the host (container.go)
	}
	if r == nil {
		return nil, &NoRunnerError{Type: t}
	}
	ctx, run, err := e.begin(ctx, req)
	if err != nil {
		return nil, err
	}
	defer e.end(run)
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("executor: the runner for %s panicked: %v", t, p)
		}
	}()
	res, err = r(ctx, req)
	var refused *RepositoryRefusedError
	if errors.As(err, &refused) {
		// Nothing ran: a failed result with its stable code, as for a
		// missing project folder.
		res, err = &brabo.Result{Code: refused.Code(), Error: refused.Error()}, nil
	}
	if res != nil && req.Credential != nil {
		if res.Detail == nil {
			res.Detail = map[string]string{}
		}
		res.Detail["executedAs"] = req.Credential.ID
	}
	return res, err
}

// NoRunnerError is returned for an action type no runner is registered for.
type NoRunnerError struct {
	Type brabo.ActionType
}

func (e *NoRunnerError) Error() string {
	t := string(e.Type)
	if t == "" {
		t = `an empty action type`
	}
	return "no executor is registered for " + t
}

// ScopeError refuses a path that lies outside the scope root, lexically or
// once its symlinks are resolved.
type ScopeError struct {
	Type  brabo.ActionType
	Field string // "cwd", "path", "root"
	Path  string // as the payload gave it
	// Reason completes the sentence "<field> <path> …".
	Reason string
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("%s: %s %q %s", typeName(e.Type), e.Field, e.Path, e.Reason)
}

// Code reports the API code of the refusal: the action is invalid.
func (e *ScopeError) Code() brabo.Code { return brabo.CodeInvalidAction }

// PayloadError refuses an action whose payload cannot run as given: a
// missing field, a ref name git would read as an option, a field that
// contradicts the pull request it names.
type PayloadError struct {
	Type  brabo.ActionType
	Field string
	Value string
	// Reason completes the sentence "<field> <value> …".
	Reason string
}

func (e *PayloadError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s %s", typeName(e.Type), e.Field, e.Reason)
	}
	return fmt.Sprintf("%s: %s %q %s", typeName(e.Type), e.Field, e.Value, e.Reason)
}

// Code reports the API code of the refusal: the action is invalid.
func (e *PayloadError) Code() brabo.Code { return brabo.CodeInvalidAction }

func typeName(t brabo.ActionType) string {
	if t == "" {
		return "executor"
	}
	return string(t)
}
