package devlead_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/devlead"
	"github.com/brabo-dev/brabo/engine/enginetest"
	"github.com/brabo-dev/brabo/engine/wake"
	"github.com/brabo-dev/brabo/model"
)

// A dev-lead turn waiting longer than the wait cap is stopped with origin
// policy, naming the action nobody decided; a late decision resumes
// nothing, and the next message goes on from the turns before it.
func TestATurnWaitingPastTheWaitCapIsStoppedWithOriginPolicy(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	c := enginetest.NewClock()
	m := newModel(t, `{"turns": [
  {"content": "Here is my plan.", "toolCalls": [{"id": "call_plan", "name": "propose_execution_plan",
    "arguments": {"plan": "one agent on api", "agents": {"api": 1}}}]},
  {"content": "never: the stopped turn is left out"}
]}`)
	l := w.lead(m)
	l.Now, l.WaitCap = c.Now, 2*time.Hour // the server's default: the project sets none
	id, r := w.postSuspends(t, l)
	if !r.Deadline.Equal(r.UpdatedAt.Add(2 * time.Hour)) {
		t.Fatalf("the turn waits until %v, suspended at %v; want two hours after", r.Deadline, r.UpdatedAt)
	}
	sweep := &wake.Sweeper{Store: w.store, Expire: l, Now: c.Now, Log: quiet}
	c.Advance(119 * time.Minute)
	if n, err := sweep.Once(ctx); err != nil || n != 0 {
		t.Fatalf("the sweep before the deadline: %d, %v", n, err)
	}
	c.Advance(2 * time.Minute)
	if n, err := sweep.Once(ctx); err != nil || n != 1 {
		t.Fatalf("the sweep past the deadline: %d, %v", n, err)
	}
	got := w.run(t, r.ID)
	if got.State != brabo.RunBlocked || got.AwaitingActionID != "" || !got.Deadline.IsZero() {
		t.Fatalf("the run after the cap: %+v", got)
	}
	evs := w.events(t, devlead.EventAgentStatus)
	if len(evs) != 2 {
		t.Fatalf("%d agent.status events; want 2", len(evs))
	}
	var p map[string]string
	json.Unmarshal(evs[1].Payload, &p)
	if p["status"] != devlead.StatusBlocked || p["origin"] != string(brabo.OriginPolicy) || p["actionId"] != id ||
		!strings.Contains(p["reason"], "nobody decided on action "+id+" (propose_execution_plan)") ||
		!strings.Contains(p["reason"], "2h0m0s") {
		t.Fatalf("the agent.status event: %s", evs[1].Payload)
	}

	// A late decision executes, and resumes nothing: the model is not
	// called and the conversation is as it was.
	w.approve(t, id)
	drain(t, w.worker(l), l)
	if m.calls() != 1 {
		t.Fatalf("the model was called %d times after the cap", m.calls())
	}
	// The next message goes on without the stopped turn, whose call has no
	// result: the model sees the new message alone (the scripted model
	// answers by the number of assistant messages, so it plans again).
	turn, err := l.Post(ctx, "Anyone there?")
	if err != nil || turn.Awaiting == "" || turn.Awaiting == id || m.calls() != 2 {
		t.Fatalf("the next turn: %+v, %v (%d model calls)", turn, err, m.calls())
	}
	msgs := w.conversation(t, l)
	if len(msgs) != 2 || msgs[0].Role != model.User || msgs[0].Content != "Anyone there?" {
		t.Fatalf("the conversation kept the stopped turn: %+v", msgs)
	}
}
