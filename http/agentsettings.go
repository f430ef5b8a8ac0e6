package http

import (
	"github.com/brabo-dev/brabo"
)

// agentSettings are the project's agent settings a PATCH of the project
// may change (docs/engine.md): its inactivity cap (waitCapSec, 0 for the
// server's default, brabo serve --wait-cap) and its cap on dev agents
// working at once (maxParallel). The cap is lowered here; raising it is
// spending more, a decision taken through the pipeline
// (raise_max_parallel, capped: a human approves it), so a higher value is
// refused with needs_approval (pipeline's UpdateProject).
type agentSettings struct {
	WaitCapSec  *int `json:"waitCapSec"`
	MaxParallel *int `json:"maxParallel"`
}

func (a agentSettings) empty() bool { return a.WaitCapSec == nil && a.MaxParallel == nil }

// check refuses values out of range, before anything is written.
func (a agentSettings) check() error {
	if v := a.WaitCapSec; v != nil && *v != 0 && (*v < brabo.MinWaitCapSec || *v > brabo.MaxWaitCapSec) {
		return badProject("waitCapSec %d: want 0 (the server's default) or %d to %d seconds", *v, brabo.MinWaitCapSec, brabo.MaxWaitCapSec)
	}
	if v := a.MaxParallel; v != nil && (*v < 1 || *v > brabo.MaxMaxParallel) {
		return badProject("maxParallel %d: want 1 to %d", *v, brabo.MaxMaxParallel)
	}
	return nil
}
