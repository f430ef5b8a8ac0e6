package docker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/docker"
	"github.com/brabo-dev/brabo/docker/dockertest"
)

// TestEngineAgainstPodman drives a real Podman service through the
// Docker Engine API: a container is created with the project folder
// mounted at /work and the resources asked for, it writes there, it is
// stopped, started again, and removed; the engine's "no such container"
// is brabo.ErrNoContainer.
func TestEngineAgainstPodman(t *testing.T) {
	host := dockertest.Podman(t)
	image := dockertest.BusyboxImage(t, host)
	e, err := docker.New(host)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.StopTimeout = time.Second
	ctx := context.Background()
	if err := e.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := brabo.ContainerSpec{Name: "brabo-test-1", Image: image, Mount: dir,
		Args:      []string{"/bin/sh", "-c", "echo hello from the container > /work/hello.txt; exec sleep 600"},
		Resources: brabo.Resources{CPUs: 0.5, MemoryMB: 64}, Labels: map[string]string{"brabo.project": "prj_1"}}
	info, err := e.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != "running" || info.ID == "" || info.Name != spec.Name {
		t.Fatalf("started container: %+v", info)
	}
	dockertest.WaitFile(t, filepath.Join(dir, "hello.txt"), "hello from the container")

	if err := e.Stop(ctx, spec.Name); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Inspect(ctx, spec.Name); err != nil || got.State != "exited" {
		t.Fatalf("after stop: %+v %v", got, err)
	}
	// Start again: the same container, not a second one.
	again, err := e.Start(ctx, spec)
	if err != nil || again.ID != info.ID || again.State != "running" {
		t.Fatalf("start again: %+v %v (first %s)", again, err, info.ID)
	}
	if err := e.Remove(ctx, spec.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Inspect(ctx, spec.Name); !errors.Is(err, brabo.ErrNoContainer) {
		t.Fatalf("inspect after remove: %v, want ErrNoContainer", err)
	}
	if err := e.Stop(ctx, spec.Name); !errors.Is(err, brabo.ErrNoContainer) {
		t.Fatalf("stop of a removed container: %v, want ErrNoContainer", err)
	}
	if err := e.Remove(ctx, spec.Name); !errors.Is(err, brabo.ErrNoContainer) {
		t.Fatalf("remove of a removed container: %v, want ErrNoContainer", err)
	}
}

// TestEngineUnreachable: an engine that does not answer is an error that
// names where it was looked for, not a hang or a panic.
func TestEngineUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "nobody.sock")
	e, err := docker.New("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = e.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), sock) {
		t.Fatalf("Ping of a socket nobody serves: %v", err)
	}
	if _, err := docker.New(" "); err == nil {
		t.Fatal("New with no address: no error")
	}
}

// TestEngineRecreatesAContainerMadeOtherwise: a container of the same name
// is reused only when its settings label and its mounts are the spec's; a
// hand-made one, or one made with other settings, is removed and created
// again. A read-only path that leaves the folder is refused.
func TestEngineRecreatesAContainerMadeOtherwise(t *testing.T) {
	host := dockertest.Podman(t)
	image := dockertest.BusyboxImage(t, host)
	e, err := docker.New(host)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "permissions.json"), []byte("{}"), 0o644)
	spec := brabo.ContainerSpec{Name: "brabo-test-2", Image: image, Mount: dir, Args: []string{"sleep", "600"},
		ReadOnly: []string{"permissions.json"}, Labels: map[string]string{brabo.LabelSettings: "one"}}
	first, err := e.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Start(ctx, spec); err != nil || got.ID != first.ID {
		t.Fatalf("the same spec again: %+v %v (first %s)", got, err, first.ID)
	}
	if len(first.Mounts) != 2 || first.Network != "none" || first.Privileged {
		t.Fatalf("the container as made: mounts %+v, network %q, privileged %v", first.Mounts, first.Network, first.Privileged)
	}
	other := spec
	other.Labels = map[string]string{brabo.LabelSettings: "two"}
	second, err := e.Start(ctx, other)
	if err != nil || second.ID == first.ID {
		t.Fatalf("another settings label: %+v %v, want a new container", second, err)
	}
	// The label copied, the read-only path left out: recreated too.
	copied := other
	copied.ReadOnly = nil
	third, err := e.Start(ctx, copied)
	if err != nil || third.ID == second.ID || len(third.Mounts) != 1 {
		t.Fatalf("the label with other mounts: %+v %v, want a new container", third, err)
	}
	bad := spec
	bad.ReadOnly = []string{"../etc"}
	if _, err := e.Start(ctx, bad); err == nil || !strings.Contains(err.Error(), "not a path inside the project folder") {
		t.Fatalf("a read-only path outside the folder: %v", err)
	}
}
