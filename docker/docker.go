// Package docker is brabo's container engine (brabo.ContainerEngine): the
// Docker Engine API, spoken with the official client
// (github.com/moby/moby/client), to Docker or to Podman's compatible
// service (podman system service). It is the client's only importer, and
// only brabo serve links it through cmd/brabo's wiring: the agents' hook
// (brabo-hook) and the packages brabo check runs never depend on it
// (imports_test.go).
package docker

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/brabo-dev/brabo"
)

// StopTimeout is how long a stop waits for the container's processes to
// end after SIGTERM before the engine kills them.
const StopTimeout = 10 * time.Second

// Engine runs projects' containers on one Docker Engine API endpoint.
type Engine struct {
	host string
	c    *client.Client
	// StopTimeout overrides the package's StopTimeout when positive.
	StopTimeout time.Duration
}

var _ brabo.ContainerEngine = (*Engine)(nil)

// New returns an Engine for the endpoint host: unix:///run/podman/podman.sock,
// unix:///var/run/docker.sock, tcp://host:2375. The API version is
// negotiated with the engine on the first call (Podman 4 serves 1.41). No
// connection is made here: an engine that does not answer is an ordinary
// failure of the action that needs it.
func New(host string) (*Engine, error) {
	if strings.TrimSpace(host) == "" {
		return nil, errors.New("docker: no engine address (unix:///path/to.sock or tcp://host:port)")
	}
	c, err := client.New(client.WithHost(host), client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker: engine address %q: %w", host, err)
	}
	return &Engine{host: host, c: c}, nil
}

// Host is the endpoint the engine talks to.
func (e *Engine) Host() string { return e.host }

// Close releases the client's connections.
func (e *Engine) Close() error { return e.c.Close() }

// Ping checks that the engine answers.
func (e *Engine) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := e.c.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("the engine at %s does not answer: %w", e.host, err)
	}
	return nil
}

// Start creates the container when the engine has none of that name, then
// starts it (a running one is left running). The project folder is
// mounted at /work, the working directory, with spec.ReadOnly mounted
// read-only over it; nothing else of the host is mounted (no engine
// socket, no home); the network is spec.Network ("none" when empty); the
// resources are the spec's.
//
// A container of that name created with other settings (its
// brabo.LabelSettings differs from the spec's, or whose mounts, network
// or privileges are not the spec's: a hand-made one, an older brabo's) is
// removed and created again: a container is never reused on the strength
// of its name, or of a label, alone.
func (e *Engine) Start(ctx context.Context, spec brabo.ContainerSpec) (*brabo.ContainerInfo, error) {
	if spec.Name == "" || spec.Image == "" || spec.Mount == "" {
		return nil, errors.New("docker: a container needs a name, an image and a folder to mount")
	}
	mounts, err := specMounts(spec)
	if err != nil {
		return nil, err
	}
	id := ""
	if got, err := e.c.ContainerInspect(ctx, spec.Name, client.ContainerInspectOptions{}); err == nil {
		id = got.Container.ID
		var have map[string]string
		if got.Container.Config != nil {
			have = got.Container.Config.Labels
		}
		if have[brabo.LabelSettings] != spec.Labels[brabo.LabelSettings] || !sameSetup(got.Container, spec, mounts) {
			if _, err := e.c.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
				return nil, fmt.Errorf("removing %s, created with other settings: %w", spec.Name, err)
			}
			id = ""
		}
	} else if !cerrdefs.IsNotFound(err) {
		return nil, fmt.Errorf("inspecting %s: %w", spec.Name, err)
	}
	if id == "" {
		created, err := e.c.ContainerCreate(ctx, client.ContainerCreateOptions{
			Name: spec.Name,
			Config: &container.Config{Image: spec.Image, Cmd: spec.Args, WorkingDir: brabo.ContainerWork, Labels: spec.Labels,
				Tty: false, AttachStdout: false, AttachStderr: false},
			HostConfig: &container.HostConfig{
				Mounts:      mounts,
				NetworkMode: container.NetworkMode(specNetwork(spec)),
				SecurityOpt: []string{"no-new-privileges"},
				Resources: container.Resources{
					NanoCPUs: int64(spec.Resources.CPUs * 1e9),
					Memory:   spec.Resources.MemoryMB << 20,
				},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("creating %s from %s: %w", spec.Name, spec.Image, err)
		}
		id = created.ID
	}
	if _, err := e.c.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	return e.Inspect(ctx, id)
}

// specNetwork is the spec's network mode, "none" when it names none.
func specNetwork(spec brabo.ContainerSpec) string {
	if spec.Network == "" {
		return "none"
	}
	return spec.Network
}

// sameSetup reports whether an existing container is made as spec says:
// exactly its mounts (source, target, read-only), its network, nothing
// privileged.
func sameSetup(c container.InspectResponse, spec brabo.ContainerSpec, mounts []mount.Mount) bool {
	if hc := c.HostConfig; hc == nil || hc.Privileged || len(hc.CapAdd) > 0 || len(hc.Devices) > 0 ||
		string(hc.NetworkMode) != specNetwork(spec) {
		return false
	}
	if len(c.Mounts) != len(mounts) {
		return false
	}
	want := map[string]mount.Mount{}
	for _, m := range mounts {
		want[m.Target] = m
	}
	for _, m := range c.Mounts {
		w, ok := want[path.Clean(m.Destination)]
		if !ok || filepath.Clean(m.Source) != w.Source || m.RW == w.ReadOnly {
			return false
		}
	}
	return true
}

// specMounts are the project folder at /work and its read-only paths over
// it, parents first.
func specMounts(spec brabo.ContainerSpec) ([]mount.Mount, error) {
	if !filepath.IsAbs(spec.Mount) {
		return nil, fmt.Errorf("docker: the folder to mount %q is not absolute", spec.Mount)
	}
	out := []mount.Mount{{Type: mount.TypeBind, Source: filepath.Clean(spec.Mount), Target: brabo.ContainerWork}}
	ro := append([]string(nil), spec.ReadOnly...)
	sort.Strings(ro)
	for _, rel := range ro {
		clean := path.Clean(filepath.ToSlash(rel))
		if rel == "" || path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("docker: the read-only path %q is not a path inside the project folder", rel)
		}
		out = append(out, mount.Mount{Type: mount.TypeBind, Source: filepath.Join(spec.Mount, filepath.FromSlash(clean)),
			Target: path.Join(brabo.ContainerWork, clean), ReadOnly: true})
	}
	return out, nil
}

// Stop stops the container: SIGTERM, then SIGKILL after the stop timeout.
func (e *Engine) Stop(ctx context.Context, name string) error {
	secs := int((e.stopTimeout() + time.Second - 1) / time.Second)
	_, err := e.c.ContainerStop(ctx, name, client.ContainerStopOptions{Timeout: &secs})
	return e.wrap(name, "stopping", err)
}

// Remove removes the container, killing it first when it runs.
func (e *Engine) Remove(ctx context.Context, name string) error {
	_, err := e.c.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true})
	return e.wrap(name, "removing", err)
}

// Inspect reads the container's state.
func (e *Engine) Inspect(ctx context.Context, name string) (*brabo.ContainerInfo, error) {
	got, err := e.c.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if err != nil {
		return nil, e.wrap(name, "inspecting", err)
	}
	info := &brabo.ContainerInfo{ID: got.Container.ID, Name: strings.TrimPrefix(got.Container.Name, "/")}
	if got.Container.Config != nil {
		info.Labels = got.Container.Config.Labels
	}
	if hc := got.Container.HostConfig; hc != nil {
		info.Network, info.Privileged = string(hc.NetworkMode), hc.Privileged || len(hc.CapAdd) > 0 || len(hc.Devices) > 0
	}
	for _, m := range got.Container.Mounts {
		info.Mounts = append(info.Mounts, brabo.ContainerMount{Source: m.Source, Target: m.Destination, ReadOnly: !m.RW})
	}
	if got.Container.State != nil {
		info.State = string(got.Container.State.Status)
	}
	return info, nil
}

func (e *Engine) stopTimeout() time.Duration {
	if e.StopTimeout > 0 {
		return e.StopTimeout
	}
	return StopTimeout
}

// wrap names what failed; the engine's "no such container" becomes
// brabo.ErrNoContainer.
func (e *Engine) wrap(name, doing string, err error) error {
	if err == nil {
		return nil
	}
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("%s %s: %w", doing, name, brabo.ErrNoContainer)
	}
	return fmt.Errorf("%s %s: %w", doing, name, err)
}
