package pipeline_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procs"
	"github.com/brabo-dev/brabo/pipeline"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// TestRecoverDeadTouchesOnlyDeadInstances: of the actions recorded as
// running, RecoverDead leaves those of live instances (this one, another
// process of this host, another host within its lease) running, and
// settles failed those of dead ones: another host past its lease (named
// in the reason, nothing signalled), and a dead process of this host,
// whose left-over process it stops first.
func TestRecoverDeadTouchesOnlyDeadInstances(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host := &procs.Host{}
	self := host.Self()
	svc := &pipeline.Service{Store: st, Processes: host, InstanceID: "inst_self", StopGrace: time.Second,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := svc.Register(ctx); err != nil {
		t.Fatal(err)
	}

	// A process of this host that has exited: its pid names nothing now.
	gone := exec.Command("true")
	if err := procs.Run(gone); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	instances := []*brabo.Instance{
		{ID: "inst_live_here", Host: self.Host, BootID: self.BootID, PID: self.PID, PIDStart: self.PIDStart, LeaseUntil: now.Add(-time.Hour)},
		{ID: "inst_dead_here", Host: self.Host, BootID: self.BootID, PID: gone.Process.Pid, PIDStart: 1, LeaseUntil: now.Add(time.Hour)},
		{ID: "inst_live_there", Host: "elsewhere", BootID: "b", PID: 1, LeaseUntil: now.Add(time.Hour)},
		{ID: "inst_dead_there", Host: "elsewhere", BootID: "b", PID: 1, LeaseUntil: now.Add(-time.Hour)},
	}
	owners := []string{"inst_self", "inst_live_here", "inst_dead_here", "inst_live_there", "inst_dead_there"}
	actions := map[string]string{} // instance → action
	m := &brabo.Member{ID: "mem_1", Name: "ana", TokenHash: "h", CreatedAt: now}
	p := &brabo.Project{ID: "prj_1", Slug: "shop", Name: "Shop", Mode: brabo.ModeLocal, Root: t.TempDir(),
		WorkspaceDir: "shop-12345678", OwnerID: m.ID, CreatedAt: now}
	err = st.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.CreateMember(ctx, m); err != nil {
			return err
		}
		if err := tx.CreateProject(ctx, p); err != nil {
			return err
		}
		for _, in := range instances {
			if err := tx.PutInstance(ctx, in); err != nil {
				return err
			}
		}
		for _, owner := range owners {
			a := &brabo.ProposedAction{ID: "act_" + owner, ProjectID: p.ID, Type: brabo.Terminal,
				Payload: brabo.Payload{Command: "sleep 300"}, ActorID: m.ID, ActorKind: "member", PrincipalID: m.ID,
				Status: brabo.StatusApproved, CreatedAt: now}
			if err := tx.InsertAction(ctx, a); err != nil {
				return err
			}
			actions[owner] = a.ID
			r := &brabo.RunningAction{ActionID: a.ID, InstanceID: owner, Host: self.Host, BootID: self.BootID, StartedAt: now}
			if strings.HasSuffix(owner, "_there") {
				r.Host = "elsewhere"
			}
			if err := tx.PutRunning(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The processes the actions run: each carries its action's id.
	sleeps := map[string]*exec.Cmd{}
	for _, owner := range owners {
		cmd := exec.Command("sleep", "300")
		cmd.Env = append(os.Environ(), procs.EnvName+"="+actions[owner])
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := procs.Start(cmd); err != nil {
			t.Fatal(err)
		}
		sleeps[owner] = cmd
		done := make(chan struct{})
		go func() { procs.Wait(cmd); close(done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-done })
	}
	waitFor := func(what string, cond func() bool) {
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("the sleeps", func() bool {
		list, _ := procs.Find(procs.Target{ActionID: actions["inst_dead_here"]})
		return len(list) == 1
	})

	n, err := svc.RecoverDead(ctx)
	if err != nil || n != 2 {
		t.Fatalf("RecoverDead = %d, %v; want the 2 actions of the dead instances", n, err)
	}
	want := map[string]string{
		"inst_self":       "",
		"inst_live_here":  "",
		"inst_live_there": "",
		"inst_dead_there": "stopped renewing its lease",
		"inst_dead_here":  "died while this action ran; 1 of its processes",
	}
	var left []*brabo.RunningAction
	var insts []*brabo.Instance
	st.View(ctx, func(tx brabo.Tx) error {
		for owner, reason := range want {
			a, err := tx.Action(ctx, actions[owner])
			if err != nil {
				return err
			}
			switch {
			case reason == "" && a.Status != brabo.StatusApproved:
				t.Errorf("%s: the live instance's action became %s", owner, a.Status)
			case reason != "" && (a.Status != brabo.StatusFailed || a.Result == nil || !strings.Contains(a.Result.Error, reason)):
				t.Errorf("%s: %s %+v; want failed, %q", owner, a.Status, a.Result, reason)
			}
		}
		left, _ = tx.RunningActions(ctx)
		insts, _ = tx.Instances(ctx)
		return nil
	})
	if len(left) != 3 {
		t.Errorf("%d running records left, want the 3 of live instances", len(left))
	}
	for _, in := range insts {
		if in.ID == "inst_dead_here" {
			t.Error("the dead instance of this host keeps its row")
		}
	}
	// Only the dead local instance's process was stopped; the other host's
	// record names nothing here, and live instances' processes run on.
	waitFor("the dead instance's process to stop", func() bool {
		st, err := procs.ReadStat(sleeps["inst_dead_here"].Process.Pid)
		return err != nil || st.Gone()
	})
	for _, owner := range []string{"inst_self", "inst_live_here", "inst_live_there", "inst_dead_there"} {
		if st, err := procs.ReadStat(sleeps[owner].Process.Pid); err != nil || st.Gone() {
			t.Errorf("%s: its process was stopped", owner)
		}
	}
}

// blockingExecutor starts nothing and returns only when released: the
// window between an action's claim and its command.
type blockingExecutor struct {
	entered chan struct{}
	release chan struct{}
}

func (e *blockingExecutor) Execute(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	close(e.entered)
	<-e.release
	return &brabo.Result{}, nil
}

// TestAClaimedActionOfADeadInstanceIsRecovered: an instance that dies after
// it claimed an action and before its command started leaves a record
// (claimRun, written with the claim), so another instance's RecoverDead
// fails the action. Without the record, on a database several instances
// share, the action would stay approved for ever: nothing says whose it is.
func TestAClaimedActionOfADeadInstanceIsRecovered(t *testing.T) {
	ctx := context.Background()
	host := &procs.Host{}
	self := host.Self()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	gone := exec.Command("true")
	if err := procs.Run(gone); err != nil {
		t.Fatal(err)
	}
	var a *brabo.ProposedAction
	st, m, _ := ownedProject(t, func(ctx context.Context, tx brabo.Tx, m *brabo.Member, p *brabo.Project) error {
		now := time.Now().UTC()
		a = &brabo.ProposedAction{ID: "act_1", ProjectID: p.ID, Type: brabo.Terminal, Payload: brabo.Payload{Command: "true"},
			ActorID: m.ID, ActorKind: "member", PrincipalID: m.ID, Status: brabo.StatusPending, CreatedAt: now}
		// The instance that will die: its pid names nothing by the time
		// the other one looks.
		if err := tx.PutInstance(ctx, &brabo.Instance{ID: "inst_dying", Host: self.Host, BootID: self.BootID,
			PID: gone.Process.Pid, PIDStart: 1, LeaseUntil: now.Add(time.Hour)}); err != nil {
			return err
		}
		return tx.InsertAction(ctx, a)
	})
	ex := &blockingExecutor{entered: make(chan struct{}), release: make(chan struct{})}
	dying := &pipeline.Service{Store: st, Processes: host, InstanceID: "inst_dying", Executor: ex, Log: quiet}
	approved := make(chan struct{})
	go func() { dying.Approve(ctx, a.ID, m, dying.RevisionNow(ctx, a.ID)); close(approved) }()
	defer func() { close(ex.release); <-approved }()
	select {
	case <-ex.entered: // claimed, and its command not started
	case <-time.After(10 * time.Second):
		t.Fatal("the approval never reached the executor")
	}

	other := &pipeline.Service{Store: st, Processes: host, InstanceID: "inst_other", StopGrace: time.Second, Log: quiet}
	if err := other.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := other.RecoverDead(ctx); err != nil || n != 1 {
		t.Fatalf("RecoverDead = %d, %v; want the dead instance's claimed action", n, err)
	}
	st.View(ctx, func(tx brabo.Tx) error {
		got, err := tx.Action(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != brabo.StatusFailed || got.Result == nil || !strings.Contains(got.Result.Error, "interrupted") {
			t.Errorf("the dead instance's claimed action is %s (%+v), want failed as interrupted", got.Status, got.Result)
		}
		return nil
	})
}
