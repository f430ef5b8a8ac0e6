package brabo

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The domain of issue 15's executors: what executing each action type of
// DESIGN §3.2 changes besides a git repository. git_branch_protect adds to
// a project's protected branches, instruction_patch replaces an agent's
// stored instructions, spend debits the project's budget, and the
// container types drive the project's container through a ContainerEngine.

// ProtectedBranch is a branch a git_branch_protect added to a project's
// protected list. The merge cap reads the list on top of the built-in
// dev, qa, rc and main, which nothing unprotects.
type ProtectedBranch struct {
	ProjectID string    `json:"projectId"`
	Branch    string    `json:"branch"`
	ActionID  string    `json:"actionId,omitempty"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
}

// MaxInstructionsBytes bounds an agent's stored instructions.
const MaxInstructionsBytes = 64 << 10

// AgentInstructions are an agent's stored instructions: the project's
// words for that agent, which brabo adds to its built-in prompt at every
// model call, so that the agent's next turn uses the text an approved
// instruction_patch wrote. They change only through instruction_patch.
type AgentInstructions struct {
	AgentID string `json:"agentId"`
	Content string `json:"content"`
	// ActionID is the instruction_patch that wrote them; UpdatedBy the
	// member who approved it (or the workspace owner for an
	// auto-approval).
	ActionID  string    `json:"actionId"`
	UpdatedBy string    `json:"updatedBy"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Money is an amount of the budget's currency in millionths of a unit:
// exact for model prices per token and for cents alike. Its text form is a
// decimal with up to six places ("12.50").
type Money int64

// ParseMoney reads a non-negative decimal with at most six places
// ("12", "12.5", "0.000350"); anything else is an error naming the text.
func ParseMoney(s string) (Money, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	bad := func(why string) (Money, error) {
		return 0, fmt.Errorf("amount %q %s (a decimal such as 12.50, at most six places)", s, why)
	}
	if whole == "" || len(frac) > 6 || strings.HasSuffix(s, ".") {
		return bad("is not a decimal")
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return bad("is not a non-negative decimal")
		}
	}
	if len(whole) > 12 {
		return bad("is too large")
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	return Money(w*1_000_000 + f), nil
}

// String is the amount as a decimal with two places, more when the
// millionths need them ("12.50", "0.000350").
func (m Money) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	frac := fmt.Sprintf("%06d", v%1_000_000)
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s%d.%s", sign, v/1_000_000, frac)
}

// MarshalText writes the decimal form, so that JSON carries "12.50".
func (m Money) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads the decimal form (ParseMoney).
func (m *Money) UnmarshalText(b []byte) error {
	v, err := ParseMoney(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// UnmarshalJSON reads the decimal as a JSON string ("12.50") or number
// (12.5).
func (m *Money) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return m.UnmarshalText([]byte(s))
}

// Budget is a project's budget, set by its owner: the limit spend actions
// and brabo's own agents' model usage count against, and the prices that
// turn model tokens into money.
type Budget struct {
	ProjectID string `json:"projectId"`
	Limit     Money  `json:"limit"`
	// Spent is what the ledger holds: spends and model usage.
	Spent Money `json:"spent"`
	// InputPrice and OutputPrice are the price of a million input and
	// output tokens of the model brabo's agents run on; zero counts the
	// tokens without cost.
	InputPrice  Money     `json:"inputPricePerMTok"`
	OutputPrice Money     `json:"outputPricePerMTok"`
	UpdatedBy   string    `json:"updatedBy"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Remaining is what the budget still allows (negative when model usage
// went past it).
func (b *Budget) Remaining() Money { return b.Limit - b.Spent }

// Budget entry kinds.
const (
	BudgetSpend = "spend" // an executed spend action
	BudgetModel = "model" // one model call of one of brabo's own agents
)

// BudgetEntry is one line of a project's budget ledger.
type BudgetEntry struct {
	ID        int64  `json:"id"`
	ProjectID string `json:"projectId"`
	Kind      string `json:"kind"`
	Amount    Money  `json:"amount"`
	// ActionID is the spend action; AgentID the agent whose model call it
	// was.
	ActionID     string    `json:"actionId,omitempty"`
	AgentID      string    `json:"agentId,omitempty"`
	InputTokens  int64     `json:"inputTokens,omitempty"`
	OutputTokens int64     `json:"outputTokens,omitempty"`
	Note         string    `json:"note,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
}

// ModelCost is what a model call costs at the budget's prices.
func (b *Budget) ModelCost(inputTokens, outputTokens int64) Money {
	return Money((inputTokens*int64(b.InputPrice) + outputTokens*int64(b.OutputPrice)) / 1_000_000)
}

// ModelUsage is one model call of one of brabo's own agents, recorded
// against its project's budget.
type ModelUsage struct {
	ProjectID    string
	AgentID      string
	InputTokens  int64
	OutputTokens int64
}

// Resources are what a container gets: CPUs (fractions allowed) and
// memory in MiB. A zero field is "not declared".
type Resources struct {
	CPUs     float64 `json:"cpus,omitempty"`
	MemoryMB int64   `json:"memoryMb,omitempty"`
}

// Module is one module of a project's module map with the resources its
// container share needs; a zero field declares nothing.
type Module struct {
	Name      string    `json:"name"`
	Resources Resources `json:"resources"`
}

// ModuleMap is a project's modules, set by a maintainer: a container_start
// that omits a resource gets the minimum the map derives, and one below it
// fails by name.
type ModuleMap struct {
	ProjectID string    `json:"projectId"`
	Modules   []Module  `json:"modules"`
	UpdatedBy string    `json:"updatedBy,omitempty"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// DefaultContainerResources is today's default container, the floor of
// the derived minimum while any module declared nothing.
var DefaultContainerResources = Resources{CPUs: 1, MemoryMB: 512}

// MinResources is the minimum a container of the project needs: per field,
// the sum of what the modules declared, floored at the default while any
// module declared nothing for it (and the default itself for an empty
// map).
func (m *ModuleMap) MinResources() Resources {
	var sum Resources
	undeclaredCPU, undeclaredMem := m == nil || len(m.Modules) == 0, m == nil || len(m.Modules) == 0
	if m != nil {
		for _, mod := range m.Modules {
			sum.CPUs += mod.Resources.CPUs
			sum.MemoryMB += mod.Resources.MemoryMB
			undeclaredCPU = undeclaredCPU || mod.Resources.CPUs <= 0
			undeclaredMem = undeclaredMem || mod.Resources.MemoryMB <= 0
		}
	}
	if undeclaredCPU {
		sum.CPUs = max(sum.CPUs, DefaultContainerResources.CPUs)
	}
	if undeclaredMem {
		sum.MemoryMB = max(sum.MemoryMB, DefaultContainerResources.MemoryMB)
	}
	return sum
}

// ContainerState is where a project's container is in its lifecycle.
type ContainerState string

// Container lifecycle states. A project with no row has none.
const (
	ContainerNone         ContainerState = ""
	ContainerProvisioning ContainerState = "provisioning"
	ContainerRunning      ContainerState = "running"
	ContainerStopped      ContainerState = "stopped"
	ContainerRemoved      ContainerState = "removed"
	ContainerFailed       ContainerState = "failed"
)

// ProjectContainer is the lifecycle row of a project's container: what
// brabo last did to it, and when the folder it mounts was last proven
// writable.
type ProjectContainer struct {
	ProjectID   string         `json:"projectId"`
	State       ContainerState `json:"state"`
	Name        string         `json:"name"`
	ContainerID string         `json:"containerId,omitempty"`
	Image       string         `json:"image,omitempty"`
	Resources   Resources      `json:"resources"`
	// WorkspaceVerifiedAt is when the mounted folder was created (if
	// missing) and proven writable, before the last lifecycle change.
	WorkspaceVerifiedAt time.Time `json:"workspaceVerifiedAt,omitzero"`
	// Error is why the last lifecycle change failed.
	Error string `json:"error,omitempty"`
	// ActionID is the action that made the last change.
	ActionID  string    `json:"actionId,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// ContainerSpec is a container to run for a project.
type ContainerSpec struct {
	// Name is the container's name in the engine (brabo-<workspace dir>).
	Name  string
	Image string
	// Args replace the image's command when set.
	Args      []string
	Resources Resources
	// Mount is the host folder mounted at /work, the container's working
	// directory.
	Mount string
	// Labels mark the container as brabo's and name its project;
	// LabelSettings carries the digest of the settings it was made with.
	Labels map[string]string
	// ReadOnly are paths under Mount, relative to it, mounted read-only
	// over the project folder inside the container (permissions.json,
	// .git, the hook folders, the agents' configuration).
	ReadOnly []string
	// Network is the container's network mode; empty is "none".
	Network string
}

// ContainerInfo is what the engine says of a container.
type ContainerInfo struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"` // the engine's words: created, running, exited, …
	// Labels are the container's labels (LabelSettings among them).
	Labels map[string]string `json:"-"`
	// Mounts, Network and Privileged are how the engine says the
	// container was made: the floor checks them, not only the label a
	// hand-made container could copy.
	Mounts     []ContainerMount `json:"-"`
	Network    string           `json:"-"`
	Privileged bool             `json:"-"`
}

// ContainerMount is one mount of a container as the engine reports it.
type ContainerMount struct {
	Source, Target string
	ReadOnly       bool
}

// ContainerEngine runs projects' containers: the Docker Engine API of
// Docker or of Podman's compatible service (package docker). Errors are
// the engine's, wrapped; ErrNoContainer says the container does not
// exist.
type ContainerEngine interface {
	// Ping checks that the engine answers; its error says where it was
	// looked for.
	Ping(ctx context.Context) error
	// Start creates the container when it does not exist, then starts it.
	Start(ctx context.Context, spec ContainerSpec) (*ContainerInfo, error)
	// Stop stops a running container (a stopped one is left as it is).
	Stop(ctx context.Context, name string) error
	// Remove removes the container, stopping it first.
	Remove(ctx context.Context, name string) error
	// Inspect reads the container's state.
	Inspect(ctx context.Context, name string) (*ContainerInfo, error)
	// Exec runs one command in a running container (container.go).
	Exec(ctx context.Context, x ContainerExec) (int, error)
}

// ErrNoContainer is the engine's "no such container".
var ErrNoContainer = Errorf(CodeNotFound, "no such container")

// RemoteNameProblem returns why name cannot be the name of a configured
// git remote, or "" when it can: letters, digits, '.', '_' and '-', not
// starting with '.' or '-', at most 100 bytes, not ending in ".lock". A
// URL or a path is refused: pushing to wherever a payload points is not
// what approving a push means.
func RemoteNameProblem(name string) string {
	if !remoteNameRE.MatchString(name) || strings.HasSuffix(name, ".lock") {
		return "is not the name of a configured remote (letters, digits, '.', '_', '-')"
	}
	return ""
}

var remoteNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$`)

// RevisionProblem returns why rev cannot be read as a revision (a start
// point), or "" when it can: git would read a leading '-' as an option,
// and spaces or control characters are never part of one.
func RevisionProblem(rev string) string {
	if strings.HasPrefix(rev, "-") || strings.ContainsFunc(rev, func(r rune) bool {
		return r <= ' ' || r == 0x7f
	}) || len(rev) > 255 {
		return "is not a revision (no leading '-', spaces or control characters)"
	}
	return ""
}

// BranchNameProblem returns why name cannot be a branch name, or "" when it
// can.
// It is the rule of `git check-ref-format --branch`, stricter where git
// would read the name as something else: no leading '-' (an option), no
// "@{" (reflog syntax), not "HEAD" or "@".
func BranchNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.HasPrefix(name, "-"):
		return "starts with '-' and would be read as an option"
	case name == "HEAD" || name == "@":
		return "is reserved by git"
	case len(name) > 255:
		return "is longer than 255 bytes"
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return "has an empty path component"
	case strings.HasSuffix(name, "."):
		return "ends with '.'"
	case strings.Contains(name, ".."):
		return `holds ".."`
	case strings.Contains(name, "@{"):
		return `holds "@{"`
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return fmt.Sprintf("holds the character %q, which a ref name cannot", c)
		}
	}
	for _, comp := range strings.Split(name, "/") {
		if strings.HasPrefix(comp, ".") {
			return "has a component starting with '.'"
		}
		if strings.HasSuffix(comp, ".lock") {
			return `has a component ending with ".lock"`
		}
	}
	return ""
}
