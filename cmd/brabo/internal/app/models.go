package app

import (
	"context"
	"fmt"
	"github.com/brabo-dev/brabo/internal/sandbox"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devagent"
	"github.com/brabo-dev/brabo/engine/supervisor"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/model"
	"github.com/brabo-dev/brabo/model/anthropic"
	"github.com/brabo-dev/brabo/model/openai"
	"github.com/brabo-dev/brabo/model/scripted"
	"github.com/brabo-dev/brabo/pipeline"
)

// newExecutor is the executor every subcommand runs approved actions
// with: the built-in runners, and, with a store, the engine's runners
// (supervisor.Runners: the dev lead's plan and assessment, parallelize,
// raise_max_parallel). Its terminal commands are confined (confinement)
// when data names the data folder.
//
// net, when set (brabo serve with the sandbox), is the sandboxed
// commands' way out through the egress proxy (network.go).
func newExecutor(env []string, data string, store brabo.Store, sb *sandbox.Sandbox, net *executor.Network) *executor.Executor {
	repos := ""
	if abs, err := filepath.Abs(data); err == nil && data != "" {
		// git_repo_create's bare repositories: the local provider's remotes.
		repos = filepath.Join(abs, "repos")
	}
	ex := executor.New(executor.Options{Env: env, Confine: confinement(data), ReposRoot: repos, Sandbox: sb, Network: net})
	if store != nil {
		for t, r := range supervisor.Runners(store) {
			ex.Register(t, r)
		}
	}
	return ex
}

// OpenModel builds the model a spec names:
//
//	openai:<model>     OPENAI_BASE_URL (any OpenAI-compatible server) and OPENAI_API_KEY
//	anthropic:<model>  ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)
//	scripted:<path>    a JSON script of assistant turns (tests, the demo)
//
// A provider's key variable must be set: a model without it would start,
// and fail at the agents' first turn.
func OpenModel(spec string) (model.Model, error) {
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok || arg == "" {
		return nil, fmt.Errorf("model %q: want openai:<model>, anthropic:<model> or scripted:<path>", spec)
	}
	if key := modelKeys[kind]; key != "" && os.Getenv(key) == "" {
		return nil, fmt.Errorf("model %q: %s is not set (the provider's API key; for a local OpenAI-compatible server that needs none, set it to any value)", spec, key)
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

// modelKeys is the variable each provider reads its API key from.
var modelKeys = map[string]string{"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}

// startAgents starts the process's agents (engine/supervisor) on m until
// ctx ends: soleOwner is true when this process alone uses the store
// (SQLite), waitCap the inactivity cap of a project that sets none. Call
// Wait on the result once ctx ended.
func startAgents(ctx context.Context, store brabo.Store, svc *pipeline.Service, m model.Model, soleOwner bool, waitCap time.Duration, log *slog.Logger) (*supervisor.Supervisor, error) {
	sup := &supervisor.Supervisor{Store: store, Pipeline: svc, Model: m, SoleOwner: soleOwner, Lease: leaseFromEnv(log),
		WaitCap: waitCap, Log: log}
	if err := sup.Start(ctx); err != nil {
		return nil, err
	}
	return sup, nil
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
