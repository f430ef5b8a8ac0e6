package brabo

// Decision is the policy engine's answer for one proposed action.
type Decision struct {
	// Policy is auto_approve, require_approval or deny.
	Policy Policy `json:"policy"`
	// Reason names the rule that produced Policy, in a stable sentence
	// ("permissions.json allow: Terminal(pnpm test)").
	Reason string `json:"reason"`
	// Segments holds, for a terminal action, one entry per program the
	// command line would run, in source order; nil for other types.
	Segments []Segment `json:"segments,omitempty"`
	// ScopeRoot identifies the folder the path scope compared against,
	// without the absolute path (DESIGN §5).
	ScopeRoot ScopeRoot `json:"scopeRoot"`
	// Warnings are non-fatal remarks on the permissions file, such as an
	// entry that can never match.
	Warnings []string `json:"warnings,omitempty"`
	// RequiredRole is the least role a human needs to approve the action
	// (DESIGN §9, "Effective role"): the type's minimum, raised to
	// maintainer for an external effect or privilege, a protected write or
	// an opaque program. Denying needs only the type's minimum. Empty in
	// decisions recorded before it existed: read it with EffectiveRole.
	RequiredRole Role `json:"requiredRole,omitempty"`
	// Container is the container a terminal action of a container project
	// runs in, named when the proposal found it running with brabo's
	// settings (the container floor's condition); empty runs it on the
	// host. Set by the pipeline, never by the proposer.
	Container string `json:"container,omitempty"`
	// ContainerID is that container's id: a container recreated since is
	// not the one the proposal found.
	ContainerID string `json:"containerId,omitempty"`
}

// EffectiveRole is the least role a human needs to approve an action of
// type t decided as d: d.RequiredRole, or the type's minimum for a
// decision recorded before the field existed.
func EffectiveRole(t ActionType, d Decision) Role {
	if d.RequiredRole.Valid() && d.RequiredRole.AtLeast(t.MinRole()) {
		return d.RequiredRole
	}
	return t.MinRole()
}

// Verdict is the file's opinion on one segment of a terminal command.
type Verdict string

// Segment verdicts.
const (
	VerdictAllow  Verdict = "allow"  // an allow pattern matched
	VerdictDeny   Verdict = "deny"   // a deny pattern (file or built-in) matched
	VerdictAsk    Verdict = "ask"    // an ask pattern matched
	VerdictCd     Verdict = "cd"     // a cd inside the project folder
	VerdictNoRule Verdict = "none"   // no pattern matched
	VerdictOpaque Verdict = "opaque" // the program cannot be known statically
)

// Segment is one program of a terminal command line and what the rules said
// of it.
type Segment struct {
	// Text is the segment as written in the command.
	Text string `json:"text"`
	// Tokens are the segment's words after quote removal, verb first,
	// variables kept literal. Leading assignments and redirections are not
	// tokens.
	Tokens []string `json:"tokens"`
	// Verdict is the file's opinion on the segment.
	Verdict Verdict `json:"verdict"`
	// Rule names the pattern that matched, or why none could.
	Rule string `json:"rule"`
	// Notes are the caps and scope findings on this segment
	// ("outside the project folder: /etc/passwd").
	Notes []string `json:"notes,omitempty"`
	// Flags say in plain words what the segment touches, whatever the
	// verdict: the home folder, the network, a deletion (DESIGN §6.4).
	Flags []Flag `json:"flags,omitempty"`
	// ProtectedWrites are the protected paths the segment visibly writes,
	// relative to the project folder: the only protected changes a
	// maintainer's approval of the line lets the action make (the
	// integrity check puts every other one back).
	ProtectedWrites []string `json:"protectedWrites,omitempty"`
}

// ScopeRoot names the folder a terminal action was scoped to, as the mode
// plus an identifier relative to the managed root; never an absolute path.
type ScopeRoot struct {
	Mode ExecutionMode `json:"mode,omitempty"`
	ID   string        `json:"id,omitempty"`
}

// DecisionSentence is the one sentence a person reads for how an action was
// born (RN-614), known by the status it was created with and the rule that
// decided (an event's payload), with the scope root the path scope
// compared against. It is ReasonText's sentence for what the event knows,
// so the approval card and the session log never disagree. An empty
// reason is an event recorded before reasons were: it reads "not
// recorded", never as "no rule".
func DecisionSentence(status ActionStatus, reason string, scope ScopeRoot) string {
	return decisionText(status, reason, scope)
}
