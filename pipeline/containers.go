package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/brabo-dev/brabo"
)

// Executing container_start, container_stop and container_remove: the
// project's container through the ContainerEngine (the Docker Engine API
// of Docker or of Podman's compatible service), with the execution rules
// of docs/actions.md. Nothing here touches Decide: who may
// approve is decided before, and these rules only say how an approved
// action runs.
//
//   - container_start takes its resources from the module map: an omitted
//     field becomes the minimum the map derives (ModuleMap.MinResources),
//     one below that minimum or above the ceiling is a named failure,
//     written before anything else.
//   - It then creates the mounted folder if it is missing and proves it
//     writable (a file written, read back and removed), and stamps the
//     container row's workspace_verified_at, before any lifecycle change:
//     a folder brabo cannot write is a named failure and the row is never
//     marked provisioning.
//   - An engine that does not answer is an ordinary failure ("no container
//     engine reachable …"), checked before the row is marked provisioning.
//   - container_stop and container_remove need a container to act on; a
//     container the engine no longer has is recorded removed.

// DefaultContainerCeiling is the most a container may get when the
// Service sets no ContainerCeiling.
var DefaultContainerCeiling = brabo.Resources{CPUs: 8, MemoryMB: 16 << 10}

// containerMount is where a project's folder is mounted in its container.
const containerMount = "/work"

func isContainerType(t brabo.ActionType) bool {
	return t == brabo.ContainerStart || t == brabo.ContainerStop || t == brabo.ContainerRemove
}

// ContainerName is the engine's name of a project's container.
func ContainerName(p *brabo.Project) string { return brabo.ContainerName(p) }

// containerLocks serialises the lifecycle changes of one project's
// container in this process.
var containerLocks sync.Map // project id → *sync.Mutex

func lockContainer(projectID string) func() {
	m, _ := containerLocks.LoadOrStore(projectID, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// runContainer executes a container action; every outcome is a Result,
// named failures included.
func (s *Service) runContainer(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	a, p := req.Action, req.Project
	if p == nil {
		return nil, errors.New("no project")
	}
	defer lockContainer(p.ID)()
	c := &containerRun{s: s, ctx: ctx, a: a, p: p, root: req.Root,
		row: &brabo.ProjectContainer{ProjectID: p.ID, Name: ContainerName(p)}}
	if s.Containers == nil {
		return c.fail("no container engine is configured: brabo serve --container-engine (BRABO_CONTAINER_ENGINE) names the Docker or Podman socket"), nil
	}
	if p.Mode == brabo.ModeRunner {
		return c.fail("a runner project's container runs on its runner, and no runner is connected to this project"), nil
	}
	row, err := s.containerRow(ctx, p)
	if err != nil {
		return nil, err
	}
	c.row = row
	switch a.Type {
	case brabo.ContainerStart:
		return c.start()
	case brabo.ContainerStop:
		return c.stop()
	default:
		return c.remove()
	}
}

// containerRow reads the project's container row, a new one (state none)
// when it never had a container.
func (s *Service) containerRow(ctx context.Context, p *brabo.Project) (*brabo.ProjectContainer, error) {
	var row *brabo.ProjectContainer
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		row, err = tx.ProjectContainer(ctx, p.ID)
		return err
	})
	if errors.Is(err, brabo.ErrNotFound) {
		return &brabo.ProjectContainer{ProjectID: p.ID, Name: ContainerName(p)}, nil
	}
	return row, err
}

// containerRun is one container action being executed.
type containerRun struct {
	s    *Service
	ctx  context.Context
	a    *brabo.ProposedAction
	p    *brabo.Project
	root string
	row  *brabo.ProjectContainer
}

func (c *containerRun) fail(format string, args ...any) *brabo.Result {
	return &brabo.Result{ExitCode: 1, Error: fmt.Sprintf("%s: ", c.a.Type) + fmt.Sprintf(format, args...),
		Detail: map[string]string{"container": ContainerName(c.p), "state": string(c.row.State)}}
}

func (c *containerRun) ok(output string) *brabo.Result {
	d := map[string]string{"container": c.row.Name, "state": string(c.row.State)}
	if c.row.ContainerID != "" {
		d["containerId"] = c.row.ContainerID
	}
	if !c.row.WorkspaceVerifiedAt.IsZero() {
		d["workspaceVerifiedAt"] = c.row.WorkspaceVerifiedAt.Format("2006-01-02T15:04:05.000000Z07:00")
	}
	return &brabo.Result{Output: output, Detail: d}
}

// record writes the row as it is now, with container.state_changed, and
// keeps the project's registered-running flag (the container floor) in
// step for a container project.
func (c *containerRun) record() error {
	c.row.ActionID, c.row.UpdatedAt = c.a.ID, c.s.now()
	ctx := context.WithoutCancel(c.ctx)
	return c.s.Store.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.PutProjectContainer(ctx, c.row); err != nil {
			return err
		}
		if c.p.Mode == brabo.ModeContainer {
			if err := tx.SetContainerRunning(ctx, c.p.ID, c.row.State == brabo.ContainerRunning); err != nil {
				return err
			}
		}
		payload := map[string]any{"state": c.row.State, "name": c.row.Name}
		if !c.row.WorkspaceVerifiedAt.IsZero() {
			payload["workspaceVerifiedAt"] = c.row.WorkspaceVerifiedAt
		}
		if c.row.Error != "" {
			payload["error"] = c.row.Error
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: c.p.ID, Type: brabo.EventContainerChanged, ActorID: brabo.SystemActor,
			ActionID: c.a.ID, Payload: mustJSON(payload), CreatedAt: c.row.UpdatedAt})
	})
}

func (c *containerRun) start() (*brabo.Result, error) {
	if c.row.State == brabo.ContainerRunning {
		return c.fail("the project's container %s is running already; stop it first", c.row.Name), nil
	}
	res, why, err := c.s.startResources(c.ctx, c.p.ID, c.a.Payload)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return c.fail("%s", why), nil
	}
	image := strings.TrimSpace(c.a.Payload.Image)
	if image == "" {
		image = c.s.ContainerImage
	}
	if image == "" {
		return c.fail("no image: the proposal names none and the server has no default (brabo serve --container-image)"), nil
	}
	// The mounted folder, before any lifecycle change.
	mount, why := c.s.materialize(c.p, c.root)
	if why != "" {
		return c.fail("%s", why), nil
	}
	c.row.WorkspaceVerifiedAt = c.s.now()
	if err := c.record(); err != nil {
		return nil, err
	}
	if err := c.s.Containers.Ping(c.ctx); err != nil {
		return c.fail("no container engine reachable: %v", err), nil
	}
	c.row.State, c.row.Image, c.row.Resources, c.row.Error, c.row.Name = brabo.ContainerProvisioning, image, res, "", ContainerName(c.p)
	if err := c.record(); err != nil {
		return nil, err
	}
	// brabo's settings: the folder with its protected paths read-only, no
	// network; their digest on a label, so that a container made otherwise
	// is recreated (docker.Engine.Start) and gets no floor (containerfloor.go).
	cs := settingsFor(mount)
	info, err := c.s.Containers.Start(c.ctx, brabo.ContainerSpec{Name: c.row.Name, Image: image, Args: c.a.Payload.Args,
		Resources: res, Mount: mount, ReadOnly: cs.ReadOnly, Network: cs.Network,
		Labels: map[string]string{brabo.LabelProject: c.p.ID, "brabo.workspace": c.p.WorkspaceDir, brabo.LabelSettings: cs.Digest}})
	if err != nil {
		c.row.State, c.row.Error = brabo.ContainerFailed, err.Error()
		if rerr := c.record(); rerr != nil {
			return nil, rerr
		}
		return c.fail("the engine did not start the container: %v", err), nil
	}
	c.row.State, c.row.ContainerID = brabo.ContainerRunning, info.ID
	if err := c.record(); err != nil {
		return nil, err
	}
	return c.ok(fmt.Sprintf("container %s running (%s, %g CPUs, %d MiB), the project folder mounted at %s",
		c.row.Name, image, res.CPUs, res.MemoryMB, containerMount)), nil
}

func (c *containerRun) stop() (*brabo.Result, error) {
	switch c.row.State {
	case brabo.ContainerRunning, brabo.ContainerProvisioning, brabo.ContainerFailed:
	default:
		return c.fail("the project has no running container to stop (its container is %s)", stateWords(c.row.State)), nil
	}
	if err := c.s.Containers.Ping(c.ctx); err != nil {
		return c.fail("no container engine reachable: %v", err), nil
	}
	err := c.s.Containers.Stop(c.ctx, c.row.Name)
	if errors.Is(err, brabo.ErrNoContainer) {
		c.row.State, c.row.Error, c.row.ContainerID = brabo.ContainerRemoved, "", ""
		if err := c.record(); err != nil {
			return nil, err
		}
		return c.fail("the engine has no container %s any more (recorded as removed)", c.row.Name), nil
	}
	if err != nil {
		return c.fail("the engine did not stop the container: %v", err), nil
	}
	c.row.State, c.row.Error = brabo.ContainerStopped, ""
	if err := c.record(); err != nil {
		return nil, err
	}
	return c.ok(fmt.Sprintf("container %s stopped", c.row.Name)), nil
}

func (c *containerRun) remove() (*brabo.Result, error) {
	if c.row.State == brabo.ContainerNone || c.row.State == brabo.ContainerRemoved {
		return c.fail("the project has no container to remove (its container is %s)", stateWords(c.row.State)), nil
	}
	if err := c.s.Containers.Ping(c.ctx); err != nil {
		return c.fail("no container engine reachable: %v", err), nil
	}
	note := ""
	if err := c.s.Containers.Remove(c.ctx, c.row.Name); errors.Is(err, brabo.ErrNoContainer) {
		note = " (the engine had no such container any more)"
	} else if err != nil {
		return c.fail("the engine did not remove the container: %v", err), nil
	}
	c.row.State, c.row.Error, c.row.ContainerID = brabo.ContainerRemoved, "", ""
	if err := c.record(); err != nil {
		return nil, err
	}
	return c.ok(fmt.Sprintf("container %s removed%s; the project folder is kept", c.row.Name, note)), nil
}

func stateWords(s brabo.ContainerState) string {
	if s == brabo.ContainerNone {
		return "none: it never had one"
	}
	return string(s)
}

// startResources resolves a container_start's resources against the
// project's module map: an omitted field is the derived minimum; a field
// below it, or above the ceiling, is why the start fails ("" when it does
// not).
func (s *Service) startResources(ctx context.Context, projectID string, p brabo.Payload) (brabo.Resources, string, error) {
	var mm *brabo.ModuleMap
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		mm, err = tx.ModuleMap(ctx, projectID)
		if errors.Is(err, brabo.ErrNotFound) {
			mm, err = nil, nil
		}
		return err
	})
	if err != nil {
		return brabo.Resources{}, "", err
	}
	min := mm.MinResources()
	ceiling := s.ContainerCeiling
	if ceiling.CPUs <= 0 {
		ceiling.CPUs = DefaultContainerCeiling.CPUs
	}
	if ceiling.MemoryMB <= 0 {
		ceiling.MemoryMB = DefaultContainerCeiling.MemoryMB
	}
	got := brabo.Resources{CPUs: p.CPUs, MemoryMB: p.MemoryMB}
	if got.CPUs == 0 {
		got.CPUs = min.CPUs
	}
	if got.MemoryMB == 0 {
		got.MemoryMB = min.MemoryMB
	}
	derived := "the default, no module map"
	if mm != nil && len(mm.Modules) > 0 {
		derived = "derived from the module map: " + describeModules(mm)
	}
	switch {
	case got.CPUs < min.CPUs-1e-9:
		return got, fmt.Sprintf("cpus %g is below the minimum %g (%s); ask for at least %g, or omit cpus", got.CPUs, min.CPUs, derived, min.CPUs), nil
	case got.MemoryMB < min.MemoryMB:
		return got, fmt.Sprintf("memoryMb %d is below the minimum %d (%s); ask for at least %d, or omit memoryMb", got.MemoryMB, min.MemoryMB, derived, min.MemoryMB), nil
	case got.CPUs > ceiling.CPUs:
		return got, fmt.Sprintf("cpus %g is above the ceiling %g", got.CPUs, ceiling.CPUs), nil
	case got.MemoryMB > ceiling.MemoryMB:
		return got, fmt.Sprintf("memoryMb %d is above the ceiling %d", got.MemoryMB, ceiling.MemoryMB), nil
	}
	got.CPUs = math.Round(got.CPUs*1000) / 1000
	return got, "", nil
}

func describeModules(mm *brabo.ModuleMap) string {
	var parts []string
	for _, m := range mm.Modules {
		r := m.Resources
		switch {
		case r.CPUs == 0 && r.MemoryMB == 0:
			parts = append(parts, m.Name+" declares nothing")
		default:
			parts = append(parts, fmt.Sprintf("%s %g CPUs %d MiB", m.Name, r.CPUs, r.MemoryMB))
		}
	}
	return strings.Join(parts, ", ")
}

// materialize creates the project's folder when it is missing and proves
// it writable: a file written, read back and removed. It returns the
// folder with its symlinks resolved (what the engine mounts), or why it
// cannot be used, naming the setting, the folder, the likely cause and
// the next step.
func (s *Service) materialize(p *brabo.Project, root string) (string, string) {
	setting := "the project's folder (set when the project was created)"
	if p.Mode == brabo.ModeContainer {
		setting = "brabo serve --workspaces (BRABO_WORKSPACES)"
	}
	refuse := func(err error) (string, string) {
		return "", fmt.Sprintf("the project folder %s (%s) cannot be created or written: %v; the likely cause is the folder's owner on the host: "+
			"make it writable by the user brabo runs as, then start the container again", root, setting, err)
	}
	if root == "" {
		return refuse(errors.New("it has no path"))
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return refuse(err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	probe := filepath.Join(root, ".brabo-write-probe-"+hex.EncodeToString(b[:]))
	want := []byte("brabo checks that it can write here\n")
	if err := os.WriteFile(probe, want, 0o600); err != nil {
		return refuse(err)
	}
	got, err := os.ReadFile(probe)
	_ = os.Remove(probe)
	if err != nil {
		return refuse(err)
	}
	if string(got) != string(want) {
		return refuse(errors.New("a file written there read back different"))
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return refuse(err)
	}
	return real, ""
}
