package http

import (
	"context"
	"net/http"
	"time"

	"github.com/brabo-dev/brabo"
)

// agentSettings are the project's agent settings a PATCH of the project
// may change (docs/engine.md): its inactivity cap (waitCapSec, 0 for the
// server's default, brabo serve --wait-cap) and its cap on dev agents
// working at once (maxParallel). The cap is lowered here; raising it is
// spending more, a decision taken through the pipeline
// (raise_max_parallel, capped: a human approves it), so a higher value is
// refused with needs_approval.
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

// apply writes the settings to cur inside tx, with a
// project.agents_changed event by the member; a raise of the cap is
// refused, writing nothing.
func (a agentSettings) apply(ctx context.Context, tx brabo.Tx, cur *brabo.Project, memberID string) error {
	waitCap, maxParallel := cur.WaitCapSec, cur.MaxParallel
	if a.WaitCapSec != nil {
		waitCap = *a.WaitCapSec
	}
	if a.MaxParallel != nil {
		if *a.MaxParallel > cur.MaxParallel {
			return errorf(http.StatusConflict, brabo.CodeNeedsApproval,
				"maxParallel %d is above the project's cap of %d: raising it is spending more, which a human decides; "+
					"propose raise_max_parallel {\"maxParallel\": %d} (POST /v1/projects/%s/actions)", *a.MaxParallel, cur.MaxParallel, *a.MaxParallel, cur.ID)
		}
		maxParallel = *a.MaxParallel
	}
	if err := tx.SetProjectAgents(ctx, cur.ID, maxParallel, waitCap); err != nil {
		return err
	}
	cur.WaitCapSec, cur.MaxParallel = waitCap, maxParallel
	return tx.AppendEvent(ctx, &brabo.Event{ProjectID: cur.ID, Type: brabo.EventProjectAgents, ActorID: memberID,
		Payload: jsonLine(map[string]any{"waitCapSec": waitCap, "maxParallel": maxParallel}), CreatedAt: time.Now().UTC()})
}
