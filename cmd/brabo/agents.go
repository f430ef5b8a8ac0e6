package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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
// (executing one records the decision).
func newExecutor(env []string) *executor.Executor {
	ex := executor.New(executor.Options{Env: env})
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
type agents struct {
	manager *devagent.Manager
	leads   *leads
	worker  *wake.Worker
}

// soleOwner is true when this process alone uses the store (SQLite): runs
// left working by a previous process were interrupted mid-turn.
func startAgents(ctx context.Context, store brabo.Store, svc *pipeline.Service, m model.Model, soleOwner bool, log *slog.Logger) (*agents, error) {
	router := &wake.Router{Store: store}
	a := &agents{worker: &wake.Worker{Store: store, Owner: pipeline.NewID("proc"), Local: router, Resume: router, Log: log}}
	if m != nil {
		a.manager = &devagent.Manager{Store: store, Proposer: svc, Scoper: svc, Model: m, Log: log,
			Manages: func(ag *brabo.Agent) bool { return ag.IsModuleDev() }}
		a.leads = newLeads(ctx, store, svc, m, log)
		router.Dev, router.Gate, router.Lead = a.manager, a.leads.gateReceiver, a.leads.leadReceiver
		if soleOwner {
			if n, err := a.manager.BlockInterrupted(ctx); err != nil {
				return nil, fmt.Errorf("blocking interrupted turns: %w", err)
			} else if n > 0 {
				log.Warn("tasks whose agent was stopped mid-turn are blocked (origin infra)", "count", n)
			}
		}
		if err := a.manager.Restore(ctx); err != nil {
			return nil, fmt.Errorf("restoring waiting agents: %w", err)
		}
		if err := a.leads.restore(ctx); err != nil {
			return nil, fmt.Errorf("restoring the QA leads' waiting areas: %w", err)
		}
		if err := a.startAll(ctx, store); err != nil {
			return nil, err
		}
		// Agents created later start within a few seconds.
		go func() {
			t := time.NewTicker(agentScan)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if err := a.startAll(ctx, store); err != nil && ctx.Err() == nil {
						log.Error("starting dev agents", "err", err)
					}
				}
			}
		}()
	}
	go a.worker.Run(ctx)
	return a, nil
}

// agentScan is how often serve looks for new dev agents to start.
const agentScan = 2 * time.Second

// startAll starts an actor for every dev-<module> agent of every project.
func (a *agents) startAll(ctx context.Context, store brabo.Store) error {
	var list []*brabo.Agent
	err := store.View(ctx, func(tx brabo.Tx) error {
		ps, err := tx.Projects(ctx)
		if err != nil {
			return err
		}
		for _, p := range ps {
			ags, err := tx.Agents(ctx, p.ID)
			if err != nil {
				return err
			}
			for _, ag := range ags {
				if ag.IsModuleDev() {
					list = append(list, ag)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, ag := range list {
		if err := a.manager.Start(ctx, ag); err != nil {
			return err
		}
	}
	return nil
}

// wait returns when every actor has stopped (after ctx ended).
func (a *agents) wait() {
	if a.manager != nil {
		a.manager.Wait()
	}
	if a.leads != nil {
		a.leads.wait()
	}
}
