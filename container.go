package brabo

import (
	"context"
	"io"
	"time"
)

// A container project's terminal commands run in its container (DESIGN
// §10): through the engine's exec, as `bash -c`, as the user who owns the
// project folder, in the folder's translation under ContainerWork. The
// container floor exists only where that path does.

// ContainerWork is where a project's folder is mounted in its container.
const ContainerWork = "/work"

// Labels brabo puts on the containers it creates.
const (
	// LabelProject names the project a container is for.
	LabelProject = "brabo.project"
	// LabelSettings is the digest of the settings a container was created
	// with (its mounts, read-only paths, network, layout version): a
	// container whose label differs from the digest of brabo's current
	// settings is recreated before the floor applies.
	LabelSettings = "brabo.settings"
)

// ErrNoBash says a container's image has no bash: the shell Decide
// analyses is bash, so such a container gets no floor.
var ErrNoBash = Errorf(CodeNoBash, "the container's image has no bash")

// ContainerExec is one command run in a running container.
type ContainerExec struct {
	// Container is the container's name or id.
	Container string
	// Cmd is the program and its arguments.
	Cmd []string
	// User is "uid:gid" (or a name the image knows); empty is the
	// image's user.
	User string
	// Dir is the working folder inside the container.
	Dir string
	// Env are the variables added to the container's.
	Env []string
	// Output receives stdout and stderr together; nil discards them.
	Output io.Writer
	// Linger is how long, once the command's process has exited, Exec
	// still reads output a process it left holds (0: a default of 50 ms).
	Linger time.Duration
}

// ContainerTarget is where a terminal action runs when it runs in its
// project's container.
type ContainerTarget struct {
	// Engine runs the exec.
	Engine ContainerEngine
	// Name is the container's name; ID the id the proposal found, which
	// the container must still have.
	Name string
	ID   string
}

// EventInfraAgentChanged records that a maintainer named (or cleared) the
// project's infra agent: payload agentId and previous.
const EventInfraAgentChanged = "project.infra_agent_changed"

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
