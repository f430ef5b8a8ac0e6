package devagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/brabo-dev/brabo"
)

// claim takes the oldest todo task of the agent's project for it and
// creates its run, in one transaction, while the project has fewer tasks
// in progress than its cap on parallel dev agents (Project.MaxParallel):
// at the cap the agent stays idle, and looks again at its next poll. The
// claim is a conditional update within the cap (ClaimTaskWithin), so two
// actors racing for a task cannot both have it, nor pass the cap
// together, on any store.
func (m *Manager) claim(ctx context.Context, agent *brabo.Agent) (*state, error) {
	var st *state
	err := m.Store.Update(ctx, func(tx brabo.Tx) error {
		tasks, err := tx.Tasks(ctx, agent.ProjectID)
		if err != nil {
			return err
		}
		working, todo := 0, 0
		for _, t := range tasks {
			switch t.Status {
			case brabo.TaskInProgress:
				working++
			case brabo.TaskTodo:
				todo++
			}
		}
		if todo == 0 {
			return nil
		}
		p, err := tx.Project(ctx, agent.ProjectID)
		if err != nil {
			return err
		}
		if working >= p.MaxParallel {
			return nil // at the cap: nothing to claim until a task leaves in_progress
		}
		for _, t := range tasks {
			if t.Status != brabo.TaskTodo {
				continue
			}
			if err := m.fence(ctx, tx, agent.ID); err != nil {
				return err
			}
			now := m.now()
			claimed, err := tx.ClaimTaskWithin(ctx, t.ID, agent.ID, now)
			if err != nil {
				return err
			}
			if !claimed {
				continue // another agent took it first (or the cap was reached meanwhile)
			}
			task := t
			task.Status, task.AgentID, task.UpdatedAt = brabo.TaskInProgress, agent.ID, now
			project, err := tx.Project(ctx, agent.ProjectID)
			if err != nil {
				return err
			}
			run := &brabo.Run{ID: brabo.NewID("run"), ProjectID: project.ID, ActorKey: brabo.AgentKey(agent.ID),
				TaskID: task.ID, State: brabo.RunWorking, UpdatedAt: now}
			if err := tx.SaveRun(ctx, run); err != nil {
				return err
			}
			if err := tx.AppendEvent(ctx, &brabo.Event{ProjectID: project.ID, Type: brabo.EventTaskStatusChanged, ActorID: agent.ID,
				CreatedAt: now, Payload: mustJSON(map[string]any{"taskId": task.ID, "status": brabo.TaskInProgress})}); err != nil {
				return err
			}
			st = &state{agent: agent, task: task, project: project, run: run}
			return nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, nil
	}
	var rootErr error
	st.loop, st.hist, st.wt, rootErr = m.buildLoop(agent, st.project, st.task)
	err = rootErr
	if err == nil {
		err = st.wt.hold(ctx)
	}
	if err != nil {
		// The claim stands (the task is the agent's), but there is nowhere
		// to work it: say so on the task rather than retry forever.
		why := fmt.Sprintf("the agent's worktree %s on branch %s could not be made: %v", st.wt.rel, st.wt.branch, err)
		if berr := m.block(ctx, st, why, brabo.OriginInfra, nil); berr != nil {
			return nil, errors.Join(err, berr)
		}
		return nil, nil
	}
	return st, nil
}
