package devagent_test

import (
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

// A report_done refused because no terminal command passed yet is a failing
// tool result: enough of them in a row trip the loop's circuit breaker, and
// the task is blocked with the breaker's origin (code), before the
// iteration cap.
func TestRefusedReportDoneCountsTowardTheCircuitBreaker(t *testing.T) {
	w := newWorld(t)
	rec := newRecorder(t, `{"turns": [
  {"toolCalls": [{"id": "r1", "name": "report_done", "arguments": {"title": "t", "summary": "s"}}]},
  {"toolCalls": [{"id": "r2", "name": "report_done", "arguments": {"title": "t", "summary": "s"}}]},
  {"toolCalls": [{"id": "r3", "name": "report_done", "arguments": {"title": "t", "summary": "s"}}]},
  {"content": "the breaker must have stopped the loop before this turn"}
]}`)
	w.startAgent(t, w.manager(rec, time.Hour))
	task := w.taskIn(t, brabo.TaskBlocked)
	must(t, task.BlockedOrigin == brabo.OriginCode && contains(task.BlockedReason, "circuit breaker") &&
		contains(task.BlockedReason, "no terminal command has exited 0"), "blocked task: %+v", task)
	must(t, rec.Calls() == toolloop.DefaultFailureBreaker, "the model was called %d times; want %d", rec.Calls(), toolloop.DefaultFailureBreaker)
}
