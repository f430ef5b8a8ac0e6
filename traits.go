package brabo

// Traits are what brabo knows of an action type besides its name: who may
// propose and approve it, where it runs, what its card shows. They live in
// one table (traits, below) that every per-type question reads, so adding
// a type is one row, and a test (TestEveryActionTypeHasTraits) fails for a
// type without one.
type Traits struct {
	// Label is the PascalCase name patterns use (GitPush for git_push).
	Label string
	// MinRole is the least role a principal needs (DESIGN §3.2).
	MinRole Role
	// Route is where an approved action of the type is executed.
	Route Route
	// NeedsFolder is true for the types that work in the project folder:
	// when it is gone, such an action fails with project_folder_missing
	// and nothing runs.
	NeedsFolder bool
	// RunsCommands is true for the types that start processes, and so
	// take one of their project's running slots.
	RunsCommands bool
	// Sandboxed is true for the types whose processes run in the sandbox
	// when brabo has one: terminal commands, and the git actions whose
	// steps touch only a repository on this machine (executor/gitbox.go).
	// git_push, pr_open and git_repo_create run their git on the host
	// under gitguard whatever the sandbox (docs/sandbox.md, "Git actions").
	Sandboxed bool
	// HumanOnly is true for the types only a human proposes (the
	// containers page's Stop and Remove, a human's click only), never an agent.
	HumanOnly bool
	// NeverAlwaysAllow is true for the types an "always allow" click
	// refuses (DESIGN §6.3): each instance is approved on its own.
	NeverAlwaysAllow bool
	// Preview is what the type's card shows of the world beside its
	// payload.
	Preview PreviewKind
}

// Route is where an approved action is executed.
type Route string

// The routes.
const (
	// RouteExecutor is the executor: commands, files and git, on the host
	// or in the project's container.
	RouteExecutor Route = "executor"
	// RouteStore is the pipeline itself, in the transaction that settles
	// the action: a change of brabo's own state (protected branches,
	// instructions, the budget).
	RouteStore Route = "store"
	// RouteContainer is the container engine, with the project's
	// container lifecycle row.
	RouteContainer Route = "container"
	// RouteHandoff is container_handoff's: the seed, then a
	// container_start proposed as the infra agent.
	RouteHandoff Route = "handoff"
	// RouteAgent is no route of brabo's: brabo decides the type and the
	// proposing agent runs it itself (execution external; DecideOnly).
	RouteAgent Route = "agent"
)

// PreviewKind is what a card shows of the world beside the payload.
type PreviewKind string

// The preview kinds.
const (
	// PreviewPayload is the payload alone.
	PreviewPayload PreviewKind = ""
	// PreviewFileWrite is the file's difference and its path's flags.
	PreviewFileWrite PreviewKind = "file_write"
	// PreviewFileRead is the read path's flags.
	PreviewFileRead PreviewKind = "file_read"
	// PreviewRepository is what the repository holds: the commit, the
	// branch's commits and stat, the remote.
	PreviewRepository PreviewKind = "repository"
	// PreviewInstructions is the difference of an agent's instructions.
	PreviewInstructions PreviewKind = "instructions"
)

// traits is the table: one row per action type.
var traits = map[ActionType]Traits{
	Terminal:               {Label: "Terminal", MinRole: Developer, Route: RouteExecutor, Sandboxed: true, NeedsFolder: true, RunsCommands: true},
	GitCommit:              {Label: "GitCommit", MinRole: Developer, Route: RouteExecutor, Sandboxed: true, NeedsFolder: true, RunsCommands: true, Preview: PreviewRepository},
	WriteFile:              {Label: "WriteFile", MinRole: Developer, Route: RouteExecutor, NeedsFolder: true, Preview: PreviewFileWrite},
	GitPush:                {Label: "GitPush", MinRole: Maintainer, Route: RouteExecutor, NeedsFolder: true, RunsCommands: true, NeverAlwaysAllow: true, Preview: PreviewRepository},
	PrOpen:                 {Label: "PrOpen", MinRole: Maintainer, Route: RouteExecutor, NeedsFolder: true, RunsCommands: true, NeverAlwaysAllow: true, Preview: PreviewRepository},
	GitRepoCreate:          {Label: "GitRepoCreate", MinRole: Maintainer, Route: RouteExecutor},
	GitBranchCreate:        {Label: "GitBranchCreate", MinRole: Maintainer, Route: RouteExecutor, Sandboxed: true, NeedsFolder: true, RunsCommands: true},
	GitBranchProtect:       {Label: "GitBranchProtect", MinRole: Maintainer, Route: RouteStore},
	OpenAdrPr:              {Label: "OpenAdrPr", MinRole: Maintainer, Route: RouteExecutor, Sandboxed: true},
	OpenInfraPr:            {Label: "OpenInfraPr", MinRole: Maintainer, Route: RouteExecutor, Sandboxed: true},
	GitMerge:               {Label: "GitMerge", MinRole: Maintainer, Route: RouteExecutor, Sandboxed: true, NeedsFolder: true, RunsCommands: true, NeverAlwaysAllow: true, Preview: PreviewRepository},
	InstructionPatch:       {Label: "InstructionPatch", MinRole: Maintainer, Route: RouteStore, NeverAlwaysAllow: true, Preview: PreviewInstructions},
	Parallelize:            {Label: "Parallelize", MinRole: Maintainer, Route: RouteExecutor, NeverAlwaysAllow: true},
	RaiseMaxParallel:       {Label: "RaiseMaxParallel", MinRole: Maintainer, Route: RouteExecutor, NeverAlwaysAllow: true},
	ProposeExecutionPlan:   {Label: "ProposeExecutionPlan", MinRole: Maintainer, Route: RouteExecutor},
	AssessImplementability: {Label: "AssessImplementability", MinRole: Maintainer, Route: RouteExecutor},
	ContainerStart:         {Label: "ContainerStart", MinRole: Maintainer, Route: RouteContainer},
	ContainerStop:          {Label: "ContainerStop", MinRole: Maintainer, Route: RouteContainer, HumanOnly: true},
	ContainerRemove:        {Label: "ContainerRemove", MinRole: Maintainer, Route: RouteContainer, HumanOnly: true, NeverAlwaysAllow: true},
	Spend:                  {Label: "Spend", MinRole: Owner, Route: RouteStore},
	ContainerHandoff:       {Label: "ContainerHandoff", MinRole: Maintainer, Route: RouteHandoff, NeverAlwaysAllow: true},
	ReadFile:               {Label: "ReadFile", MinRole: Developer, Route: RouteAgent, Preview: PreviewFileRead},
	McpTool:                {Label: "McpTool", MinRole: Developer, Route: RouteAgent},
}

// Traits returns the type's row of the table; an unknown type has the
// zero Traits, whose MinRole reads as none (MinRole, not this field, is
// what grants: it answers Owner for an unknown type).
func (t ActionType) Traits() Traits { return traits[t] }
