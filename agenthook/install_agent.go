package agenthook

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
)

// The hook agent in brabo: one per (project, agent CLI, scope), found by
// its name, created once, given a new token by each install and revoked
// by --uninstall.

// installedAgent is the hook agent an install uses, with its new token.
type installedAgent struct {
	id, name, token string
	// created is an agent this install created (a failure revokes it).
	created bool
}

// hookAgent finds the project's hook agent named o.Name and gives it a
// new token, or creates it. Another install creating it at the same
// moment (409) is found on a second look.
func hookAgent(ctx context.Context, o InstallOptions) (*installedAgent, error) {
	mc := newClient(o.Server, o.Token)
	for attempt := 0; attempt < 2; attempt++ {
		existing, err := findAgent(ctx, mc, o.ProjectID, o.Name)
		if err != nil {
			return nil, err
		}
		if existing != nil {
			token, err := mc.RotateAgentToken(ctx, o.ProjectID, existing.ID)
			if err != nil {
				return nil, fmt.Errorf("giving the hook agent %q a new token: %w", o.Name, err)
			}
			fmt.Fprintf(o.Out, "re-used the hook agent %q (%s) of brabo project %s, with a new token (the old one is revoked)\n", o.Name, existing.ID, o.ProjectID)
			return &installedAgent{id: existing.ID, name: o.Name, token: token}, nil
		}
		out, err := mc.CreateAgent(ctx, o.ProjectID, o.Name, brabo.AgentKindHook)
		if client.StatusOf(err) == http.StatusConflict {
			continue // created meanwhile: take it
		}
		if err != nil {
			return nil, fmt.Errorf("creating the hook agent %q in brabo: %w", o.Name, err)
		}
		fmt.Fprintf(o.Out, "created the hook agent %q (%s) in brabo project %s\n", o.Name, out.Agent.ID, o.ProjectID)
		return &installedAgent{id: out.Agent.ID, name: o.Name, token: out.Token, created: true}, nil
	}
	return nil, fmt.Errorf("the hook agent %q of project %s is created and gone again; run brabo install again", o.Name, o.ProjectID)
}

// findAgent returns the project's agent named name, nil when there is
// none; an agent of that name that is no hook agent is an error (its
// token is not the hook's to take).
func findAgent(ctx context.Context, mc *client.Client, project, name string) (*brabo.Agent, error) {
	agents, err := mc.Agents(ctx, project)
	if err != nil {
		return nil, fmt.Errorf("listing the agents of brabo project %s: %w", project, err)
	}
	for _, a := range agents {
		if a.Name != name {
			continue
		}
		if a.Kind != brabo.AgentKindHook {
			return nil, fmt.Errorf("brabo project %s has an agent named %q that is not a hook agent: name the hook agent otherwise (--name)", project, name)
		}
		return a, nil
	}
	return nil, nil
}

// revoke revokes the agent's token in brabo with the maintainer's token;
// an agent known only by its token (a configuration written before the
// id was kept) is found with it first.
func (a *installedAgent) revoke(ctx context.Context, o InstallOptions) error {
	if a.id == "" {
		me, err := newClient(o.Server, a.token).Me(ctx)
		if client.StatusOf(err) == http.StatusUnauthorized {
			return nil // revoked already
		}
		if err != nil {
			return err
		}
		if me.Agent == nil {
			return errors.New("the hook's token is not an agent's")
		}
		a.id = me.Agent.ID
	}
	return newClient(o.Server, o.Token).RevokeAgentToken(ctx, o.ProjectID, a.id)
}

// retireOld revokes the token of the hook agent the previous
// configuration used for the project, when that was another agent (one
// an older brabo install named otherwise): after a re-install the project
// has one hook agent of this agent CLI and scope with a live token.
func retireOld(ctx context.Context, o InstallOptions, old *Config, now *installedAgent) {
	if old == nil {
		return
	}
	for _, p := range old.Projects {
		if p.ID != o.ProjectID || p.AgentID == now.id || p.Token == now.token {
			continue
		}
		prev := &installedAgent{id: p.AgentID, token: p.Token}
		if prev.id == "" {
			me, err := newClient(o.Server, p.Token).Me(ctx)
			if err != nil || me.Agent == nil || me.Agent.ID == now.id {
				return // revoked already (rotated), or the same agent
			}
			prev.id = me.Agent.ID
		}
		if err := prev.revoke(ctx, o); err != nil {
			fmt.Fprintf(o.Out, "the previous hook agent %s keeps its token: revoking it failed: %v\n", prev.id, err)
			return
		}
		fmt.Fprintf(o.Out, "revoked the token of the previous hook agent %s\n", prev.id)
	}
}
