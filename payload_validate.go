package brabo

import (
	"fmt"
	"math"
	"path"
	"strings"
)

// invalidPayload is the error of a payload Validate refuses.
func invalidPayload(format string, a ...any) error {
	return &Error{Code: CodeInvalidAction, Message: fmt.Sprintf(format, a...)}
}

// Validate refuses, for a proposal of type t, what no executor could run
// or a human could not judge, before anything is decided or stored: an
// *Error with CodeInvalidAction that names the field. It is the one place
// a payload's fields are checked; the executor's own checks at run time
// are a second line behind it.
func (p *Payload) Validate(t ActionType) error {
	if !t.Valid() {
		return invalidPayload("unknown action type %q", t)
	}
	// What the executor would refuse after approval is refused here, for
	// every type that names it.
	if p.Remote != "" {
		if why := RemoteNameProblem(p.Remote); why != "" {
			return invalidPayload("%s: remote %q %s", t, p.Remote, why)
		}
	}
	if p.From != "" {
		if why := RevisionProblem(p.From); why != "" {
			return invalidPayload("%s: from %q %s", t, p.From, why)
		}
	}
	switch t {
	case Terminal:
		if strings.TrimSpace(p.Command) == "" {
			return invalidPayload("a terminal action needs a command")
		}
		if p.TimeoutSec < 0 {
			return invalidPayload("timeoutSec must not be negative")
		}
	case WriteFile:
		if p.Path == "" {
			return invalidPayload("a write_file action needs a path")
		}
		if len(p.Content) > MaxWriteBytes {
			return WriteTooLarge(int64(len(p.Content)), MaxWriteBytes, "its content")
		}
	case GitCommit:
		if strings.TrimSpace(p.Message) == "" {
			return invalidPayload("a git_commit action needs a message")
		}
	case GitBranchCreate, GitPush, PrOpen:
		if p.Branch == "" {
			return invalidPayload("a %s action needs a branch", t)
		}
		if t == PrOpen && (p.Base == "" || strings.TrimSpace(p.Title) == "") {
			return invalidPayload("a pr_open action needs a base branch and a title")
		}
		if err := validBranch(t, "branch", p.Branch, true); err != nil {
			return err
		}
		return validBranch(t, "base", p.Base, false)
	case McpTool:
		if !validToolName(p.Tool) {
			return invalidPayload("an mcp_tool action needs its tool, server__tool (letters, digits, '_', '-', '.'), not %q", p.Tool)
		}
	case ReadFile:
		if p.Path == "" {
			return invalidPayload("a read_file action needs a path")
		}
	case GitMerge:
		if p.PR <= 0 {
			return invalidPayload("a git_merge action needs the number of the pull request (pr)")
		}
	case ProposeExecutionPlan, Parallelize, RaiseMaxParallel:
		return validateParallel(t, p)
	default:
		return validateNewTypes(t, p)
	}
	return nil
}

// validateParallel checks the Extra of the types about parallel dev
// agents (ParseExecutionPlan and its siblings).
func validateParallel(t ActionType, p *Payload) error {
	var err error
	switch t {
	case ProposeExecutionPlan:
		_, err = ParseExecutionPlan(p.Extra)
	case Parallelize:
		_, err = ParseParallelize(p.Extra)
	case RaiseMaxParallel:
		_, err = ParseRaiseMaxParallel(p.Extra)
	}
	if err != nil {
		return invalidPayload("%v", err)
	}
	return nil
}

// MaxWriteBytes is the most content one write_file carries, and the API's
// body limit (the http package's DefaultMaxBody is this constant): 1 MiB.
// A card shows every write whole, so a larger one is refused at the
// proposal (CodeWriteTooLarge) instead of being shown in part.
const MaxWriteBytes = 1 << 20

// WriteTooLarge is the refusal of a write_file of n bytes over limit:
// what names the bytes counted ("its content", "the proposal's body").
func WriteTooLarge(n, limit int64, what string) *Error {
	is := fmt.Sprintf("%d bytes", n)
	if n <= limit {
		is = fmt.Sprintf("more than %d bytes", limit) // a body cut at the limit: its length unknown
	}
	return Errorf(CodeWriteTooLarge,
		"write_file: %s is %s, over the limit of %d bytes (%s, the API's body limit): a card shows every write whole, so nothing was proposed or stored; write a smaller file, or produce it with a command",
		what, is, limit, sizeText(limit))
}

// sizeText is a byte count in KiB or MiB when it is a whole number of them.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// MaxDocumentBytes bounds the document an open_adr_pr or open_infra_pr
// adds.
const MaxDocumentBytes = 256 << 10

// validBranch refuses, at the proposal, a branch name the executor would
// refuse after a human approved it (BranchNameProblem): the human
// never sees an action that cannot run. An empty name passes unless
// required.
func validBranch(t ActionType, field, name string, required bool) error {
	if name == "" && !required {
		return nil
	}
	if why := BranchNameProblem(name); why != "" {
		return invalidPayload("%s: %s %q is not a valid branch name: %s", t, field, name, why)
	}
	return nil
}

func validateNewTypes(t ActionType, p *Payload) error {
	branch := func(field, name string, required bool) error { return validBranch(t, field, name, required) }
	switch t {
	case GitBranchProtect:
		if p.Branch == "" {
			return invalidPayload("a git_branch_protect action needs the branch to protect")
		}
		return branch("branch", p.Branch, true)
	case GitRepoCreate:
		return branch("branch", p.Branch, false)
	case OpenAdrPr, OpenInfraPr:
		if strings.TrimSpace(p.Title) == "" {
			return invalidPayload("a %s action needs a title", t)
		}
		if strings.TrimSpace(p.Content) == "" {
			return invalidPayload("a %s action needs the document's content", t)
		}
		if len(p.Content) > MaxDocumentBytes || strings.ContainsRune(p.Content, 0) {
			return invalidPayload("%s: the content is over %d bytes or holds a NUL byte", t, MaxDocumentBytes)
		}
		if err := branch("branch", p.Branch, false); err != nil {
			return err
		}
		if err := branch("base", p.Base, false); err != nil {
			return err
		}
		if p.Path != "" {
			if why := documentPathProblem(p.Path); why != "" {
				return invalidPayload("%s: path %q %s", t, p.Path, why)
			}
		}
	case InstructionPatch:
		if p.Agent == "" {
			return invalidPayload("an instruction_patch action needs the agent whose instructions it replaces (agent)")
		}
		if len(p.Content) > MaxInstructionsBytes || strings.ContainsRune(p.Content, 0) {
			return invalidPayload("instruction_patch: the content is over %d bytes or holds a NUL byte", MaxInstructionsBytes)
		}
	case Spend:
		amount, err := ParseMoney(p.Amount)
		if err != nil {
			return invalidPayload("spend: %v", err)
		}
		if amount <= 0 {
			return invalidPayload("spend: amount must be more than zero")
		}
	case ContainerStart, ContainerHandoff:
		if p.CPUs < 0 || math.IsNaN(p.CPUs) || math.IsInf(p.CPUs, 0) || p.MemoryMB < 0 {
			return invalidPayload("%s: cpus and memoryMb must be positive numbers, or omitted for the module map's minimum", t)
		}
		if strings.ContainsFunc(p.Image, func(r rune) bool { return r <= ' ' || r == 0x7f }) || strings.HasPrefix(p.Image, "-") {
			return invalidPayload("%s: image %q is not an image reference", t, p.Image)
		}
	}
	return nil
}

// documentPathProblem says why a document path cannot be added by a PR
// ("" when it can): it must be a clean relative path of a file, outside
// any .git folder.
func documentPathProblem(p string) string {
	switch {
	case strings.ContainsRune(p, 0) || strings.ContainsRune(p, '\\'):
		return "holds a NUL byte or a backslash"
	case path.IsAbs(p):
		return "is absolute; give a path relative to the repository"
	case path.Clean(p) != p || p == "." || strings.HasSuffix(p, "/"):
		return "is not a clean relative path of a file"
	case p == ".." || strings.HasPrefix(p, "../"):
		return "leaves the repository"
	}
	for _, el := range strings.Split(p, "/") {
		if strings.EqualFold(el, ".git") {
			return "lies in a .git folder"
		}
	}
	return ""
}

// validToolName reports whether t is an MCP tool as the agents spell it:
// server__tool, with a plain server name and tool name.
func validToolName(t string) bool {
	server, tool, ok := strings.Cut(t, "__")
	return ok && plainName(server) && plainName(tool) && len(t) <= 256
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
		default:
			return false
		}
	}
	return true
}
