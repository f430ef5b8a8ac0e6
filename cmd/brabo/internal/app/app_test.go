package app

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Every process is wired alike: brabo agent (no address) gets the same
// notifier, repository reader, limits and protection as brabo serve, on a
// real SQLite store; only serve has an HTTP server. (Unsandboxed: the
// sandbox's helper is brabo's own binary, which a test binary is not.) Before the one wiring
// the agent's pipeline had no notifier, no repository reader and the
// default limits whatever it was given.
func TestOpenWiresEveryProcessAlike(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", ""} {
		data := t.TempDir()
		a, err := Open(context.Background(), Config{Name: "test", Data: data, Addr: addr, MaxPending: 3, MaxRunning: 2, NoSandbox: true,
			WaitCap: time.Minute})
		if err != nil {
			t.Fatalf("addr %q: %v", addr, err)
		}
		p := a.Pipeline
		switch {
		case p.Notifier == nil || p.Notifier != a.Notifier:
			t.Errorf("addr %q: the pipeline's notifier is %v", addr, p.Notifier)
		case p.Repo == nil:
			t.Errorf("addr %q: the pipeline reads no repository for previews", addr)
		case p.MaxPending != 3 || p.MaxRunning != 2:
			t.Errorf("addr %q: limits %d pending, %d running; want 3 and 2", addr, p.MaxPending, p.MaxRunning)
		case !slices.Contains(p.Protect.ServerPaths, filepath.Join(data, "brabo.db")):
			t.Errorf("addr %q: the database is not protected: %v", addr, p.Protect.ServerPaths)
		case p.InstanceID == "" || p.Processes == nil:
			t.Errorf("addr %q: the pipeline is no instance of its store", addr)
		case (addr == "") != (a.HTTP == nil):
			t.Errorf("addr %q: HTTP server %v", addr, a.HTTP)
		}
		// The data folder is held until Close.
		if _, err := Open(context.Background(), Config{Data: data, NoSandbox: true}); !errors.As(err, new(*DataInUse)) {
			t.Errorf("addr %q: a second process on the folder: %v, want DataInUse", addr, err)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := a.Shutdown("test over"); err != nil {
			t.Error(err)
		}
		a.Close()
		b, err := Open(context.Background(), Config{Data: data, NoSandbox: true})
		if err != nil {
			t.Fatalf("addr %q: reopening after Close: %v", addr, err)
		}
		b.Close()
	}
}
