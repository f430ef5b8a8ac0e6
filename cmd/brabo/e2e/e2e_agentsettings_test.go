package e2e

import (
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// TestAgentSettingsEndToEnd: a project's wait cap and its cap on parallel
// dev agents start at the server's default and DefaultMaxParallel; a
// maintainer sets the wait cap and lowers the cap (a developer cannot);
// raising the cap is refused with needs_approval, naming the action that
// raises it; values out of range are refused by name, writing nothing.
func TestAgentSettingsEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		p := e.ok("GET", e.pp(""), e.admin, nil, 200)["project"].(map[string]any)
		if p["waitCapSec"] != float64(0) || p["maxParallel"] != float64(brabo.DefaultMaxParallel) {
			t.Fatalf("a new project: %v", p)
		}
		e.refused("PATCH", e.pp(""), e.developer, map[string]any{"waitCapSec": 3600}, 403, "forbidden_role")
		e.refused("PATCH", e.pp(""), e.maintainer, map[string]any{"waitCapSec": 59}, 400, "invalid_project")
		e.refused("PATCH", e.pp(""), e.maintainer, map[string]any{"waitCapSec": -1}, 400, "invalid_project")
		e.refused("PATCH", e.pp(""), e.maintainer, map[string]any{"waitCapSec": 91 * 24 * 3600}, 400, "invalid_project")
		e.refused("PATCH", e.pp(""), e.maintainer, map[string]any{"maxParallel": 0}, 400, "invalid_project")
		out := e.refused("PATCH", e.pp(""), e.maintainer, map[string]any{"maxParallel": 4, "waitCapSec": 600}, 409, "needs_approval")
		if !strings.Contains(out["message"].(string), "raise_max_parallel") {
			t.Fatalf("the refusal does not name the action: %v", out)
		}
		// Nothing of a refused PATCH was written.
		p = e.ok("GET", e.pp(""), e.admin, nil, 200)["project"].(map[string]any)
		if p["waitCapSec"] != float64(0) || p["maxParallel"] != float64(brabo.DefaultMaxParallel) {
			t.Fatalf("a refused PATCH wrote: %v", p)
		}

		p = e.ok("PATCH", e.pp(""), e.maintainer, map[string]any{"waitCapSec": 1800, "maxParallel": 2}, 200)
		if p["waitCapSec"] != float64(1800) || p["maxParallel"] != float64(2) || p["gitHooks"] != false {
			t.Fatalf("PATCH answered %v", p)
		}
		p = e.ok("PATCH", e.pp(""), e.maintainer, map[string]any{"waitCapSec": 0, "gitHooks": true}, 200)
		if p["waitCapSec"] != float64(0) || p["maxParallel"] != float64(2) || p["gitHooks"] != true {
			t.Fatalf("PATCH answered %v", p)
		}
		var changed []brabo.Event
		for _, ev := range e.events() {
			if ev.Type == brabo.EventProjectAgents {
				changed = append(changed, ev)
			}
		}
		if len(changed) != 2 || !strings.Contains(string(changed[0].Payload), `"maxParallel":2`) ||
			!strings.Contains(string(changed[0].Payload), `"waitCapSec":1800`) || !strings.Contains(string(changed[1].Payload), `"waitCapSec":0`) {
			t.Fatalf("project.agents_changed events: %+v", changed)
		}
	})
}
