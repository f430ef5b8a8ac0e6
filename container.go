package brabo

import (
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
