package policy

import (
	"testing"

	"github.com/brabo-dev/brabo"
)

// "The container floor", where it now stands (DESIGN §10): the floor
// (Input.ContainerRunning) is given only when the pipeline found the
// project's container running with brabo's settings, and the command then
// runs in it; Decide still sees host paths, so its path scope runs
// unchanged on top of the floor. And container_handoff (docs/actions.md): the
// infra agent's handoff is maintainer and never auto-approved, by the
// floor, the file, a specific autonomy rule or auto mode.
func TestSeedPageContainerFloorInAContainer(t *testing.T) {
	runRows(t, []row{
		{name: "floor in a container: a cwd below the project folder is decided on host paths", container: true,
			cwd: "src/app", cmd: "make build", want: A, reason: "container floor", segs: "none"},
		{name: "floor in a container: /work is not the scope root, it is a host path outside it", container: true,
			cmd: "cat /work/src/x", want: RA, reason: "scope: outside the project folder: /work/src/x", segs: "none"},
		{name: "floor in a container: a host path inside the folder stays in scope", container: true,
			cmd: "cat src/app/x", want: A, reason: "container floor", segs: "none"},
		{name: "no floor (the container is not usable): the same command asks, as on the host",
			cmd: "make build", want: RA, reason: "default: no rule approves it", segs: "none"},
		{name: "floor in a container: deny still wins", container: true, deny: []string{"Terminal(make)"},
			cmd: "make build", want: D, reason: "permissions.json deny: Terminal(make)", segs: "deny"},

		{name: "container_handoff: maintainer; a developer is denied", typ: brabo.ContainerHandoff, role: brabo.Developer,
			container: true, want: D, reason: "iam: container_handoff requires maintainer"},
		{name: "container_handoff: no rule asks", typ: brabo.ContainerHandoff, role: brabo.Maintainer,
			want: RA, reason: "default: no rule approves it"},
		{name: "container_handoff: the floor is for terminal only", typ: brabo.ContainerHandoff, role: brabo.Maintainer,
			container: true, want: RA, reason: "default: no rule approves it"},
		{name: "container_handoff: allow ContainerHandoff() is capped", typ: brabo.ContainerHandoff, role: brabo.Maintainer,
			allow: []string{"ContainerHandoff()"}, want: RA, reason: "cap: container_handoff"},
		{name: "container_handoff: a specific autonomy rule is capped", typ: brabo.ContainerHandoff, role: brabo.Maintainer,
			specific: A, want: RA, reason: "cap: container_handoff"},
		{name: "container_handoff: auto mode is capped", typ: brabo.ContainerHandoff, role: brabo.Maintainer,
			auto: true, want: RA, reason: "cap: container_handoff"},
		{name: "container_handoff: deny denies", typ: brabo.ContainerHandoff, role: brabo.Maintainer,
			deny: []string{"ContainerHandoff()"}, want: D, reason: "permissions.json deny: ContainerHandoff()"},
		// The seed the handoff's acceptance records: container_start:
		// auto_approve for that agent, which the start then runs on.
		{name: "the handoff's seed: container_start auto_approve (specific) runs the start", typ: brabo.ContainerStart,
			role: brabo.Maintainer, specific: A, want: A, reason: "agent_autonomy: auto_approve (specific)"},
		{name: "the handoff's seed does not lift the maintainer minimum", typ: brabo.ContainerStart,
			role: brabo.Developer, specific: A, want: D, reason: "iam: container_start requires maintainer"},
	})
	if !NeverAlwaysAllow(brabo.ContainerHandoff) {
		t.Error("container_handoff can be always-allowed")
	}
}
