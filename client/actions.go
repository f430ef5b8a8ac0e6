package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/brabo-dev/brabo"
)

// Proposal is what an agent proposes (POST /v1/projects/{p}/actions).
type Proposal struct {
	Type      brabo.ActionType `json:"type"`
	Payload   brabo.Payload    `json:"payload"`
	Execution *brabo.Execution `json:"execution,omitempty"`
}

// Propose proposes an action in the project and returns it as brabo
// decided it at once (pending, auto-approved, denied).
func (c *Client) Propose(ctx context.Context, project string, p Proposal) (*brabo.ProposedAction, error) {
	a := &brabo.ProposedAction{}
	if err := c.Do(ctx, "POST", "/v1/projects/"+url.PathEscape(project)+"/actions", p, a, 15*time.Second); err != nil {
		return nil, err
	}
	return a, nil
}

// Raw is the API's answer as it came, for a caller that prints it
// (--json).
type Raw = json.RawMessage

// decode sends a request and decodes the answer into out, keeping it
// as it came in raw.
func (c *Client) decode(ctx context.Context, method, path string, body, out any, raw *Raw) error {
	if err := c.Do(ctx, method, path, body, raw, 0); err != nil {
		return err
	}
	if err := json.Unmarshal(*raw, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not what the API gives: %w", method, path, err)
	}
	return nil
}

// Action is GET /v1/actions/{id}: the action with its card's facts.
func (c *Client) Action(ctx context.Context, id string) (*brabo.ProposedAction, Raw, error) {
	var raw Raw
	a := &brabo.ProposedAction{}
	if err := c.decode(ctx, "GET", "/v1/actions/"+url.PathEscape(id), nil, a, &raw); err != nil {
		return nil, nil, err
	}
	return a, raw, nil
}

// ActionList is a page of actions and how many there are in all.
type ActionList struct {
	Actions []*brabo.ProposedAction `json:"actions"`
	Total   int                     `json:"total"`
	Raw     Raw                     `json:"-"`
}

// Queue is the pending actions of every project the caller belongs to
// (GET /v1/queue), up to limit.
func (c *Client) Queue(ctx context.Context, limit int) (*ActionList, error) {
	return c.actions(ctx, fmt.Sprintf("/v1/queue?limit=%d", limit))
}

// ProjectActions is the project's actions of status (all when ""), up
// to limit.
func (c *Client) ProjectActions(ctx context.Context, project string, status brabo.ActionStatus, limit int) (*ActionList, error) {
	q := url.Values{"limit": {fmt.Sprint(limit)}}
	if status != "" {
		q.Set("status", string(status))
	}
	return c.actions(ctx, "/v1/projects/"+url.PathEscape(project)+"/actions?"+q.Encode())
}

func (c *Client) actions(ctx context.Context, path string) (*ActionList, error) {
	l := &ActionList{}
	if err := c.decode(ctx, "GET", path, nil, l, &l.Raw); err != nil {
		return nil, err
	}
	return l, nil
}

// Decided is the answer to a decision: the action as it is now, what the
// decision did, and the patterns an always-allow added.
type Decided struct {
	Action   *brabo.ProposedAction `json:"action"`
	Outcome  string                `json:"outcome"`
	Patterns []string              `json:"patterns"`
	Raw      Raw                   `json:"-"`
}

// Approve approves a pending action as the caller, at revision: the
// revision of the card the caller saw (ProposedAction.Revision). One that
// is not the card's now, or "", is refused 409 card_changed and approves
// nothing. always also allows what it is from now on (the card's Always
// allow, approve-always).
func (c *Client) Approve(ctx context.Context, id, revision string, always bool) (*Decided, error) {
	path := "/v1/actions/" + url.PathEscape(id) + "/approve"
	if always {
		path += "-always"
	}
	return c.decided(ctx, path, map[string]string{"revision": revision})
}

// Deny denies a pending action; the agent reads reason.
func (c *Client) Deny(ctx context.Context, id, reason string) (*Decided, error) {
	return c.decided(ctx, "/v1/actions/"+url.PathEscape(id)+"/deny", map[string]string{"reason": reason})
}

func (c *Client) decided(ctx context.Context, path string, body any) (*Decided, error) {
	d := &Decided{}
	if err := c.decode(ctx, "POST", path, body, d, &d.Raw); err != nil {
		return nil, err
	}
	if d.Action == nil {
		return nil, fmt.Errorf("POST %s: the answer holds no action", path)
	}
	return d, nil
}

// Abandon tells brabo the agent no longer waits for the pending action,
// with why; the answer is the action as it is now. An action decided
// meanwhile is refused (409): its decision stands.
func (c *Client) Abandon(ctx context.Context, id, why string) (*brabo.ProposedAction, error) {
	a := &brabo.ProposedAction{}
	if err := c.Do(ctx, "POST", "/v1/actions/"+url.PathEscape(id)+"/abandon", map[string]string{"reason": why}, a, 3*time.Second); err != nil {
		return nil, err
	}
	return a, nil
}

// Report sends what happened to an action the agent ran itself.
// exitCode nil is an exit code the agent did not say.
func (c *Client) Report(ctx context.Context, id string, exitCode *int, output, errText string) error {
	body := map[string]any{"output": output, "error": errText}
	if exitCode != nil {
		body["exitCode"] = *exitCode
	}
	return c.Do(ctx, "POST", "/v1/actions/"+url.PathEscape(id)+"/result", body, nil, 15*time.Second)
}

// ReportNotRun says that the agent refused an action itself after brabo
// approved it (its own deny rule, its command policy, another hook): the
// action becomes not_run, with the agent's reason.
func (c *Client) ReportNotRun(ctx context.Context, id, reason string) error {
	body := map[string]any{"notRun": true, "error": reason}
	return c.Do(ctx, "POST", "/v1/actions/"+url.PathEscape(id)+"/result", body, nil, 15*time.Second)
}
