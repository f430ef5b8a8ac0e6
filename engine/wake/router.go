package wake

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/brabo-dev/brabo"
)

// Receiver takes the settled messages of the actors routed to it, and
// blocks their runs whose wait cap ran out: a Local, a Resumer and an
// Expirer in one (devagent.Manager, gate.Lead, devlead.Lead).
type Receiver interface {
	Local
	Resumer
	Expirer
}

// ErrNoRoute is returned by Router.Resume for a run whose actor has no
// receiver in this process (this process runs no agents, or not that
// kind). The worker then leaves the message claimed: it is tried again
// when its lease runs out, by whichever process claims it, and is never
// marked delivered unresumed.
var ErrNoRoute = errors.New("wake: no receiver in this process for the actor")

// Router is the worker's Local and Resumer when one process runs several
// kinds of agents. It dispatches each message by its actor key
// ("agent:<id>", the proposing agent) to the receiver for that agent's
// kind, named by the agent's name in the store:
//
//   - dev-<module> agents (brabo.Agent.IsModuleDev) to Dev;
//   - qa-<role> sub-agents (IsQASubAgent) to Gate(project), the project's
//     QA lead, which waits under its sub-agents' keys;
//   - the dev lead (IsDevLead) to Lead(project).
//
// A key that names no agent, or an agent with no receiver here, is not
// taken by Deliver (false) and is ErrNoRoute for Resume. The worker only
// asks the router about messages a stored run waits for: a message nobody
// waits for is marked delivered before, as without a router.
//
// A dev agent's actor runs in the one process that holds the agent's
// lease (devagent.Manager.Run), and the worker does not claim the
// messages of an agent another process holds (Tx.ClaimOutboxFor). So the
// router sees a dev agent's message either here, where its actor waits
// (Deliver), or for an agent nobody holds at that moment, whose run is
// resumed from the store (Resume); a run left by two processes at once is
// resumed by one only (Tx.LeaveWait).
type Router struct {
	Store brabo.Store
	// Dev receives the dev-<module> agents' messages (nil: none here).
	Dev Receiver
	// Gate returns a project's QA lead (nil func or result: none here;
	// return an untyped nil, not a nil *gate.Lead).
	Gate func(projectID string) Receiver
	// Lead returns a project's dev lead (nil func or result: none here;
	// an untyped nil, as for Gate).
	Lead func(projectID string) Receiver

	agents sync.Map // agent id → *brabo.Agent: an agent's name and project never change
}

// Deliver gives msg to the receiver of actorKey's agent; it reports false
// when there is none here or the receiver does not take it.
func (r *Router) Deliver(actorKey string, msg brabo.OutboxMessage) bool {
	rc, err := r.receiver(context.Background(), actorKey)
	if err != nil || rc == nil {
		return false
	}
	return rc.Deliver(actorKey, msg)
}

// Resume resumes run through the receiver of its actor's kind. Without
// one it returns ErrNoRoute (wrapped), so the message is not lost.
func (r *Router) Resume(ctx context.Context, run *brabo.Run, msg brabo.OutboxMessage) error {
	rc, err := r.receiver(ctx, run.ActorKey)
	if err != nil {
		return fmt.Errorf("wake: routing %s: %w", run.ActorKey, err)
	}
	if rc == nil {
		return fmt.Errorf("%w: %s (run %s)", ErrNoRoute, run.ActorKey, run.ID)
	}
	return rc.Resume(ctx, run, msg)
}

// Expire blocks run, whose wait cap ran out, through the receiver of its
// actor's kind (Sweeper). Without one it returns ErrNoRoute (wrapped): a
// process that runs no agent of that kind leaves it to one that does.
func (r *Router) Expire(ctx context.Context, run *brabo.Run, why string) error {
	rc, err := r.receiver(ctx, run.ActorKey)
	if err != nil {
		return fmt.Errorf("wake: routing %s: %w", run.ActorKey, err)
	}
	if rc == nil {
		return fmt.Errorf("%w: %s (run %s)", ErrNoRoute, run.ActorKey, run.ID)
	}
	return rc.Expire(ctx, run, why)
}

// ResumesOnce reports whether the receiver of run's actor resumes it at
// most once by itself (OnceResumer), so the worker needs no run lease.
func (r *Router) ResumesOnce(run *brabo.Run) bool {
	rc, err := r.receiver(context.Background(), run.ActorKey)
	if err != nil || rc == nil {
		return false
	}
	o, ok := rc.(OnceResumer)
	return ok && o.ResumesOnce(run)
}

// receiver returns the receiver of actorKey's messages in this process,
// nil when there is none (a key that names no agent, or an agent of a
// kind nothing here runs).
func (r *Router) receiver(ctx context.Context, actorKey string) (Receiver, error) {
	ag, err := r.agent(ctx, actorKey)
	if err != nil || ag == nil {
		return nil, err
	}
	var rc Receiver
	switch {
	case ag.IsDevLead():
		if r.Lead != nil {
			rc = r.Lead(ag.ProjectID)
		}
	case ag.IsQASubAgent():
		if r.Gate != nil {
			rc = r.Gate(ag.ProjectID)
		}
	case ag.IsModuleDev():
		rc = r.Dev
	}
	return rc, nil
}

// agent resolves an "agent:<id>" key; nil for a key of another kind or an
// agent the store does not have.
func (r *Router) agent(ctx context.Context, actorKey string) (*brabo.Agent, error) {
	id, ok := brabo.AgentOfKey(actorKey)
	if !ok || id == "" {
		return nil, nil
	}
	if v, ok := r.agents.Load(id); ok {
		return v.(*brabo.Agent), nil
	}
	if r.Store == nil {
		return nil, errors.New("wake: the router needs a store to look agents up")
	}
	var ag *brabo.Agent
	err := r.Store.View(ctx, func(tx brabo.Tx) error {
		var err error
		ag, err = tx.Agent(ctx, id)
		return err
	})
	if errors.Is(err, brabo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("looking up agent %s: %w", id, err)
	}
	r.agents.Store(id, ag)
	return ag, nil
}
