package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/brabo-dev/brabo"
)

// What the pipeline records of the processes that run actions
// (docs/processes.md). With Service.Processes set, this process is an
// instance of the store (Register, Heartbeat, Unregister), every action it
// executes has a running record from just before the executor starts until
// the transaction that settles it, and RecoverDead stops and fails what a
// dead instance left running.

// DefaultInstanceLease is how long an instance's row holds without a
// renewal before another host takes it for dead.
const DefaultInstanceLease = 30 * time.Second

// DefaultStopGrace is how long the processes a dead instance left get
// between SIGTERM and SIGKILL.
const DefaultStopGrace = 5 * time.Second

func (s *Service) lease() time.Duration {
	if s.InstanceLease > 0 {
		return s.InstanceLease
	}
	return DefaultInstanceLease
}

func (s *Service) grace() time.Duration {
	if s.StopGrace > 0 {
		return s.StopGrace
	}
	return DefaultStopGrace
}

// self is this instance as recorded, its lease running from now.
func (s *Service) self() *brabo.Instance {
	in := s.Processes.Self()
	in.ID = s.InstanceID
	in.StartedAt = s.started
	in.LeaseUntil = s.now().Add(s.lease())
	return &in
}

// Register records this process as an instance of the store. It needs
// Processes and InstanceID.
func (s *Service) Register(ctx context.Context) error {
	if s.Processes == nil || s.InstanceID == "" {
		return fmt.Errorf("pipeline: registering an instance needs Processes and InstanceID")
	}
	s.started = s.now()
	return s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.PutInstance(ctx, s.self()) })
}

// Heartbeat renews this instance's lease and recovers what dead instances
// left (RecoverDead), every third of the lease, until ctx ends.
func (s *Service) Heartbeat(ctx context.Context) {
	t := time.NewTicker(s.lease() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.PutInstance(ctx, s.self()) }); err != nil {
			s.log().Warn("renewing this instance's lease", "instance", s.InstanceID, "err", err)
		}
		if n, err := s.RecoverDead(ctx); err != nil {
			s.log().Warn("recovering the actions of dead instances", "err", err)
		} else if n > 0 {
			s.log().Warn("actions a dead instance left running were stopped and marked failed", "count", n)
		}
	}
}

// Unregister removes this instance's row: a graceful stop, once every
// action it ran has settled.
func (s *Service) Unregister(ctx context.Context) error {
	if s.Processes == nil || s.InstanceID == "" {
		return nil
	}
	return s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.DeleteInstance(ctx, s.InstanceID) })
}

// claimRun records, in the transaction that claims a to be run, that this
// instance runs it. From the claim's commit on, a crash of this instance
// leaves a record RecoverDead finds: on a database several instances
// share, an approved action with no record may be another live
// instance's, between its claim and its start, so only the record says
// whose it is. An action its agent runs itself has none.
func (s *Service) claimRun(ctx context.Context, tx brabo.Tx, a *brabo.ProposedAction) error {
	if s.Processes == nil || a.External() {
		return nil
	}
	self := s.Processes.Self()
	return tx.PutRunning(ctx, &brabo.RunningAction{ActionID: a.ID, InstanceID: s.InstanceID, Host: self.Host,
		BootID: self.BootID, StartedAt: s.now()})
}

// running records that a executes here now, and returns what the executor
// calls with each process group it starts. With no Processes it records
// nothing.
func (s *Service) running(ctx context.Context, a *brabo.ProposedAction) func(brabo.ProcessGroup) {
	if s.Processes == nil {
		return nil
	}
	self := s.Processes.Self()
	rec := &brabo.RunningAction{ActionID: a.ID, InstanceID: s.InstanceID, Host: self.Host, BootID: self.BootID,
		StartedAt: s.now()}
	// Recorded whatever happens to the caller: the command runs.
	ctx = context.WithoutCancel(ctx)
	put := func(r brabo.RunningAction) {
		err := s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.PutRunning(ctx, &r) })
		if err != nil {
			// The action runs all the same; only a crash would leave it
			// unfound (its processes still carry BRABO_ACTION_ID).
			s.log().Warn("recording a running action", "action", a.ID, "err", err)
		}
	}
	// The record itself was written with the claim (claimRun); this adds
	// the process group once the command has one.
	return func(g brabo.ProcessGroup) {
		r := *rec
		r.PGID, r.LeaderStart = g.PGID, g.LeaderStart
		put(r)
	}
}

// RecoverDead stops and fails the actions that instances no longer alive
// left running: on this host (same boot) it stops their processes first
// (Processes.StopAction: TERM, then KILL after StopGrace), then settles
// each action failed with the reason, tells its proposer, and removes the
// dead instances' rows. An instance alive (this one included) is never
// touched: on PostgreSQL several instances share the database. Another
// host's instance counts as dead once its lease ran out; its processes,
// which brabo cannot reach from here, are named in the reason (a paused
// process there that comes back finds its action settled).
func (s *Service) RecoverDead(ctx context.Context) (int, error) {
	if s.Processes == nil {
		return 0, nil
	}
	var insts []*brabo.Instance
	var runs []*brabo.RunningAction
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		if insts, err = tx.Instances(ctx); err != nil {
			return err
		}
		runs, err = tx.RunningActions(ctx)
		return err
	})
	if err != nil {
		return 0, err
	}
	now := s.now()
	byID := map[string]*brabo.Instance{}
	dead := map[string]bool{}
	for _, in := range insts {
		byID[in.ID] = in
		if in.ID != s.InstanceID && !s.Processes.Alive(in, now) {
			dead[in.ID] = true
		}
	}
	self := s.Processes.Self()
	n := 0
	for _, r := range runs {
		in := byID[r.InstanceID]
		switch {
		case r.InstanceID == s.InstanceID:
			continue // ours, running now
		case in == nil:
			// Its instance's row is gone: a graceful stop removes it only
			// once its actions settled, so this one was left by a crash
			// (or by a process that never registered). Judge by the
			// record itself.
			if r.Host != self.Host && now.Sub(r.StartedAt) < s.lease() {
				continue
			}
		case !dead[in.ID]:
			continue
		}
		reason, err := s.stopLeft(ctx, r, in)
		if err != nil {
			return n, err
		}
		if ok, err := s.failInterrupted(ctx, r.ActionID, reason); err != nil {
			return n, err
		} else if ok {
			n++
		}
	}
	// The rows of this host's dead instances go: their pid proves them
	// dead. Another host's stays, since a paused process there may come
	// back and renew it.
	for id := range dead {
		if byID[id].Host != self.Host {
			continue
		}
		if err := s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.DeleteInstance(ctx, id) }); err != nil {
			return n, err
		}
	}
	return n, nil
}

// stopLeft stops what a dead instance left of an action on this host and
// returns the reason the action fails with.
func (s *Service) stopLeft(ctx context.Context, r *brabo.RunningAction, in *brabo.Instance) (string, error) {
	who := "the brabo instance " + r.InstanceID
	if in != nil {
		who = fmt.Sprintf("the brabo instance %s (pid %d on %s)", r.InstanceID, in.PID, r.Host)
	}
	self := s.Processes.Self()
	if r.Host != self.Host || r.BootID != self.BootID {
		if r.Host == self.Host {
			return fmt.Sprintf("interrupted: %s stopped with the machine's last boot while this action ran; it may have run partly", who), nil
		}
		return fmt.Sprintf("interrupted: %s stopped renewing its lease while this action ran; its command may have run partly, and brabo cannot stop it from %s", who, self.Host), nil
	}
	k, err := s.Processes.StopAction(ctx, r, s.grace())
	if err != nil {
		return "", fmt.Errorf("stopping the processes of action %s: %w", r.ActionID, err)
	}
	return fmt.Sprintf("interrupted: %s died while this action ran; %d of its processes were still running and were stopped; it may have run partly", who, k), nil
}

// failInterrupted settles a claimed action failed with reason and tells its
// proposer; it reports false when the action had settled already (its
// running record was left behind alone).
func (s *Service) failInterrupted(ctx context.Context, actionID, reason string) (bool, error) {
	var a *brabo.ProposedAction
	err := s.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		a, err = tx.Action(ctx, actionID)
		return err
	})
	if err != nil {
		return false, err
	}
	if a.Status != brabo.StatusApproved && a.Status != brabo.StatusAutoApproved {
		return false, s.Store.Update(ctx, func(tx brabo.Tx) error { return tx.FinishRunning(ctx, actionID) })
	}
	// The proposer of an interrupted auto-approval never got its answer:
	// tell it too.
	if _, err := s.settle(ctx, a, a.Status, &brabo.Result{ExitCode: -1, Error: reason}, nil, true); err != nil {
		return false, err
	}
	return true, nil
}
