package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/policy"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// The human decisions, tested where they are decided: the pipeline on a
// real SQLite file, with the real executor running bash in a project
// folder, set up through the service's own operations (service.go) as the
// API would.

// decideFixture is a local project with an owner, a developer and an
// agent "coder" that proposes.
type decideFixture struct {
	t         *testing.T
	ctx       context.Context
	store     brabo.Store
	svc       *pipeline.Service
	root      string
	project   *brabo.Project
	owner     *brabo.Member
	developer *brabo.Member
	agent     *brabo.Agent
}

func newDecideFixture(t *testing.T, permissions string) *decideFixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &decideFixture{t: t, ctx: ctx, store: st, root: t.TempDir()}
	f.svc = &pipeline.Service{Store: st, Executor: executor.New(executor.Options{}), WorkspacesRoot: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f.writePermissions(permissions)
	token, err := f.svc.Bootstrap(ctx, "ana")
	if err != nil || token == "" {
		t.Fatalf("bootstrap: %q %v", token, err)
	}
	if f.owner, _, err = f.svc.ByTokenHash(ctx, brabo.HashToken(token)); err != nil {
		t.Fatal(err)
	}
	if f.project, err = f.svc.CreateProject(ctx, f.owner, brabo.NewProject{Slug: "shop", Mode: brabo.ModeLocal, Root: f.root}); err != nil {
		t.Fatal(err)
	}
	if f.developer, _, err = f.svc.CreateMember(ctx, f.project.ID, "dev", brabo.Developer); err != nil {
		t.Fatal(err)
	}
	if f.agent, _, err = f.svc.CreateAgent(ctx, f.project.ID, f.owner.ID, "coder", ""); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *decideFixture) writePermissions(content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.root, "permissions.json"), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// propose proposes a terminal command as the agent.
func (f *decideFixture) propose(command string) *brabo.ProposedAction {
	f.t.Helper()
	a, err := f.svc.Propose(f.ctx, brabo.ProposeRequest{ProjectID: f.project.ID, Actor: brabo.Actor{Agent: f.agent},
		Type: brabo.Terminal, Payload: brabo.Payload{Command: command}})
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// pending proposes a command that waits for a human.
func (f *decideFixture) pending(command string) *brabo.ProposedAction {
	f.t.Helper()
	a := f.propose(command)
	if a.Status != brabo.StatusPending {
		f.t.Fatalf("%q was %s (%s), want pending", command, a.Status, a.Reason)
	}
	return a
}

// settled returns the action.settled messages the agent is owed, by
// action id: what its run learns the decision from.
func (f *decideFixture) settled() map[string][]brabo.Settled {
	f.t.Helper()
	out := map[string][]brabo.Settled{}
	err := f.store.Update(f.ctx, func(tx brabo.Tx) error {
		msgs, err := tx.ClaimOutbox(f.ctx, time.Now().Add(time.Hour), time.Minute, 1000)
		for _, m := range msgs {
			if m.Topic != brabo.TopicActionSettled || m.ActorKey != brabo.AgentKey(f.agent.ID) {
				continue
			}
			var s brabo.Settled
			if err := json.Unmarshal(m.Payload, &s); err != nil {
				return err
			}
			out[s.ActionID] = append(out[s.ActionID], s)
		}
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *decideFixture) events(actionID string) []string {
	f.t.Helper()
	evs, err := f.svc.ActionEvents(f.ctx, f.project.ID, actionID)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func (f *decideFixture) action(id string) *brabo.ProposedAction {
	f.t.Helper()
	a, err := f.svc.Action(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// Approve runs a pending action once, as the approving member, records
// who approved it, and settles it for its agent with the real result; a
// second Approve runs nothing again.
func TestApproveRunsOnceAndSettles(t *testing.T) {
	f := newDecideFixture(t, `{}`)
	a := f.pending("echo approved > out.txt; echo done")
	d, err := f.svc.Approve(f.ctx, a.ID, f.owner, f.svc.RevisionNow(f.ctx, a.ID))
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != brabo.OutcomeApproved || d.Action.Status != brabo.StatusExecuted || d.Action.DecidedBy != f.owner.ID {
		t.Fatalf("approve: outcome %s, status %s, decided by %q", d.Outcome, d.Action.Status, d.Action.DecidedBy)
	}
	if d.Action.Result == nil || d.Action.Result.ExitCode != 0 || !strings.Contains(d.Action.Result.Output, "done") {
		t.Fatalf("approve ran: %+v", d.Action.Result)
	}
	if b, err := os.ReadFile(filepath.Join(f.root, "out.txt")); err != nil || string(b) != "approved\n" {
		t.Fatalf("the command's file: %q %v", b, err)
	}
	again, err := f.svc.Approve(f.ctx, a.ID, f.owner, f.svc.RevisionNow(f.ctx, a.ID))
	if err != nil || again.Outcome != brabo.OutcomeAlreadyApproved {
		t.Fatalf("second approve: %+v %v", again, err)
	}
	// Settled exactly once, with the result the agent acts on.
	s := f.settled()[a.ID]
	if len(s) != 1 || s[0].Status != brabo.StatusExecuted || s[0].Result == nil || !strings.Contains(s[0].Result.Output, "done") {
		t.Fatalf("settled messages for the agent: %+v", s)
	}
	stored := f.action(a.ID)
	if stored.Status != brabo.StatusExecuted || stored.SettledAt.IsZero() || stored.DecidedAt.IsZero() {
		t.Fatalf("stored action: %s, settled %v, decided %v", stored.Status, stored.SettledAt, stored.DecidedAt)
	}
	evs := strings.Join(f.events(a.ID), " ")
	if strings.Count(evs, brabo.EventActionApproved) != 1 || strings.Count(evs, brabo.EventActionExecuted) != 1 {
		t.Fatalf("the action's events: %s", evs)
	}
}

// Approve refuses a member below the role the decision needs, and a
// member of no role in the project does not even see the action.
func TestApproveNeedsTheRole(t *testing.T) {
	f := newDecideFixture(t, `{}`)
	a := f.pending(`p=echo; "$p" hi`) // a program not known statically: a maintainer approves
	if a.Type.MinRole() == brabo.EffectiveRole(a.Type, a.Decision) {
		t.Fatalf("%q needs only %s: the test needs a decision above the type's minimum", a.Payload.Command, a.Type.MinRole())
	}
	if _, err := f.svc.Approve(f.ctx, a.ID, f.developer, f.svc.RevisionNow(f.ctx, a.ID)); brabo.ErrorCode(err) != brabo.CodeForbiddenRole {
		t.Fatalf("a developer approving %q: %v, want forbidden_role", a.Payload.Command, err)
	}
	stranger := &brabo.Member{ID: "mem_stranger", Name: "eve"}
	if _, err := f.svc.Approve(f.ctx, a.ID, stranger, f.svc.RevisionNow(f.ctx, a.ID)); !errors.Is(err, brabo.ErrNotFound) {
		t.Fatalf("a member of no role approving: %v, want not found", err)
	}
	if got := f.action(a.ID); got.Status != brabo.StatusPending {
		t.Fatalf("after refused approvals the action is %s", got.Status)
	}
}

// Deny settles a pending action with the reason its agent reads, runs
// nothing, and is final: neither a second Deny nor an Approve changes it.
func TestDenyIsFinalAndSettles(t *testing.T) {
	f := newDecideFixture(t, `{}`)
	a := f.pending("echo ran > denied.txt")
	if _, err := f.svc.Deny(f.ctx, a.ID, f.owner, "  "); brabo.ErrorCode(err) != brabo.CodeInvalidAction {
		t.Fatalf("a denial without a reason: %v, want invalid_action", err)
	}
	got, err := f.svc.Deny(f.ctx, a.ID, f.owner, "not now")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != brabo.StatusDenied || got.Reason != "not now" || got.DecidedBy != f.owner.ID {
		t.Fatalf("deny: %s %q by %q", got.Status, got.Reason, got.DecidedBy)
	}
	if _, err := f.svc.Deny(f.ctx, a.ID, f.owner, "again"); brabo.ErrorCode(err) != brabo.CodeActionAlreadyDenied {
		t.Fatalf("a second deny: %v, want action_already_denied", err)
	}
	if _, err := f.svc.Approve(f.ctx, a.ID, f.owner, f.svc.RevisionNow(f.ctx, a.ID)); err == nil {
		t.Fatal("a denied action was approved")
	}
	if _, err := os.Stat(filepath.Join(f.root, "denied.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the denied command ran: %v", err)
	}
	s := f.settled()[a.ID]
	if len(s) != 1 || s[0].Status != brabo.StatusDenied || s[0].Reason != "not now" || s[0].Result != nil {
		t.Fatalf("settled messages for the agent: %+v", s)
	}
	if stored := f.action(a.ID); stored.Status != brabo.StatusDenied || stored.Reason != "not now" {
		t.Fatalf("stored action: %s %q", stored.Status, stored.Reason)
	}
}

// ApproveAlways runs the action and records its pattern as a trusted
// version of permissions.json, so the same command is auto-approved from
// then on and another one still waits.
func TestApproveAlwaysRecordsThePattern(t *testing.T) {
	f := newDecideFixture(t, `{"allow": ["Terminal(echo)"]}`)
	a := f.pending("ls -la")
	preview, err := f.svc.AlwaysAllowPreview(f.ctx, a.ID, f.owner)
	if err != nil || len(preview.Patterns) == 0 {
		t.Fatalf("preview: %+v %v", preview, err)
	}
	d, err := f.svc.ApproveAlways(f.ctx, a.ID, f.owner, f.svc.RevisionNow(f.ctx, a.ID))
	if err != nil {
		t.Fatal(err)
	}
	if d.Action.Status != brabo.StatusExecuted || strings.Join(d.Patterns, " ") != strings.Join(preview.Patterns, " ") {
		t.Fatalf("approve-always: %s, patterns %q, previewed %q", d.Action.Status, d.Patterns, preview.Patterns)
	}
	file, err := os.ReadFile(filepath.Join(f.root, "permissions.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Patterns {
		if !strings.Contains(string(file), p) {
			t.Fatalf("permissions.json lacks %q: %s", p, file)
		}
	}
	if !strings.Contains(string(file), "Terminal(echo)") {
		t.Fatalf("approve-always dropped the file's own entry: %s", file)
	}
	// The file it wrote is trusted, not held.
	st, err := f.svc.PermissionsTrust(f.ctx, f.project)
	if err != nil || st.Status != pipeline.StatusTrusted || st.TrustedHash != policy.ContentHash(file) {
		t.Fatalf("trust after approve-always: %+v %v", st, err)
	}
	if again := f.propose("ls -la"); again.Status == brabo.StatusPending {
		t.Fatalf("the same command after approve-always waits: %s", again.Reason)
	}
	f.pending("rm -rf build")
	if s := f.settled()[a.ID]; len(s) != 1 || s[0].Status != brabo.StatusExecuted {
		t.Fatalf("settled messages for the agent: %+v", s)
	}
}

// A loosening of permissions.json on disk is held: decisions keep the
// trusted version until a maintainer accepts the exact content seen, and
// a developer cannot accept it.
func TestTrustHeldUntilAccepted(t *testing.T) {
	f := newDecideFixture(t, `{"allow": ["Terminal(echo)"]}`)
	loose := `{"allow": ["Terminal(echo)", "Terminal(touch)"]}`
	f.writePermissions(loose)
	st, err := f.svc.PermissionsTrust(f.ctx, f.project)
	if err != nil || st.Status != pipeline.StatusHeld || st.Change.Kind != policy.ChangeLoosen {
		t.Fatalf("trust of a loosening: %+v %v", st, err)
	}
	f.pending("touch held.txt")
	if _, err := f.svc.AcceptPermissions(f.ctx, f.project.ID, f.developer, st.DiskHash); brabo.ErrorCode(err) != brabo.CodeForbiddenRole {
		t.Fatalf("a developer accepting: %v, want forbidden_role", err)
	}
	if _, err := f.svc.AcceptPermissions(f.ctx, f.project.ID, f.owner, policy.ContentHash([]byte(`{}`))); brabo.ErrorCode(err) != brabo.CodePermissionsChanged {
		t.Fatalf("accepting another content than the one on disk: %v, want permissions_changed", err)
	}
	if a := f.propose("touch still-held.txt"); a.Status != brabo.StatusPending {
		t.Fatalf("after refused accepts the loosening applies: %s", a.Status)
	}
	st, err = f.svc.AcceptPermissions(f.ctx, f.project.ID, f.owner, st.DiskHash)
	if err != nil || st.Status != pipeline.StatusTrusted || st.TrustedHash != policy.ContentHash([]byte(loose)) {
		t.Fatalf("accept: %+v %v", st, err)
	}
	if a := f.propose("touch accepted.txt"); a.Status == brabo.StatusPending {
		t.Fatalf("after accepting, touch still waits: %s", a.Reason)
	}
}

// A tightening applies at once, and RestorePermissions writes the trusted
// version back over a held loosening.
func TestTrustTightenAppliesRestoreWritesBack(t *testing.T) {
	trusted := `{"allow": ["Terminal(echo)", "Terminal(touch)"]}`
	f := newDecideFixture(t, trusted)
	f.writePermissions(`{"allow": ["Terminal(echo)"]}`)
	st, err := f.svc.PermissionsTrust(f.ctx, f.project)
	if err != nil || st.Status != pipeline.StatusApplied || st.Change.Kind != policy.ChangeTighten {
		t.Fatalf("trust of a tightening: %+v %v", st, err)
	}
	f.pending("touch now-asks.txt")
	f.writePermissions(`{"allow": ["Terminal(echo)", "Terminal(touch)", "Terminal(rm)"]}`)
	if st, err = f.svc.PermissionsTrust(f.ctx, f.project); err != nil || !st.Held() {
		t.Fatalf("trust of a loosening: %+v %v", st, err)
	}
	if _, err := f.svc.RestorePermissions(f.ctx, f.project.ID, f.owner, st.DiskHash); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(f.root, "permissions.json"))
	if err != nil || policy.ContentHash(b) != st.TrustedHash {
		t.Fatalf("after restore the file is %q (%v), want the trusted version", b, err)
	}
}
