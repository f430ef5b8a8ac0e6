package pipeline_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/policy"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// A project made before brabo recorded trusted versions (no trust row)
// trusts its file on disk at its first use, once, with an event saying so;
// from then on a loosening on disk waits like anywhere else.
func TestTrustAtFirstUse(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := &pipeline.Service{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	root := t.TempDir()
	first := `{"allow": ["Terminal(echo)"]}`
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	m := &brabo.Member{ID: "mem_1", Name: "ana", TokenHash: "h", CreatedAt: now}
	p := &brabo.Project{ID: "prj_1", Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: root,
		WorkspaceDir: "shop-12345678", OwnerID: m.ID, CreatedAt: now}
	if err := st.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, m); err != nil {
			return err
		}
		if err := tx.CreateProject(ctx, p); err != nil { // as before migration 00006: no trust recorded
			return err
		}
		return tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: m.ID, Role: brabo.Owner})
	}); err != nil {
		t.Fatal(err)
	}
	propose := func(command string) *brabo.ProposedAction {
		t.Helper()
		a, err := svc.Propose(ctx, pipeline.ProposeRequest{ProjectID: p.ID, Actor: pipeline.Actor{Member: m},
			Type: brabo.Terminal, Payload: brabo.Payload{Command: command}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	events := func(typ string) []brabo.Event {
		var out []brabo.Event
		st.View(ctx, func(tx brabo.Tx) error {
			evs, err := tx.Events(ctx, p.ID, 0, 1000)
			for _, e := range evs {
				if e.Type == typ {
					out = append(out, e)
				}
			}
			return err
		})
		return out
	}

	for range 2 {
		if a := propose("echo hi"); a.Decision.Policy != brabo.AutoApprove {
			t.Fatalf("echo at first use: %s: %s", a.Decision.Policy, a.Reason)
		}
	}
	evs := events(brabo.EventPermissionsTrusted)
	if len(evs) != 1 {
		t.Fatalf("%d permissions.trusted events at first use, want 1", len(evs))
	}
	var payload map[string]any
	json.Unmarshal(evs[0].Payload, &payload)
	if payload["source"] != brabo.TrustFirstUse || payload["hash"] != policy.ContentHash([]byte(first)) {
		t.Fatalf("first use recorded %s", evs[0].Payload)
	}

	// From now on the file recorded at first use is the trusted one.
	loose := `{"allow": ["Terminal(echo)", "Terminal(touch)"]}`
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(loose), 0o644); err != nil {
		t.Fatal(err)
	}
	if a := propose("touch x"); a.Decision.Policy != brabo.RequireApproval {
		t.Fatalf("a loosening after first use: %s: %s", a.Decision.Policy, a.Reason)
	}
	trust, err := svc.PermissionsTrust(ctx, p)
	if err != nil || trust.Status != pipeline.StatusHeld || trust.TrustedHash != policy.ContentHash([]byte(first)) {
		t.Fatalf("trust state: %+v %v", trust, err)
	}
}
