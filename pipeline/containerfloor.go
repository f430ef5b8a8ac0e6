package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
)

// The container floor stands on a real boundary (DESIGN §10): a terminal
// action of a container project is auto-approved by the floor only when
// brabo can run it in the project's container, and then it runs only
// there. floorFor decides that at the proposal, from the engine itself
// (never from the registered flag alone); runInContainer holds execution
// to it.

// containerLayout versions how brabo lays a project out in its
// container; a change here changes every settings digest, so every
// container made before is recreated before the floor applies again.
const containerLayout = "brabo-container-layout-1"

// containerNetwork is the network of a project's container: none (the
// network-proxy issue opens it through brabo's proxy).
const containerNetwork = "none"

// containerSettings is how brabo would make the project's container now:
// the folder, the read-only paths over it (the protected paths that exist
// now, in the project and in each of its worktrees), the network, and
// their digest (brabo.LabelSettings).
type containerSettings struct {
	Mount    string
	ReadOnly []string
	Network  string
	Digest   string
}

// settingsFor computes the settings of the container of the project whose
// folder (resolved) is mount.
func settingsFor(mount string) containerSettings {
	cs := containerSettings{Mount: mount, Network: containerNetwork, ReadOnly: readOnlyPaths(mount)}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", containerLayout, cs.Mount, cs.Network)
	for _, p := range cs.ReadOnly {
		fmt.Fprintf(h, "ro\x00%s\x00", p)
	}
	cs.Digest = hex.EncodeToString(h.Sum(nil))[:32]
	return cs
}

// matches reports whether the engine's account of the container is these
// settings: exactly the project folder at /work, writable, and each
// read-only path over it, nothing else mounted; the network; nothing
// privileged. A label can be copied; the mounts cannot be wished away.
func (cs containerSettings) matches(info *brabo.ContainerInfo) bool {
	if info.Privileged || (info.Network != "" && info.Network != cs.Network) {
		return false
	}
	want := map[string]brabo.ContainerMount{brabo.ContainerWork: {Source: cs.Mount, Target: brabo.ContainerWork}}
	for _, rel := range cs.ReadOnly {
		target := brabo.ContainerWork + "/" + rel
		want[target] = brabo.ContainerMount{Source: filepath.Join(cs.Mount, filepath.FromSlash(rel)), Target: target, ReadOnly: true}
	}
	if len(info.Mounts) != len(want) {
		return false
	}
	for _, m := range info.Mounts {
		if w, ok := want[filepath.Clean(m.Target)]; !ok || filepath.Clean(m.Source) != w.Source || m.ReadOnly != w.ReadOnly {
			return false
		}
	}
	return true
}

// readOnlyPaths are the protected paths (integrity.go's lists, and the
// hook folders .git/config names) that exist under root and in its
// worktrees, relative to root, sorted; a path inside another on the list
// is covered by it and left out. Symlinks are left out: inside the
// container they resolve in the container's own filesystem.
func readOnlyPaths(root string) []string {
	seen := map[string]bool{}
	for _, base := range projectRoots(root) {
		names := append(append(append([]string(nil), protectedFiles...), protectedFolders...), gitConfigPaths(base)...)
		for _, name := range names {
			p := filepath.Join(base, name)
			fi, err := os.Lstat(p)
			if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
				continue
			}
			if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
				seen[filepath.ToSlash(rel)] = true
			}
		}
	}
	var out []string
	for p := range seen {
		covered := false
		for q := range seen {
			if q != p && strings.HasPrefix(p, q+"/") {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// floor is what floorFor found: whether the floor applies, the container
// the action then runs in, and the sentence the decision's reason gets.
type floor struct {
	applies bool
	name    string
	id      string
	why     string
}

// probeTimeout bounds the engine calls a proposal makes.
const probeTimeout = 3 * time.Second

// bashProbes remembers which containers have bash: container id → true.
var bashProbes sync.Map

// floorFor says whether a terminal action of p gets the container floor:
// only a container project, proposed for brabo to run, whose container
// the configured engine reports running, created with brabo's current
// settings, with bash in its image. Any other case gets no floor, and the
// reason says which.
func (s *Service) floorFor(ctx context.Context, p *brabo.Project, root string, external bool) floor {
	name := ContainerName(p)
	no := func(format string, args ...any) floor {
		return floor{name: name, why: "no container floor: " + fmt.Sprintf(format, args...) + "; it is decided and run as on the host"}
	}
	switch {
	case p.Mode != brabo.ModeContainer:
		return floor{}
	case external:
		return no("the proposing agent runs the command itself, outside the container")
	case s.Containers == nil:
		return no("no container engine is configured")
	case !p.ContainerRunning:
		return no("the project's container is not running")
	case root == "":
		return no("the project folder is not valid")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	info, err := s.Containers.Inspect(ctx, name)
	switch {
	case errors.Is(err, brabo.ErrNoContainer):
		return no("the engine has no container %s", name)
	case err != nil:
		return no("the container engine does not answer (%v)", err)
	case info.State != "running":
		return no("the container %s is %s, not running", name, info.State)
	}
	mount, err := filepath.EvalSymlinks(root)
	if err != nil {
		return no("the project folder cannot be resolved (%v)", err)
	}
	if want := settingsFor(mount); info.Labels[brabo.LabelSettings] != want.Digest || !want.matches(info) {
		return no("the container %s was not created with brabo's current settings (another brabo, made by hand, or a protected path appeared since); stop it and start it again to recreate it", name)
	}
	if has, ok := bashProbes.Load(info.ID); !ok || !has.(bool) {
		code, err := s.Containers.Exec(ctx, brabo.ContainerExec{Container: info.ID, Cmd: []string{"bash", "-c", "exit 0"}})
		switch {
		case err != nil && ctx.Err() != nil:
			return no("the container engine did not answer in time (%v)", err)
		case errors.Is(err, brabo.ErrNoContainer):
			return no("the engine has no container %s", name)
		case err != nil && !strings.Contains(err.Error(), "executable file") && !strings.Contains(err.Error(), "not found"):
			return no("the container engine failed (%v)", err)
		case err != nil || code != 0:
			bashProbes.Store(info.ID, false)
			return no("%v (the shell Decide analyses is bash)", brabo.ErrNoBash.Message)
		}
		bashProbes.Store(info.ID, true)
	}
	return floor{applies: true, name: name, id: info.ID}
}

// applyFloor writes what floorFor found into the decision: the container
// the action runs in, and the case in its reason.
func (f floor) applyFloor(d *brabo.Decision) {
	switch {
	case f.applies && d.Reason == "container floor":
		d.Reason = "container floor: " + f.name + " runs with brabo's settings, and the command runs in it"
	case f.applies:
		d.Reason += " (it runs in the container " + f.name + ")"
	case f.why != "":
		d.Reason += " (" + f.why + ")"
	}
	if f.applies {
		d.Container, d.ContainerID = f.name, f.id
	}
}

// runInContainer runs a terminal action bound to its project's container
// there, after checking it is still the container the proposal found,
// running with brabo's settings; otherwise the action fails with
// container_gone and nothing runs, on the host or anywhere.
func (s *Service) runInContainer(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	d := req.Action.Decision
	gone := func(why string) (*brabo.Result, error) {
		return &brabo.Result{Code: brabo.CodeContainerGone, Detail: map[string]string{"container": d.Container},
			Error: fmt.Sprintf("the project's container %s is gone (%s); nothing ran, and a command meant for the container never runs on the host", d.Container, why)}, nil
	}
	if s.Containers == nil {
		return gone("no container engine is configured any more")
	}
	ictx, cancel := context.WithTimeout(ctx, probeTimeout)
	info, err := s.Containers.Inspect(ictx, d.Container)
	cancel()
	switch {
	case errors.Is(err, brabo.ErrNoContainer):
		return gone("the engine has no such container")
	case err != nil:
		return gone(fmt.Sprintf("the engine does not answer: %v", err))
	case info.State != "running":
		return gone("it is " + info.State)
	case d.ContainerID != "" && info.ID != d.ContainerID:
		return gone("it was recreated since the proposal")
	}
	mount, err := filepath.EvalSymlinks(req.Root)
	if err != nil {
		return nil, fmt.Errorf("the project folder: %w", err)
	}
	if want := settingsFor(mount); info.Labels[brabo.LabelSettings] != want.Digest || !want.matches(info) {
		return gone("it no longer runs with brabo's current settings")
	}
	req.Container = &brabo.ContainerTarget{Engine: s.Containers, Name: d.Container, ID: info.ID}
	return s.Executor.Execute(ctx, req)
}

// refuseContainerStart is the seed's refusals of a container_start (and of
// the handoff that would propose one), at the
// proposal and before anything is queued (409): a project that has no
// container of brabo's (local mode; a runner project's start goes to its
// runner), a container registered running already, no engine configured.
func (s *Service) refuseContainerStart(t brabo.ActionType, p *brabo.Project) error {
	if t != brabo.ContainerStart && t != brabo.ContainerHandoff {
		return nil
	}
	switch {
	case p.Mode != brabo.ModeContainer && p.Mode != brabo.ModeRunner:
		return brabo.Errorf(brabo.CodeNotContainerProject, "project %s runs in %s mode: it has no container to start (only a container or runner project has one)", p.Slug, p.Mode)
	case p.ContainerRunning:
		return brabo.Errorf(brabo.CodeContainerAlreadyRunning, "the container of project %s is registered running already; stop it first (container_stop)", p.Slug)
	case p.Mode == brabo.ModeContainer && s.Containers == nil:
		return brabo.Errorf(brabo.CodeNoContainerEngine,
			"no container engine is configured: brabo serve --container-engine (BRABO_CONTAINER_ENGINE) names the Docker or Podman socket")
	}
	return nil
}
