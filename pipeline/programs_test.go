package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// The pipeline resolves each program name where the command will run and
// Decide matches the program a name resolves to: git's own
// helper is git status for Terminal(git status), a program inside the
// project matches no rule, and the helper of git push meets the cap.
func TestProposeResolvesPrograms(t *testing.T) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	execPath := strings.TrimSpace(string(out))
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := &pipeline.Service{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	root := t.TempDir()
	file := `{"allow": ["Terminal(git status)", "Terminal(./tool)"]}`
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(file), 0o644); err != nil {
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
		if err := tx.CreateProject(ctx, p); err != nil {
			return err
		}
		return tx.SetRole(ctx, brabo.Membership{ProjectID: p.ID, MemberID: m.ID, Role: brabo.Owner})
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd    string
		want   brabo.Policy
		reason string
	}{
		{execPath + "/git-status --short", brabo.AutoApprove, "permissions.json allow: Terminal(git status)"},
		{"git status", brabo.AutoApprove, "permissions.json allow: Terminal(git status)"},
		{"./tool", brabo.RequireApproval, "default: no rule approves it"},
		{execPath + "/git-push origin main", brabo.RequireApproval, "default: no rule approves it"},
	} {
		a, err := svc.Propose(ctx, pipeline.ProposeRequest{ProjectID: p.ID, Actor: pipeline.Actor{Member: m},
			Type: brabo.Terminal, Payload: brabo.Payload{Command: c.cmd}})
		if err != nil {
			t.Fatal(err)
		}
		if a.Decision.Policy != c.want || !strings.HasPrefix(a.Reason, c.reason) {
			t.Errorf("%q: %s (%s), want %s (%s…)", c.cmd, a.Decision.Policy, a.Reason, c.want, c.reason)
		}
	}
}
