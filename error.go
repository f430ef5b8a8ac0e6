package brabo

import "errors"

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

// Error is an error with a stable code and a human sentence.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code Code, message string) *Error { return &Error{Code: code, Message: message} }

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
