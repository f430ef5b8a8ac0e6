package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/brabo-dev/brabo"
)

// The infra agent's handoff (docs/actions.md): a maintainer names one
// agent of the project its infra agent; that agent proposes
// container_handoff (maintainer, never auto-approved: policy caps it);
// when a maintainer approves it, brabo records agent_autonomy
// container_start: auto_approve for that agent alone (autonomy.changed)
// and proposes the start as that agent, which then runs without a second
// click. Every other rule still applies to the start: the maintainer
// minimum (Decide's IAM, on the agent's principal), the refusals of
// refuseContainer, the resources' floor and ceiling (startResources).

// SetInfraAgent names agentID (an agent of the project; "" for none) the
// project's infra agent, recording project.infra_agent_changed with the
// member as actor, in one transaction. A maintainer's decision: the
// caller checks the role.
func (s *Service) SetInfraAgent(ctx context.Context, projectID, memberID, agentID string) error {
	return s.Store.Update(ctx, func(tx brabo.Tx) error {
		if agentID != "" {
			a, err := tx.Agent(ctx, agentID)
			if errors.Is(err, brabo.ErrNotFound) || (err == nil && a.ProjectID != projectID) {
				return invalid("agent %q is not an agent of this project", agentID)
			}
			if err != nil {
				return err
			}
		}
		previous, err := tx.InfraAgent(ctx, projectID)
		if err != nil {
			return err
		}
		if previous == agentID {
			return nil
		}
		if err := tx.SetInfraAgent(ctx, projectID, agentID); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: projectID, Type: brabo.EventInfraAgentChanged, ActorID: memberID,
			Payload: mustJSON(map[string]any{"agentId": agentID, "previous": previous}), CreatedAt: s.now()})
	})
}

// refuseContainer is the seed's refusals of a container_start and of a
// container_handoff, at the proposal and before anything is queued: a
// project with no container of brabo's (local mode; a runner project's
// start goes to its runner), a container registered running already, no
// engine configured (409); a handoff from anyone but the project's infra
// agent (403).
func (s *Service) refuseContainer(ctx context.Context, req ProposeRequest, p *brabo.Project) error {
	if req.Type == brabo.ContainerHandoff {
		if p.Mode != brabo.ModeContainer {
			return brabo.Errorf(brabo.CodeNotContainerProject, "project %s runs in %s mode: a handoff hands over a container project's container", p.Slug, p.Mode)
		}
		var infra string
		if err := s.Store.View(ctx, func(tx brabo.Tx) error {
			var err error
			infra, err = tx.InfraAgent(ctx, p.ID)
			return err
		}); err != nil {
			return err
		}
		if req.Actor.Agent == nil || infra == "" || req.Actor.Agent.ID != infra {
			return brabo.Errorf(brabo.CodeNotInfraAgent, "only the infra agent of project %s proposes a container_handoff (a maintainer names it: PUT /v1/projects/%s/infra-agent)", p.Slug, p.Slug)
		}
	}
	return s.refuseContainerStart(req.Type, p)
}

// runHandoff executes an approved container_handoff: the seed, then the
// start as the infra agent.
func (s *Service) runHandoff(ctx context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	a, p := req.Action, req.Project
	fail := func(format string, args ...any) (*brabo.Result, error) {
		return &brabo.Result{ExitCode: 1, Error: "container_handoff: " + fmt.Sprintf(format, args...)}, nil
	}
	if a.ActorKind != "agent" {
		return fail("it was not proposed by an agent")
	}
	decider := brabo.SystemActor
	if req.Credential != nil {
		decider = req.Credential.ID
	}
	var agent *brabo.Agent
	notInfra := errors.New("not the infra agent")
	err := s.Store.Update(ctx, func(tx brabo.Tx) error {
		infra, err := tx.InfraAgent(ctx, p.ID)
		if err != nil {
			return err
		}
		if infra != a.ActorID {
			return notInfra
		}
		if agent, err = tx.Agent(ctx, a.ActorID); err != nil {
			return err
		}
		_, err = s.putAutonomy(ctx, tx, p.ID, decider, brabo.AgentAutonomy{AgentID: agent.ID, ActionType: brabo.ContainerStart,
			Mode: brabo.AutoApprove}, "container_handoff", a.ID)
		return err
	})
	if errors.Is(err, notInfra) {
		return fail("its proposer is no longer the project's infra agent; nothing was recorded")
	}
	if err != nil {
		return nil, err
	}
	seeded := fmt.Sprintf("container_start: auto_approve recorded for %s", agent.Name)
	start, err := s.Propose(ctx, ProposeRequest{ProjectID: p.ID, Actor: Actor{Agent: agent}, Type: brabo.ContainerStart,
		Payload: brabo.Payload{Image: a.Payload.Image, CPUs: a.Payload.CPUs, MemoryMB: a.Payload.MemoryMB, Args: a.Payload.Args}})
	if err != nil {
		return fail("%s, but the start was refused: %v", seeded, err)
	}
	res := &brabo.Result{Output: fmt.Sprintf("handoff accepted: %s; container_start %s proposed as %s: %s", seeded, start.ID, agent.Name, start.Status),
		Detail: map[string]string{"agent": agent.ID, "start": start.ID, "startStatus": string(start.Status)}}
	if start.Status != brabo.StatusExecuted {
		why := start.Reason
		if start.Result != nil && start.Result.Error != "" {
			why = start.Result.Error
		}
		res.ExitCode, res.Error = 1, fmt.Sprintf("container_handoff: %s, but the start %s: %s", seeded, start.Status, why)
	}
	return res, nil
}
