package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/brabo-dev/brabo"
)

// Me is GET /v1/me: the agent a token is (Agent), or the member and the
// member's roles.
type Me struct {
	Agent       *brabo.Agent       `json:"agent"`
	Member      *brabo.Member      `json:"member"`
	Memberships []brabo.Membership `json:"memberships"`
}

// Me says whose the client's token is.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	m := &Me{}
	if err := c.Do(ctx, "GET", "/v1/me", nil, m, 10*time.Second); err != nil {
		return nil, err
	}
	return m, nil
}

// Projects lists the projects the caller is a member of.
func (c *Client) Projects(ctx context.Context) ([]*brabo.Project, error) {
	var ans struct {
		Projects []*brabo.Project `json:"projects"`
	}
	if err := c.Do(ctx, "GET", "/v1/projects", nil, &ans, 0); err != nil {
		return nil, err
	}
	return ans.Projects, nil
}

// NewProject is what creating a project takes.
type NewProject struct {
	Slug string              `json:"slug"`
	Mode brabo.ExecutionMode `json:"mode"`
	Root string              `json:"root,omitempty"`
}

// CreateProject creates a project owned by the caller.
func (c *Client) CreateProject(ctx context.Context, p NewProject) (*brabo.Project, error) {
	out := &brabo.Project{}
	if err := c.Do(ctx, "POST", "/v1/projects", p, out, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// Agents lists the project's agents.
func (c *Client) Agents(ctx context.Context, project string) ([]*brabo.Agent, error) {
	var ans struct {
		Agents []*brabo.Agent `json:"agents"`
	}
	if err := c.Do(ctx, "GET", "/v1/projects/"+url.PathEscape(project)+"/agents", nil, &ans, 15*time.Second); err != nil {
		return nil, err
	}
	return ans.Agents, nil
}

// NewAgent is an agent created, with its token, which the API shows once.
type NewAgent struct {
	Agent *brabo.Agent `json:"agent"`
	Token string       `json:"token"`
	Raw   Raw          `json:"-"`
}

// CreateAgent creates an agent in the project; kind is
// brabo.AgentKindHook for an agent that runs its tools itself, "" for
// one brabo runs.
func (c *Client) CreateAgent(ctx context.Context, project, name, kind string) (*NewAgent, error) {
	body := map[string]string{"name": name}
	if kind != "" {
		body["kind"] = kind
	}
	a := &NewAgent{}
	if err := c.decode(ctx, "POST", "/v1/projects/"+url.PathEscape(project)+"/agents", body, a, &a.Raw); err != nil {
		return nil, err
	}
	if a.Agent == nil {
		return nil, fmt.Errorf("POST …/agents: the answer holds no agent")
	}
	return a, nil
}

// RotateAgentToken gives the agent a new token (the old one stops
// working) and returns it.
func (c *Client) RotateAgentToken(ctx context.Context, project, agentID string) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	if err := c.Do(ctx, "POST", agentTokenPath(project, agentID), nil, &out, 15*time.Second); err != nil {
		return "", err
	}
	return out.Token, nil
}

// RevokeAgentToken revokes the agent's token.
func (c *Client) RevokeAgentToken(ctx context.Context, project, agentID string) error {
	return c.Do(ctx, "DELETE", agentTokenPath(project, agentID), nil, nil, 15*time.Second)
}

func agentTokenPath(project, agentID string) string {
	return "/v1/projects/" + url.PathEscape(project) + "/agents/" + url.PathEscape(agentID) + "/token"
}

// EventList is a page of a project's event log, oldest first.
type EventList struct {
	Events []brabo.Event `json:"events"`
	Raw    Raw           `json:"-"`
}

// Events is the project's event log, up to limit events.
func (c *Client) Events(ctx context.Context, project string, limit int) (*EventList, error) {
	l := &EventList{}
	path := fmt.Sprintf("/v1/projects/%s/events?limit=%d", url.PathEscape(project), limit)
	if err := c.decode(ctx, "GET", path, nil, l, &l.Raw); err != nil {
		return nil, err
	}
	return l, nil
}

// Permissions is a permissions.json as brabo holds it: its hash and its
// content.
type Permissions struct {
	Hash    string `json:"hash"`
	Content string `json:"content"`
}

// EffectivePermissions is the permissions.json brabo decides the
// project's actions with now (the trusted version, or the file on disk
// when it only tightens it).
func (c *Client) EffectivePermissions(ctx context.Context, project string) (*Permissions, error) {
	p := &Permissions{}
	if err := c.Do(ctx, "GET", "/v1/projects/"+url.PathEscape(project)+"/permissions/effective", nil, p, 10*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}

// Trust is the trust state of a project's permissions.json. Change is
// policy.Change as JSON: this package imports no policy.
type Trust struct {
	TrustedHash    string          `json:"trustedHash"`
	DiskHash       string          `json:"diskHash"`
	Status         string          `json:"status"`
	Change         json.RawMessage `json:"change"`
	Unreadable     string          `json:"unreadable"`
	DecidedWith    string          `json:"decidedWith"`
	TrustedContent string          `json:"trustedContent"`
}

// Trust is GET …/permissions/trust.
func (c *Client) Trust(ctx context.Context, project string) (*Trust, error) {
	return c.trust(ctx, "GET", project, "trust", nil)
}

// AcceptPermissions makes the file on disk whose hash is diskHash the
// trusted version (a maintainer's); a file that changed since is refused
// (permissions_changed).
func (c *Client) AcceptPermissions(ctx context.Context, project, diskHash string) (*Trust, error) {
	return c.trust(ctx, "POST", project, "accept", map[string]string{"hash": diskHash})
}

// RestorePermissions writes the trusted version back over the file on
// disk; diskHash, when not "", is the file the caller saw.
func (c *Client) RestorePermissions(ctx context.Context, project, diskHash string) (*Trust, error) {
	return c.trust(ctx, "POST", project, "restore", map[string]string{"hash": diskHash})
}

func (c *Client) trust(ctx context.Context, method, project, verb string, body any) (*Trust, error) {
	t := &Trust{}
	if err := c.Do(ctx, method, "/v1/projects/"+url.PathEscape(project)+"/permissions/"+verb, body, t, 0); err != nil {
		return nil, err
	}
	return t, nil
}

// Activation is the answer to activating a project's execution.
type Activation struct {
	Patterns        []string `json:"patterns"`
	Agents          []string `json:"agents"`
	Kept            []string `json:"kept"`
	PermissionsHash string   `json:"permissionsHash"`
	Changed         bool     `json:"changed"`
}

// Activate activates the project's execution (a maintainer's): the seeded
// allow list and git_commit: auto_approve for its dev agents.
func (c *Client) Activate(ctx context.Context, project string) (*Activation, error) {
	a := &Activation{}
	if err := c.Do(ctx, "POST", "/v1/projects/"+url.PathEscape(project)+"/activate", map[string]string{}, a, 0); err != nil {
		return nil, err
	}
	return a, nil
}
