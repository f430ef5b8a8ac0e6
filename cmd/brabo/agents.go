package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/devlead"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/model/anthropic"
	"github.com/brabo-dev/brabo/model/openai"
	"github.com/brabo-dev/brabo/model/scripted"
	"github.com/brabo-dev/brabo/pipeline"
)

// newExecutor is the executor every subcommand runs approved actions
// with: the built-in runners, and the dev lead's two decision types
// (executing one records the decision). Its terminal commands are
// confined (confinement) when data names the data folder.
func newExecutor(env []string, data string) *executor.Executor {
	repos := ""
	if abs, err := filepath.Abs(data); err == nil && data != "" {
		// git_repo_create's bare repositories: the local provider's remotes.
		repos = filepath.Join(abs, "repos")
	}
	ex := executor.New(executor.Options{Env: env, Confine: confinement(data), ReposRoot: repos})
	ex.Register(brabo.ProposeExecutionPlan, devlead.RunPlan)
	ex.Register(brabo.AssessImplementability, devlead.RunAssessment)
	return ex
}

// openModel builds the model a spec names:
//
//	openai:<model>     OPENAI_BASE_URL (any OpenAI-compatible server) and OPENAI_API_KEY
//	anthropic:<model>  ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)
//	scripted:<path>    a JSON script of assistant turns (tests, the demo)
func openModel(spec string) (model.Model, error) {
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok || arg == "" {
		return nil, fmt.Errorf("model %q: want openai:<model>, anthropic:<model> or scripted:<path>", spec)
	}
	switch kind {
	case "openai":
		return openai.New(openai.Config{BaseURL: os.Getenv("OPENAI_BASE_URL"), APIKey: os.Getenv("OPENAI_API_KEY"), Model: arg})
	case "anthropic":
		return anthropic.New(anthropic.Config{BaseURL: os.Getenv("ANTHROPIC_BASE_URL"), APIKey: os.Getenv("ANTHROPIC_API_KEY"), Model: arg})
	case "scripted":
		return scripted.Load(arg)
	}
	return nil, fmt.Errorf("model %q: unknown provider %q (openai, anthropic or scripted)", spec, kind)
}

// agents runs, on m, the dev agents (dev-<module> agents of every
// project), each project's QA lead and dev lead, and the wake worker that
// resumes them through a router by actor key, until ctx ends. Without a
// model only the wake worker runs: settled actions nobody waits for are
// marked delivered, and a waiting run's message stays for a process that
// runs agents.
//
// A dev agent's actor runs in one process only: the one that holds the
// agent's lease (devagent.Manager.Run). Processes sharing a PostgreSQL
// database divide the agents between them this way, and take over the
// agents of one that died once its leases run out.
type agents struct {
	manager *devagent.Manager
	leads   *leads
	worker  *wake.Worker
	// managed is closed when the manager's Run has returned (its leases
	// released).
	managed chan struct{}
}

// soleOwnerName is the owner of the agent and run leases of a process that
// alone uses its store (SQLite): a fixed name, so that after a crash the
// next start holds at once what its predecessor held, instead of waiting
// for the leases to run out.
const soleOwnerName = "sqlite"

// soleOwner is true when this process alone uses the store (SQLite): runs
// left working by a previous process were interrupted mid-turn.
func startAgents(ctx context.Context, store brabo.Store, svc *pipeline.Service, m model.Model, soleOwner bool, log *slog.Logger) (*agents, error) {
	owner := pipeline.NewID("proc")
	if soleOwner {
		owner = soleOwnerName
	}
	router := &wake.Router{Store: store}
	a := &agents{worker: &wake.Worker{Store: store, Owner: owner, Local: router, Resume: router, Log: log}}
	if m != nil {
		a.manager = &devagent.Manager{Store: store, Proposer: svc, Scoper: svc, Model: m, Log: log, Owner: owner,
			Lease: leaseFromEnv(log), Manages: func(ag *brabo.Agent) bool { return ag.IsModuleDev() }}
		a.leads = newLeads(ctx, store, svc, m, log)
		router.Dev, router.Gate, router.Lead = a.manager, a.leads.gateReceiver, a.leads.leadReceiver
		if soleOwner {
			if n, err := a.manager.BlockInterrupted(ctx); err != nil {
				return nil, fmt.Errorf("blocking interrupted turns: %w", err)
			} else if n > 0 {
				log.Warn("tasks whose agent was stopped mid-turn are blocked (origin infra)", "count", n)
			}
		}
		if err := a.leads.restore(ctx); err != nil {
			return nil, fmt.Errorf("restoring the QA leads' waiting areas: %w", err)
		}
		// The dev agents whose leases this process holds run here; their
		// actors restore their waiting runs. Agents created later are
		// picked up at the next scan.
		a.managed = make(chan struct{})
		go func() {
			defer close(a.managed)
			if err := a.manager.Run(ctx); err != nil {
				log.Error("running the dev agents", "err", err)
			}
		}()
	}
	go a.worker.Run(ctx)
	return a, nil
}

// leaseFromEnv reads BRABO_AGENT_LEASE (a duration, e.g. 15s): how long
// the dev agents of a process that died wait for another process to take
// them over. Zero (unset or unreadable) is devagent.DefaultLease.
func leaseFromEnv(log *slog.Logger) time.Duration {
	v := os.Getenv("BRABO_AGENT_LEASE")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		log.Warn("BRABO_AGENT_LEASE is not a positive duration; using the default", "value", v, "default", devagent.DefaultLease)
		return 0
	}
	return d
}

// wait returns when every actor has stopped (after ctx ended) and the
// dev agents' leases are released.
func (a *agents) wait() {
	if a.manager != nil {
		<-a.managed
		a.manager.Wait()
	}
	if a.leads != nil {
		a.leads.wait()
	}
}
