package devagent_test

import (
	"context"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
)

// A dev agent claims a task only while its project has fewer tasks in
// progress than its cap on parallel dev agents: at the cap the next agent
// stays idle, and claims once a task leaves in_progress.
func TestADevAgentClaimsOnlyWithinTheProjectsCap(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.SetProjectAgents(ctx, w.prj.ID, 1, 0) }); err != nil {
		t.Fatal(err)
	}
	second := &brabo.Task{ID: brabo.NewID("tsk"), ProjectID: w.prj.ID, Title: "Second", Status: brabo.TaskTodo,
		CreatedAt: time.Now().UTC().Add(time.Second)}
	other := w.newAgent(t, "dev-web", true)
	if err := w.store.Update(ctx, func(tx brabo.Tx) error { return tx.CreateTask(ctx, second) }); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, adrScript)
	w.startAgent(t, w.manager(rec, time.Hour))
	r := w.awaiting(t) // the first agent holds the first task, waiting

	recB := newRecorder(t, `{"turns": [{"content": "Second done."}]}`)
	mB := w.manager(recB, time.Hour)
	actx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() { cancel(); mB.Wait() })
	if err := mB.Start(actx, other); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // ten idle polls of the second agent
	got := taskByID(t, w, second.ID)
	must(t, got.Status == brabo.TaskTodo && recB.Calls() == 0, "the second agent claimed past the cap: %+v (%d model calls)", got, recB.Calls())

	// The first task ends (the model finishes it): the slot is free, and
	// one of the two idle agents claims the second task.
	w.approve(t, r.AwaitingActionID)
	w.taskIn(t, brabo.TaskDone)
	waitFor(t, "the second task to be claimed", func() bool { return taskByID(t, w, second.ID).Status != brabo.TaskTodo })
}

func taskByID(t *testing.T, w *world, id string) *brabo.Task {
	t.Helper()
	ctx := context.Background()
	var task *brabo.Task
	if err := w.store.View(ctx, func(tx brabo.Tx) error {
		var err error
		task, err = tx.Task(ctx, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return task
}
