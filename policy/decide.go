// Package policy decides what happens to an action an agent proposes:
// auto_approve, require_approval or deny (DESIGN §4).
//
// Decide is pure and total: it reads only its Input, does no I/O, reads no
// clock, and never panics. When it cannot see what an action would do, it
// asks a human; it never fails open.
package policy

import (
	"errors"
	"fmt"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"slices"
	"strings"

	"github.com/brabo-dev/brabo"
)

// Input is everything Decide looks at.
type Input struct {
	// Type is the proposed action's type.
	Type brabo.ActionType
	// Command is the command line of a terminal action.
	Command string
	// Cwd is the directory a terminal action runs in; relative to the scope
	// root when not absolute, the root itself when empty.
	Cwd string
	// Role is the principal's role: the human the proposal acts for.
	Role brabo.Role
	// Autonomy is the proposing agent's agent_autonomy for this type.
	Autonomy Autonomy
	// Rules is the project's compiled permissions.json; nil is the empty
	// file.
	Rules *Rules
	// AgentAllow is the proposing agent's own allow patterns (what an
	// always-allow click on a module dev agent's terminal action records),
	// compiled with NewRules; nil is none. They are matched like the file's
	// allow list, for this agent only: deny, ask, the caps and the
	// protected paths still apply.
	AgentAllow *Rules
	// Scope is the project folder.
	Scope Scope
	// ContainerRunning is true when the project's container is registered
	// running (execution mode container): the container floor.
	ContainerRunning bool
	// TargetBranch is the branch a git_merge merges into.
	TargetBranch string
	// ExtraProtected are the branches git_branch_protect added to the
	// project's protected list: the merge cap holds them on top of
	// ProtectedBranches, which nothing removes.
	ExtraProtected []string
	// Path is the file a write_file action writes, relative to the scope
	// root (or absolute).
	Path string
	// Protect names the home folder and brabo's own paths, for the
	// protected-path rule (ProtectedTable).
	Protect Protect
	// Tool is the tool an mcp_tool action calls, server__tool.
	Tool string
	// Programs is what each program name of a terminal command resolves
	// to where the command will run (ProgramNames lists the names; see
	// Program). nil means the caller did not say: a program named by its
	// path then matches an allow pattern only as written, and one of
	// git's helpers none.
	Programs map[string]Program
	// McpMapped is true when a maintainer mapped Tool (McpToolMapped):
	// a developer may then approve it; otherwise it needs a maintainer.
	McpMapped bool
}

// Autonomy holds an agent's agent_autonomy rules that apply to one type:
// the specific rule (agent, type) and the wildcard (agent, "*"). The empty
// Policy is "no rule".
type Autonomy struct {
	Specific brabo.Policy
	Wildcard brabo.Policy
}

// resolve returns the rule that applies (specific over wildcard) and its
// origin.
func (a Autonomy) resolve() (brabo.Policy, brabo.AutonomyOrigin) {
	if a.Specific != "" {
		return a.Specific, brabo.OriginSpecific
	}
	if a.Wildcard != "" {
		return a.Wildcard, brabo.OriginWildcard
	}
	return "", ""
}

// ProtectedBranches are the merge targets a git_merge never auto-approves
// into (DESIGN §4.6).
var ProtectedBranches = []string{"dev", "qa", "rc", "main"}

// Decide returns the decision for in, with the order of DESIGN §4.1: IAM,
// base and container floor, agent_autonomy, permissions.json with the
// built-in denies, caps. A deny returns at once; a silent stage never
// changes the current value; a cap only turns auto_approve into
// require_approval.
func Decide(in Input) (d brabo.Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = brabo.Decision{Policy: brabo.RequireApproval,
				Reason: fmt.Sprintf("internal: the policy engine failed (%v); a human decides", r)}
		}
	}()
	d.ScopeRoot = brabo.ScopeRoot{Mode: in.Scope.Mode, ID: in.Scope.ID}
	d.Warnings = in.Rules.Warnings()
	d.RequiredRole = in.Type.MinRole()
	if !in.Type.Valid() {
		d.Policy, d.Reason = brabo.RequireApproval, fmt.Sprintf("invalid action: unknown type %q", in.Type)
		return d
	}
	// 1. IAM: the file cannot grant what IAM denies.
	if min := in.Type.MinRole(); !in.Role.AtLeast(min) {
		d.Policy, d.Reason = brabo.Deny, fmt.Sprintf("iam: %s requires %s", in.Type, min)
		return d
	}
	// 2. Base, and the container floor.
	d.Policy, d.Reason = brabo.RequireApproval, "default: no rule approves it"
	if in.Type == brabo.Terminal && in.ContainerRunning {
		d.Policy, d.Reason = brabo.AutoApprove, "container floor"
	}
	// 3. agent_autonomy: specific over wildcard, the origin kept.
	mode, origin := in.Autonomy.resolve()
	autoMode := false
	if mode.Valid() {
		d.Policy, d.Reason = mode, fmt.Sprintf("agent_autonomy: %s (%s)", mode, origin)
		if mode == brabo.Deny {
			return d
		}
		autoMode = mode == brabo.AutoApprove && origin == brabo.OriginWildcard
	} else if mode != "" {
		d.Policy, d.Reason = brabo.RequireApproval, fmt.Sprintf("agent_autonomy: unknown mode %q", mode)
		return d
	}
	// 4. permissions.json and the built-in denies; 5. caps.
	if in.Type == brabo.Terminal {
		decideTerminal(&d, in, autoMode)
	} else {
		decideTyped(&d, in)
		typedProtected(&d, in)
		decideOnlyTypes(&d, in)
	}
	return d
}

func decideTyped(d *brabo.Decision, in Input) {
	defer func() {
		// An invalid file approves nothing; what it could read still denies.
		if err := in.Rules.Err(); err != nil && d.Policy != brabo.Deny {
			d.Policy, d.Reason = brabo.RequireApproval, invalidFileReason(err)
		}
	}()
	rel, inScope := relativeTo(in.Path, in.Scope.Root)
	abs := absPath(in.Path, in.Scope.Root)
lists:
	for _, k := range []listKind{listDeny, listAsk, listAllow} {
		l := in.Rules.list(k)
		if l == nil {
			continue
		}
		for _, i := range l.typed[in.Type] {
			p := &l.patterns[i]
			if pathLabel(string(in.Type)) && !p.path.matchPath(rel, inScope, abs, in.Protect.Home) {
				continue // WriteFile(src/**) names paths, and this is not one
			}
			if in.Type == brabo.McpTool && !p.tool.match(in.Tool) {
				continue // McpTool(github__*) names tools, and this is not one
			}
			d.Policy = [...]brabo.Policy{brabo.AutoApprove, brabo.Deny, brabo.RequireApproval}[k]
			d.Reason = fmt.Sprintf("%s %s: %s", fileLabel, listNames[k], p.source)
			if k == listDeny {
				return
			}
			break lists
		}
	}
	if d.Policy != brabo.AutoApprove {
		return
	}
	switch in.Type {
	case brabo.GitPush, brabo.PrOpen:
		d.Policy, d.Reason = brabo.RequireApproval, fmt.Sprintf("cap: %s leaves the machine; a human approves every one", in.Type)
	case brabo.GitMerge:
		if b := mergeTarget(in.TargetBranch); b == "" {
			d.Policy, d.Reason = brabo.RequireApproval, "cap: git_merge names no target branch"
		} else if isProtected(b) || slices.Contains(in.ExtraProtected, b) {
			d.Policy, d.Reason = brabo.RequireApproval, "cap: git_merge into the protected branch "+b
		}
	case brabo.InstructionPatch:
		d.Policy, d.Reason = brabo.RequireApproval, "cap: instruction_patch (see the diff before one agent changes another's behaviour)"
	case brabo.Parallelize, brabo.RaiseMaxParallel:
		d.Policy, d.Reason = brabo.RequireApproval, fmt.Sprintf("cap: %s (spending on more agents is a human decision)", in.Type)
	case brabo.ContainerRemove:
		d.Policy, d.Reason = brabo.RequireApproval, "cap: container_remove (forces a full reprovision)"
	case brabo.ContainerHandoff:
		d.Policy, d.Reason = brabo.RequireApproval, "cap: container_handoff (a maintainer accepts every handoff)"
	}
}

func mergeTarget(b string) string {
	b = strings.TrimSpace(b)
	b = strings.TrimPrefix(b, "refs/heads/")
	return b
}

func isProtected(b string) bool {
	for _, p := range ProtectedBranches {
		if b == p {
			return true
		}
	}
	return false
}

// invalidFileReason names what is wrong without the file's absolute path,
// which a reason (stored in events every member reads) must not expose.
func invalidFileReason(err error) string {
	var fe *FileError
	if errors.As(err, &fe) {
		local := *fe
		local.File = "permissions.json invalid"
		return local.Error()
	}
	return "permissions.json invalid: " + err.Error()
}

// fileLabel is how reasons name the permissions file.
const fileLabel = "permissions.json"

func decideTerminal(d *brabo.Decision, in Input, autoMode bool) {
	root := in.Scope.Root
	rootErr := CheckRoot(root)
	cwd := in.Cwd
	switch {
	case cwd == "":
		cwd = root
	case !strings.HasPrefix(cwd, "/"):
		cwd = path.Join(root, cwd)
	default:
		cwd = path.Clean(cwd)
	}
	an, err := shell.Analyze(in.Command, shell.CwdSet{Dirs: []string{cwd}}, namesProtected)
	if err != nil {
		d.Policy, d.Reason = brabo.RequireApproval, err.Error()
		return
	}
	segs := an.Segs
	rules := in.Rules
	var written []string
	found := false
	for _, s := range segs {
		for k := range s.RunOpts {
			if !found {
				written, found = lineWrites(segs), true
			}
			s.RunOpts[k].Why = runOptionWhy(s, &s.RunOpts[k], root, in.Protect, written)
		}
	}
	verdicts := make([]brabo.Segment, len(segs))
	for i, s := range segs {
		verdicts[i] = judge(s, rules, in.AgentAllow, root, rootErr, in.Programs)
	}
	flagRoot := root
	if rootErr != nil {
		flagRoot = "" // no folder to be outside of
	}
	for i, s := range segs {
		verdicts[i].Flags = segmentFlags(s, verdicts[i].Tokens, in.Protect, flagRoot)
	}
	writes, reads := protectedHits(segs, verdicts, in.Protect, root)
	leave := leavesOrGains(segs, verdicts)
	raise := raisedRole(segs, leave, writes)
	d.Segments = verdicts
	defer boundDecision(d, len(in.Command))
	if raise != "" {
		// A capped segment asks, whoever proposed it, and a maintainer
		// approves it (DESIGN §10): IAM denies only below the type's
		// minimum role, which terminal's is not.
		d.RequiredRole = brabo.Maintainer
	}
	defer protectedCap(d, writes, reads)

	// The file's opinion (DESIGN §4.4); the built-in denies hold even when
	// the file is invalid, and past the analysis' bounds.
	for _, v := range verdicts {
		if v.Verdict == brabo.VerdictDeny {
			d.Policy, d.Reason = brabo.Deny, v.Rule
			return
		}
	}
	if an.Overflow != "" {
		d.Policy, d.Reason = brabo.RequireApproval, "cap: "+an.Overflow+"; a human reads it"
		return
	}
	if err := rules.Err(); err != nil {
		d.Policy, d.Reason = brabo.RequireApproval, invalidFileReason(err)
		return
	}
	compound := fileOpinion(d, verdicts, autoMode)
	if d.Policy != brabo.AutoApprove {
		return
	}
	terminalCaps(d, segs, leave, root, rootErr, autoMode)
	if d.Policy == brabo.AutoApprove && compound != "" {
		d.Policy, d.Reason = brabo.RequireApproval, compound
	}
}
