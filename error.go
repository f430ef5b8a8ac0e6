package brabo

import (
	"errors"
	"fmt"
	"slices"
)

// Code is a stable, machine-readable error code carried across the API.
type Code string

// Error codes of DESIGN §6.3.
const (
	CodeAlreadyApproved      Code = "already_approved"
	CodeActionAlreadyDenied  Code = "action_already_denied"
	CodeAlwaysAllowCap       Code = "always_allow_cap"
	CodePRAlreadyMerged      Code = "pr_already_merged"
	CodeMergeAlreadyProposed Code = "merge_already_proposed"
	CodeForbiddenRole        Code = "forbidden_role"
	CodeInvalidPermissions   Code = "invalid_permissions"
	CodeInvalidAction        Code = "invalid_action"
	CodeNotFound             Code = "not_found"
	// CodeTooManyPending refuses a proposal of an agent that already has
	// as many pending actions as the limit allows (HTTP 429).
	CodeTooManyPending Code = "too_many_pending"
	// CodePermissionsChanged refuses to act on a permissions.json that is
	// not the one the caller saw (Accept of a hash that is no longer on
	// disk), or to build on a file waiting for a maintainer (HTTP 409).
	CodePermissionsChanged Code = "permissions_changed"
	// CodeAlreadyReported refuses a second result for an action its agent
	// runs itself: the first report is the record (HTTP 409).
	CodeAlreadyReported Code = "already_reported"
	// CodeNotDecided refuses a result for an action no one has approved
	// yet: the agent must not have run it (HTTP 409).
	CodeNotDecided Code = "not_decided"
	// CodeHumanOnly refuses an agent's proposal of a type only a human
	// may propose: container_stop and container_remove, which the
	// containers page proposes for the member who clicks (HTTP 403).
	CodeHumanOnly Code = "human_only"
	// CodeInvalidProject refuses a project that cannot be created or
	// changed as asked: a bad slug, mode or root, a folder that overlaps
	// brabo's data folder or another project (HTTP 400).
	CodeInvalidProject Code = "invalid_project"
	// CodeProjectFolderMissing is the code of an action's failed result
	// when its project folder is gone (deleted or moved): nothing ran, so
	// the result has no exit code.
	CodeProjectFolderMissing Code = "project_folder_missing"
	// CodeSandboxFailed is the code of an action's failed result when the
	// sandbox its command runs in could not be set up (bubblewrap
	// refused): nothing ran, inside the sandbox or outside it.
	CodeSandboxFailed Code = "sandbox_failed"
	// CodeNeedsApproval refuses a setting whose change is a decision the
	// pipeline takes (raising the project's cap on parallel dev agents is
	// raise_max_parallel, which a human approves) (HTTP 409).
	CodeNeedsApproval Code = "needs_approval"
	// CodeRepositoryConfigRefused is the code of a git action's failed
	// result when brabo refused to run git in the repository: its
	// configuration holds a key brabo's git does not obey (one that may
	// name a program: a filter, a hook path, an ssh command, an include…),
	// or its gitfile, commondir or alternates leave the project folder.
	// Nothing ran; the message names the key or the file (HTTP 409 where
	// an API answer carries it).
	CodeRepositoryConfigRefused Code = "repository_config_refused"
	// CodeRetry ends a long-poll when brabo stops gracefully (HTTP 503,
	// Retry-After): the action is as it was, and a hook asks again, of
	// this server once it is back or of another one.
	CodeRetry Code = "retry"
	// CodeAbandoned refuses deciding an action its agent no longer waits
	// for (StatusAbandoned) (HTTP 409): approving it would record a run
	// that cannot happen.
	CodeAbandoned Code = "abandoned"
)

// Codes of the container path.
const (
	// CodeContainerGone is the code of a terminal action's failed result
	// when it was to run in its project's container and the container is
	// no longer there (stopped, removed, recreated, the engine gone):
	// nothing ran, and it never falls back to the host.
	CodeContainerGone Code = "container_gone"
	// CodeCwdOutsideWork is the code of a terminal action's failed result
	// when its working folder, translated into the container, is not
	// inside ContainerWork: nothing ran.
	CodeCwdOutsideWork Code = "cwd_outside_work"
	// CodeNotContainerProject refuses a container_start or a
	// container_handoff in a project whose execution mode is not
	// container (HTTP 409).
	CodeNotContainerProject Code = "not_container_project"
	// CodeContainerAlreadyRunning refuses a container_start while the
	// project's container is registered running (HTTP 409).
	CodeContainerAlreadyRunning Code = "container_already_running"
	// CodeNoContainerEngine refuses a container_start when the server has
	// no container engine configured (HTTP 409).
	CodeNoContainerEngine Code = "no_container_engine"
	// CodeNotInfraAgent refuses a container_handoff from anyone but the
	// project's infra agent (HTTP 403).
	CodeNotInfraAgent Code = "not_infra_agent"
	// CodeNotRun is the code of the result of an action its agent
	// refused itself after brabo approved it (StatusNotRun): nothing ran,
	// and the error is the agent's reason.
	CodeNotRun Code = "not_run"
	// CodeNoBash is ErrNoBash's code.
	CodeNoBash Code = "container_no_bash"
)

// Codes of the lead APIs (the dev lead's conversation and the QA gate).
const (
	// CodeNotConfigured: this server runs no agents (brabo serve without
	// --model), so there is no lead to talk to or gate to run.
	CodeNotConfigured Code = "not_configured"
	// CodeLeadAwaiting: the dev lead's turn waits for a decision on one of
	// its actions; a new message is refused until that action is decided.
	CodeLeadAwaiting Code = "lead_awaiting_decision"
	// CodeGateInProgress: a gate area on the task runs or waits for a
	// decision already; it is not started twice.
	CodeGateInProgress Code = "gate_in_progress"
)

// Codes of the HTTP edge: what the API answers for a request it refuses
// before any operation decides it.
const (
	// CodeConflict refuses a write that would break a uniqueness rule (a
	// slug or an agent name taken, a second live merge proposal for one
	// pull request): ErrConflict's code (HTTP 409).
	CodeConflict Code = "conflict"
	// CodeTooLarge refuses a request whose body is over the server's
	// limit (HTTP 413).
	CodeTooLarge Code = "too_large"
	// CodeWriteTooLarge refuses a write_file whose content is over
	// MaxWriteBytes (the API's body limit), at the proposal: nothing is
	// stored and no one is asked, since no card could show it whole
	// (HTTP 413).
	CodeWriteTooLarge Code = "write_too_large"
	// CodeRequestTimeout refuses a request whose body did not arrive in
	// the time the server gives it (HTTP 408).
	CodeRequestTimeout Code = "request_timeout"
	// CodeInternal is an unexpected error: its detail goes to the
	// server's log, never to the client (HTTP 500).
	CodeInternal Code = "internal"
	// CodeUnauthorized refuses a request with no valid bearer token or
	// web session (HTTP 401).
	CodeUnauthorized Code = "unauthorized"
	// CodeCSRF refuses a web form that carries no valid CSRF token
	// (HTTP 403).
	CodeCSRF Code = "csrf"
	// CodeTooManyStreams refuses an event stream beyond the number one
	// client may hold open (HTTP 429).
	CodeTooManyStreams Code = "too_many_streams"
	// CodeCardChanged refuses an approval that names no revision, or one
	// that is no longer the card's (the branch moved, the file changed,
	// the tree to commit is another): nothing was approved, the action
	// stays pending with its new card, and the message names what moved
	// (HTTP 409).
	CodeCardChanged Code = "card_changed"
	// CodeChangedSinceApproved is the code of an action's failed result
	// when what it would run moved between the approval and the run (a
	// commit on the branch, an edit of the file): nothing ran.
	CodeChangedSinceApproved Code = "changed_since_approved"
)

// codeStatus is the HTTP status of an API answer carrying each code: the
// one table the http package answers by. A code only an action's result
// carries (nothing ran; the result says why) has 0: no answer carries it,
// so an error with that code reaching the API is an internal error.
var codeStatus = map[Code]int{
	CodeInvalidAction:           400, // Bad Request
	CodeInvalidPermissions:      400,
	CodeAlwaysAllowCap:          400,
	CodeInvalidProject:          400,
	CodeUnauthorized:            401, // Unauthorized
	CodeForbiddenRole:           403, // Forbidden
	CodeHumanOnly:               403,
	CodeNotInfraAgent:           403,
	CodeCSRF:                    403,
	CodeNotFound:                404, // Not Found
	CodeRequestTimeout:          408, // Request Timeout
	CodeAlreadyApproved:         409, // Conflict
	CodeActionAlreadyDenied:     409,
	CodePRAlreadyMerged:         409,
	CodeMergeAlreadyProposed:    409,
	CodePermissionsChanged:      409,
	CodeAlreadyReported:         409,
	CodeNotDecided:              409,
	CodeNeedsApproval:           409,
	CodeRepositoryConfigRefused: 409,
	CodeAbandoned:               409,
	CodeConflict:                409,
	CodeNotContainerProject:     409,
	CodeContainerAlreadyRunning: 409,
	CodeNoContainerEngine:       409,
	CodeLeadAwaiting:            409,
	CodeGateInProgress:          409,
	CodeCardChanged:             409,
	CodeTooLarge:                413, // Content Too Large
	CodeWriteTooLarge:           413,
	CodeTooManyPending:          429, // Too Many Requests
	CodeTooManyStreams:          429,
	CodeInternal:                500, // Internal Server Error
	CodeNotConfigured:           501, // Not Implemented
	CodeRetry:                   503, // Service Unavailable

	// The codes of a failed result only.
	CodeProjectFolderMissing: 0,
	CodeSandboxFailed:        0,
	CodeContainerGone:        0,
	CodeCwdOutsideWork:       0,
	CodeNoBash:               0,
	CodeNotRun:               0,
	CodeChangedSinceApproved: 0,
}

// HTTPStatus is the HTTP status of an API answer carrying the code, and
// false for a code no answer carries: one only a failed result carries,
// or one brabo does not know.
func (c Code) HTTPStatus() (int, bool) {
	s := codeStatus[c]
	return s, s != 0
}

// Codes lists every code brabo knows, sorted: those of API answers and
// those of failed results alike.
func Codes() []Code {
	out := make([]Code, 0, len(codeStatus))
	for c := range codeStatus {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Error is an error with a stable code and a human sentence.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with the given code and the message format
// and args make, as fmt.Sprintf makes it.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is or wraps an *Error, else "".
// A typed error may also report its code through a method Code() Code.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var c interface{ Code() Code }
	if errors.As(err, &c) {
		return c.Code()
	}
	return ""
}
