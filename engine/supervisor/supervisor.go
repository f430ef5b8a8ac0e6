// Package supervisor is the one owner of the agents of a brabo process
// (docs/engine.md): the dev agents' manager (engine/devagent), each
// project's QA lead (engine/gate) and dev lead (engine/devlead), the wake
// worker that routes decisions to them (engine/wake), and the sweeper that
// enforces the wait caps. cmd/brabo builds one Supervisor from its flags
// and hands its Conversations and Gates to the HTTP API; it holds no
// agent of its own.
//
// The project's cap on parallel dev agents (brabo.Project.MaxParallel) is
// honoured here in three places: a dev agent claims a task only below it
// (devagent), an approved propose_execution_plan starts the planned agents
// within it (devlead.Starter.RunPlan, registered by Runners), and the dev
// lead's parallelize starts agents at once within it and proposes the
// action above it: within the cap there is nothing to decide.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/devlead"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/pipeline"
)

// SoleOwnerName is the owner of the agent and run leases of a process that
// alone uses its store (SQLite): a fixed name, so that after a crash the
// next start holds at once what its predecessor held, instead of waiting
// for the leases to run out.
const SoleOwnerName = "sqlite"

// Supervisor runs the agents of one process. Set the fields, then Start.
type Supervisor struct {
	Store    brabo.Store
	Pipeline *pipeline.Service
	// Model runs every agent (dev agents, QA sub-agents, dev leads). Nil
	// runs no agent here: only the wake worker, which marks delivered the
	// settled actions nobody waits for and leaves a waiting run's message
	// to a process that runs agents.
	Model model.Model
	// SoleOwner is true when this process alone uses the store (SQLite):
	// its leases carry SoleOwnerName, and the runs a previous process left
	// working mid-turn are blocked at Start.
	SoleOwner bool
	// Lease is how long a dev agent's lease lasts unless renewed
	// (devagent.DefaultLease when zero).
	Lease time.Duration
	// WaitCap is the inactivity cap of a project that sets none of its own
	// (brabo.DefaultWaitCap when zero): brabo serve --wait-cap.
	WaitCap time.Duration
	// Sweep is how often the wait caps are enforced (wake.DefaultSweep
	// when zero).
	Sweep time.Duration
	// Now is the clock of the agents' runs and of the sweep (the real
	// clock when nil); tests use a fake one.
	Now func() time.Time
	Log *slog.Logger

	owner   string
	manager *devagent.Manager
	leads   *leads
	worker  *wake.Worker
	sweeper *wake.Sweeper
	// managed is closed when the manager's Run has returned (its leases
	// released); stopped when the worker and the sweeper have.
	managed, stopped chan struct{}
}

// Runners are the executor runners of the action types the engine
// executes: propose_execution_plan, parallelize and raise_max_parallel
// (devlead.Starter) and assess_implementability. The wiring registers
// them with the executor (executor.Register); they need the store only,
// so a process without a model executes them too.
func Runners(store brabo.Store) map[brabo.ActionType]func(context.Context, brabo.ExecRequest) (*brabo.Result, error) {
	st := &devlead.Starter{Store: store}
	return map[brabo.ActionType]func(context.Context, brabo.ExecRequest) (*brabo.Result, error){
		brabo.ProposeExecutionPlan:   st.RunPlan,
		brabo.Parallelize:            st.RunParallelize,
		brabo.RaiseMaxParallel:       st.RunRaiseMaxParallel,
		brabo.AssessImplementability: devlead.RunAssessment,
	}
}

func (s *Supervisor) waitCap() time.Duration {
	if s.WaitCap > 0 {
		return s.WaitCap
	}
	return brabo.DefaultWaitCap
}

type clock struct{ now func() time.Time }

func (c clock) Now() time.Time { return c.now().UTC() }

// Start starts the agents until ctx ends: with a Model, the dev agents
// (the ones whose lease this process holds), every project's QA lead
// (restoring its waiting areas), the dev leads on first use, and the
// sweeper; the wake worker in any case. Wait returns once they stopped.
func (s *Supervisor) Start(ctx context.Context) error {
	if s.Store == nil || s.Pipeline == nil {
		return errors.New("supervisor: a store and a pipeline are needed")
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	s.owner = brabo.NewID("proc")
	if s.SoleOwner {
		s.owner = SoleOwnerName
	}
	router := &wake.Router{Store: s.Store}
	s.worker = &wake.Worker{Store: s.Store, Owner: s.owner, Local: router, Resume: router, Log: s.Log}
	if s.Model != nil {
		s.manager = &devagent.Manager{Store: s.Store, Proposer: s.Pipeline, Scoper: s.Pipeline, Model: s.Model, Log: s.Log,
			Owner: s.owner, Lease: s.Lease, WaitCap: s.waitCap(),
			Manages: func(ag *brabo.Agent) bool { return ag.IsModuleDev() }}
		if s.Now != nil {
			s.manager.Clock = clock{s.Now}
		}
		s.leads = newLeads(ctx, s.Store, s.Pipeline, s.Model, s.waitCap(), &devlead.Starter{Store: s.Store, Now: s.Now}, s.Log)
		s.leads.now = s.Now
		router.Dev, router.Gate, router.Lead = s.manager, s.leads.gateReceiver, s.leads.leadReceiver
		if s.SoleOwner {
			if n, err := s.manager.BlockInterrupted(ctx); err != nil {
				return fmt.Errorf("blocking interrupted turns: %w", err)
			} else if n > 0 {
				s.Log.Warn("tasks whose agent was stopped mid-turn are blocked (origin infra)", "count", n)
			}
		}
		if err := s.leads.restore(ctx); err != nil {
			return fmt.Errorf("restoring the QA leads' waiting areas: %w", err)
		}
		s.sweeper = &wake.Sweeper{Store: s.Store, Expire: router, Now: s.Now, Poll: s.Sweep, Log: s.Log}
		// The dev agents whose leases this process holds run here; their
		// actors restore their waiting runs. Agents created later (by a
		// maintainer, an approved plan or parallelize) are picked up at
		// the next scan.
		s.managed = make(chan struct{})
		go func() {
			defer close(s.managed)
			if err := s.manager.Run(ctx); err != nil {
				s.Log.Error("running the dev agents", "err", err)
			}
		}()
	}
	s.stopped = make(chan struct{})
	go func() {
		defer close(s.stopped)
		done := make(chan struct{})
		if s.sweeper != nil {
			go func() { defer close(done); s.sweeper.Run(ctx) }()
		} else {
			close(done)
		}
		s.worker.Run(ctx)
		<-done
	}()
	return nil
}

// Conversations is the dev lead's conversation API for the HTTP API; nil
// when no agent runs here (no Model).
func (s *Supervisor) Conversations() brabo.Conversations {
	if s.leads == nil {
		return nil
	}
	return s.leads
}

// Gates runs the QA gate for the HTTP API; nil when no agent runs here.
func (s *Supervisor) Gates() brabo.Gates {
	if s.leads == nil {
		return nil
	}
	return s.leads
}

// Owner names this process in the agent and run leases.
func (s *Supervisor) Owner() string { return s.owner }

// Manager is the dev agents' manager (nil without a Model); tests look at
// which actors are live.
func (s *Supervisor) Manager() *devagent.Manager { return s.manager }

// Sweeper is the wait caps' sweeper (nil without a Model); tests drive it
// on a fake clock.
func (s *Supervisor) Sweeper() *wake.Sweeper { return s.sweeper }

// Wait returns when every agent has stopped (after Start's ctx ended),
// the dev agents' leases are released, and the worker and sweeper have
// returned.
func (s *Supervisor) Wait() {
	if s.manager != nil {
		<-s.managed
		s.manager.Wait()
	}
	if s.leads != nil {
		s.leads.wait()
	}
	if s.stopped != nil {
		<-s.stopped
	}
}
