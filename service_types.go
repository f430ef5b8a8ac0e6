package brabo

import (
	"regexp"
	"sync"
)

// The request and answer types of the service interfaces (service.go):
// what http, the engine, the hook and the MCP server hand the pipeline and
// get back. They carry no behaviour of their own beyond small accessors.

// Actor is who calls the pipeline: an agent or a member (a human).
type Actor struct {
	Agent  *Agent
	Member *Member
}

// Key is the proposing actor's key the outbox routes by.
func (a Actor) Key() string {
	if a.Agent != nil {
		return AgentKey(a.Agent.ID)
	}
	if a.Member != nil {
		return "member:" + a.Member.ID
	}
	return ""
}

// ID is the acting agent's id, else the member's, "" for neither.
func (a Actor) ID() string {
	if a.Agent != nil {
		return a.Agent.ID
	}
	if a.Member != nil {
		return a.Member.ID
	}
	return ""
}

// Kind is "agent" for an agent, else "member": the actor kind an action
// records.
func (a Actor) Kind() string {
	if a.Agent != nil {
		return "agent"
	}
	return "member"
}

// ProposeRequest is an action an actor proposes.
type ProposeRequest struct {
	ProjectID string
	Actor     Actor
	Type      ActionType
	Payload   Payload
	// Execution, when set, says the proposing agent runs the action
	// itself: brabo decides and records it, and never runs it.
	Execution *Execution
}

// Outcome says what a human decision did.
type Outcome string

// Outcomes of Approve, ApproveAlways and Deny: approve and deny answer
// with the same shape (Decided).
const (
	OutcomeApproved        Outcome = "approved"
	OutcomeAlreadyApproved Outcome = "already_approved"
	OutcomeDenied          Outcome = "denied"
)

// Decided is the answer to a human decision.
type Decided struct {
	Action  *ProposedAction `json:"action"`
	Outcome Outcome         `json:"outcome"`
	// Patterns are what an always-allow click recorded in permissions.json.
	Patterns []string `json:"patterns,omitempty"`
	// AgentPatterns are what a click on a module dev agent's terminal
	// action recorded instead: patterns of that agent's own (AgentID),
	// matched for it alone.
	AgentPatterns []string `json:"agentPatterns,omitempty"`
	// AgentID is the agent whose own patterns AgentPatterns are.
	AgentID string `json:"agentId,omitempty"`
	// Autonomy is what a click on a module dev agent's action of another
	// type recorded: the type-level agent_autonomy rule.
	Autonomy *AgentAutonomy `json:"autonomy,omitempty"`
}

// TrustState is what brabo makes of a project's permissions.json: the
// current trusted version, the file on disk, and whether brabo decides
// with the file or holds it back for a maintainer.
type TrustState struct {
	// TrustedHash is the current trusted version (policy.ContentHash).
	TrustedHash string `json:"trustedHash"`
	// DiskHash is the file on disk, "" when it cannot be read.
	DiskHash string `json:"diskHash"`
	// Status is "trusted" (the file on disk is the current trusted
	// version, the latest accepted),
	// "applied" (it differs, and is as strict or stricter: it is used) or
	// "held" (it loosens, is invalid or cannot be read: the trusted
	// version is used until a maintainer accepts or restores).
	Status string `json:"status"`
	// Change is the difference from the trusted version to the file on
	// disk (kind "same" when the status is trusted).
	Change PermissionsChange `json:"change"`
	// Unreadable says why the file on disk cannot be read.
	Unreadable string `json:"unreadable,omitempty"`
	// DecidedWith is the hash of the content decisions use now.
	DecidedWith string `json:"decidedWith"`
}

// Trust statuses (TrustState.Status).
const (
	TrustStatusTrusted = "trusted"
	TrustStatusApplied = "applied"
	TrustStatusHeld    = "held"
)

// Held reports whether the file on disk is held back.
func (t *TrustState) Held() bool { return t.Status == TrustStatusHeld }

// BudgetView is a project's budget as the API and the page show it, with
// its latest ledger lines; Budget is nil when the owner set none.
type BudgetView struct {
	Budget    *Budget       `json:"budget"`
	Remaining *Money        `json:"remaining,omitempty"`
	Entries   []BudgetEntry `json:"entries"`
}

// ContainerRow is one project's container as the containers page lists
// it: the lifecycle row (state none when it never had one).
type ContainerRow struct {
	Project   *Project          `json:"project"`
	Role      Role              `json:"role"`
	Container *ProjectContainer `json:"container"`
}

// Activation is what activating execution changed (DESIGN §4.5): the
// seeded patterns it added to permissions.json's allow list, and the
// dev-<module> agents it gave git_commit: auto_approve. Both empty is a
// project that was active already.
type Activation struct {
	ProjectID string `json:"projectId"`
	// Patterns are the seeded patterns the allow list lacked, now added.
	Patterns []string `json:"patterns"`
	// Agents are the dev-<module> agents given git_commit: auto_approve.
	Agents []string `json:"agents"`
	// Kept are the dev-<module> agents whose own git_commit rule (set by
	// a maintainer) was left as it is: seeding never overrides one.
	Kept []string `json:"kept,omitempty"`
	// PermissionsHash is the trusted version written, "" when the file did
	// not change.
	PermissionsHash string `json:"permissionsHash,omitempty"`
	// Changed is false when everything was there already.
	Changed bool `json:"changed"`
}

// WebhookInput is one webhook a maintainer sets.
type WebhookInput struct {
	URL     string        `json:"url"`
	Format  WebhookFormat `json:"format"`
	Details bool          `json:"details"`
}

// NewProject is a project an admin asks for: local (Root, an existing
// folder), container or runner.
type NewProject struct {
	Slug string        `json:"slug"`
	Name string        `json:"name"`
	Mode ExecutionMode `json:"mode"`
	Root string        `json:"root"`
}

// ProjectUpdate is what a change of a project's settings sets; nil
// leaves a setting as it is.
type ProjectUpdate struct {
	GitHooks      *bool
	MaxTimeoutSec *int
	// WaitCapSec and MaxParallel are the agent settings: the
	// inactivity cap (0 for the server's default) and a lower cap on dev
	// agents at once.
	WaitCapSec  *int
	MaxParallel *int
}

// projectSlug is the slug rule: what a project's URL and workspace folder
// are named by.
var projectSlug = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`) })

// ValidSlug reports whether s is a project slug or an agent name: 1 to 63
// lowercase letters, digits and dashes, not starting with a dash.
func ValidSlug(s string) bool { return projectSlug().MatchString(s) }

// Validate refuses a slug outside the slug rule (invalid_project).
func (in NewProject) Validate() error {
	if !ValidSlug(in.Slug) {
		return Errorf(CodeInvalidProject, "slug %q: use 1 to 63 lowercase letters, digits and dashes", in.Slug)
	}
	return nil
}

// ContainerName is the container engine's name of a project's container.
func ContainerName(p *Project) string { return "brabo-" + p.WorkspaceDir }
