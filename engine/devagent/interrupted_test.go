package devagent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// A run a stopped process left working mid-turn blocks its task with
// origin infra at the next start, instead of leaving it in progress.
func TestAnInterruptedTurnBlocksItsTask(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if err := w.store.Update(ctx, func(tx brabo.Tx) error {
		ok, err := tx.ClaimTask(ctx, w.task.ID, w.agent.ID, time.Now())
		must(t, ok, "the task was not claimable")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	w.saveRun(t, &brabo.Run{ID: "run_cut", ProjectID: w.prj.ID, ActorKey: "agent:" + w.agent.ID, TaskID: w.task.ID,
		State: brabo.RunWorking, UpdatedAt: time.Now()})
	mgr := w.manager(newRecorder(t, adrScript), time.Hour)
	n, err := mgr.BlockInterrupted(ctx)
	must(t, err == nil && n == 1, "BlockInterrupted = %d, %v", n, err)
	task := w.getTask(t)
	must(t, task.Status == brabo.TaskBlocked && task.BlockedOrigin == brabo.OriginInfra && strings.Contains(task.BlockedReason, "run_cut"),
		"the task after an interrupted turn: %+v", task)
	evs := w.events(t, "backlog.task_blocked")
	must(t, len(evs) == 1 && strings.Contains(string(evs[0].Payload), `"origin":"infra"`), "blocked events: %v", evs)
	n, err = mgr.BlockInterrupted(ctx)
	must(t, err == nil && n == 0, "a second pass blocked %d more (%v)", n, err)
}
