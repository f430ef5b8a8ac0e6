package devagent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

// A report_done refused because no terminal command passed yet is a failing
// tool result: enough of them in a row trip the loop's circuit breaker, and
// the task is blocked with the breaker's origin (code), before the
// iteration cap. A passing command between them resets the streak.
func TestRefusedReportDoneCountsTowardTheCircuitBreaker(t *testing.T) {
	report := func(id string) string {
		return fmt.Sprintf(`{"toolCalls": [{"id": %q, "name": "report_done", "arguments": {"title": "t", "summary": "s"}}]}`, id)
	}
	refusals := func(n int) []string {
		var turns []string
		for i := range n {
			turns = append(turns, report(fmt.Sprintf("r%d", i+1)))
		}
		return turns
	}
	for _, tc := range []struct {
		name  string
		turns []string
		// calls is how many times the model is called before the outcome.
		calls   int
		blocked bool
	}{
		{"breaker-many refusals halt the loop", refusals(toolloop.DefaultFailureBreaker), toolloop.DefaultFailureBreaker, true},
		{"one fewer, then a passing test, then a report that asks for the PR",
			append(refusals(toolloop.DefaultFailureBreaker-1),
				`{"toolCalls": [{"id": "t1", "name": "terminal", "arguments": {"command": "echo ok"}}]}`, report("ok")),
			toolloop.DefaultFailureBreaker + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			script := `{"turns": [` + strings.Join(append(tc.turns, `{"content": "the loop must have stopped before this turn"}`), ",") + `]}`
			rec := newRecorder(t, script)
			w.startAgent(t, w.manager(rec, time.Hour))
			if tc.blocked {
				task := w.taskIn(t, brabo.TaskBlocked)
				must(t, task.BlockedOrigin == brabo.OriginCode && contains(task.BlockedReason, "circuit breaker") &&
					contains(task.BlockedReason, "no terminal command has exited 0"), "blocked task: %+v", task)
			} else {
				waitFor(t, "the run to await its pull request", func() bool {
					r := w.agentRun(t)
					must(t, r == nil || r.State != brabo.RunBlocked, "the run blocked: %+v", w.getTask(t))
					return r != nil && r.State == brabo.RunAwaitingPR
				})
			}
			must(t, rec.Calls() == tc.calls, "the model was called %d times; want %d", rec.Calls(), tc.calls)
		})
	}
}
