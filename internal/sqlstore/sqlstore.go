// Package sqlstore is the SQL both stores share: one implementation of
// brabo.Tx over a small query interface, so that SQLite and PostgreSQL
// differ only in their driver, their migrations and a few dialect hooks.
//
// It imports no driver; store/sqlite and store/postgres adapt theirs.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/brabo-dev/brabo"
)

// Querier runs statements inside one transaction. Statements use $1, $2, …
// placeholders.
type Querier interface {
	Exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// Row is one result row.
type Row interface{ Scan(dest ...any) error }

// Rows is a result set.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Dialect holds what differs between the databases.
type Dialect struct {
	// SkipLocked is appended to the outbox claim's inner SELECT.
	SkipLocked string
	// IsUnique reports a unique-constraint violation.
	IsUnique func(error) bool
	// IsNoRows reports a QueryRow that found nothing.
	IsNoRows func(error) bool
	// SerialWriter is true when one writer at a time holds the database
	// (SQLite): numbers can then be read, not counted.
	SerialWriter bool
	// JSONAgg is the aggregate that gathers values into a JSON array
	// (json_group_array, json_agg); it takes an ORDER BY.
	JSONAgg string
	// JSONTextRows is a FROM item that turns the JSON array of strings in
	// the parameter param into rows of one column, value (json_each,
	// jsonb_array_elements_text).
	JSONTextRows func(param string) string
	// Notify, if set, is called inside the transaction for each project
	// that got events or outbox messages (PostgreSQL: pg_notify).
	Notify func(ctx context.Context, q Querier, projectID string) error
}

// Tx implements brabo.Tx.
type Tx struct {
	q       Querier
	d       *Dialect
	touched map[string]bool
}

// NewTx returns a brabo.Tx over q.
func NewTx(q Querier, d *Dialect) *Tx { return &Tx{q: q, d: d} }

// Touched returns the projects whose events or outbox changed in this
// transaction, for notification after commit.
func (t *Tx) Touched() []string {
	out := make([]string, 0, len(t.touched))
	for p := range t.touched {
		out = append(out, p)
	}
	return out
}

func (t *Tx) touch(ctx context.Context, projectID string) error {
	if t.touched == nil {
		t.touched = map[string]bool{}
	}
	if t.touched[projectID] {
		return nil
	}
	t.touched[projectID] = true
	if t.d.Notify != nil {
		return t.d.Notify(ctx, t.q, projectID)
	}
	return nil
}

func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (t *Tx) notFound(err error, what string) error {
	if t.d.IsNoRows(err) {
		return fmt.Errorf("%s: %w", what, brabo.ErrNotFound)
	}
	return err
}

func (t *Tx) conflict(err error, what string) error {
	if err != nil && t.d.IsUnique(err) {
		return fmt.Errorf("%s: %w", what, brabo.ErrConflict)
	}
	return err
}

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, q Querier, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Projects ---------------------------------------------------------------

const projectCols = `id, slug, name, mode, root, workspace_dir, container_running, owner_id, created_at, git_hooks, max_timeout_sec, mcp_tools, max_parallel, wait_cap_sec`

func scanProject(r Row) (*brabo.Project, error) {
	p := &brabo.Project{}
	var created int64
	var tools string
	err := r.Scan(&p.ID, &p.Slug, &p.Name, &p.Mode, &p.Root, &p.WorkspaceDir, &p.ContainerRunning, &p.OwnerID, &created,
		&p.GitHooks, &p.MaxTimeoutSec, &tools, &p.MaxParallel, &p.WaitCapSec)
	p.CreatedAt = time.UnixMicro(created).UTC()
	if err == nil {
		p.McpTools, err = decodeTools(p.ID, tools)
	}
	return p, err
}

func (t *Tx) CreateProject(ctx context.Context, p *brabo.Project) error {
	tools, err := encodeTools(p.McpTools)
	if err != nil {
		return err
	}
	if p.MaxParallel <= 0 {
		p.MaxParallel = brabo.DefaultMaxParallel
	}
	_, err = t.q.Exec(ctx, `INSERT INTO projects (`+projectCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`,
		p.ID, p.Slug, p.Name, string(p.Mode), p.Root, p.WorkspaceDir, p.ContainerRunning, p.OwnerID, p.CreatedAt.UnixMicro(),
		p.GitHooks, p.MaxTimeoutSec, tools, p.MaxParallel, p.WaitCapSec)
	return t.conflict(err, "project "+p.Slug)
}

func (t *Tx) Project(ctx context.Context, id string) (*brabo.Project, error) {
	p, err := scanProject(t.q.QueryRow(ctx, `SELECT `+projectCols+` FROM projects WHERE id = $1`, id))
	if err != nil {
		return nil, t.notFound(err, "project "+id)
	}
	return p, nil
}

func (t *Tx) Projects(ctx context.Context) ([]*brabo.Project, error) {
	return queryAll(ctx, t.q, scanProject, `SELECT `+projectCols+` FROM projects ORDER BY created_at, id`)
}

func (t *Tx) SetContainerRunning(ctx context.Context, projectID string, running bool) error {
	n, err := t.q.Exec(ctx, `UPDATE projects SET container_running = $1 WHERE id = $2`, running, projectID)
	if err == nil && n == 0 {
		return fmt.Errorf("project %s: %w", projectID, brabo.ErrNotFound)
	}
	return err
}

// factsQueries are the ProposalFacts statements by JSON aggregate, each
// built once: the statement runs on every proposal.
var factsQueries sync.Map

func factsQuery(agg string) string {
	if q, ok := factsQueries.Load(agg); ok {
		return q.(string)
	}
	q := `SELECT p.id, p.slug, p.name, p.mode, p.root, p.workspace_dir, p.container_running,
			p.owner_id, p.created_at, p.git_hooks, p.max_timeout_sec, p.mcp_tools, m.id, m.name, m.admin, m.token_hash, m.created_at,
			COALESCE((SELECT role FROM memberships WHERE project_id = p.id AND member_id = $2), ''),
			COALESCE((SELECT mode FROM agent_autonomy WHERE agent_id = $3 AND action_type = $4), ''),
			COALESCE((SELECT mode FROM agent_autonomy WHERE agent_id = $3 AND action_type = '*'), ''),
			COALESCE((SELECT CAST(` + agg + `(pattern ORDER BY id) AS TEXT) FROM agent_patterns WHERE agent_id = $3), '[]'),
			tr.current_hash, tr.seq, tr.updated_at
		FROM projects p JOIN members m ON m.id = p.owner_id LEFT JOIN permissions_trust tr ON tr.project_id = p.id
		WHERE p.id = $1`
	factsQueries.Store(agg, q)
	return q
}

func (t *Tx) ProposalFacts(ctx context.Context, projectID, principalID, agentID string, at brabo.ActionType) (*brabo.ProposalFacts, error) {
	f := &brabo.ProposalFacts{Project: &brabo.Project{}, Owner: &brabo.Member{}}
	p, m := f.Project, f.Owner
	var pCreated, mCreated int64
	var patterns, tools string
	var trustHash sql.NullString
	var trustAt, trustSeq sql.NullInt64
	err := t.q.QueryRow(ctx, factsQuery(t.d.JSONAgg),
		projectID, principalID, agentID, string(at)).Scan(
		&p.ID, &p.Slug, &p.Name, &p.Mode, &p.Root, &p.WorkspaceDir, &p.ContainerRunning, &p.OwnerID, &pCreated,
		&p.GitHooks, &p.MaxTimeoutSec, &tools, &m.ID, &m.Name, &m.Admin, &m.TokenHash, &mCreated, &f.Role, &f.Specific, &f.Wildcard,
		&patterns, &trustHash, &trustSeq, &trustAt)
	if err != nil {
		return nil, t.notFound(err, "project "+projectID)
	}
	if trustHash.Valid {
		f.Trust = &brabo.PermissionsTrust{ProjectID: p.ID, Hash: trustHash.String, Seq: trustSeq.Int64,
			UpdatedAt: time.UnixMicro(trustAt.Int64).UTC()}
	}
	if err := json.Unmarshal([]byte(patterns), &f.AgentPatterns); err != nil {
		return nil, fmt.Errorf("the patterns of agent %s: %w", agentID, err)
	}
	if p.McpTools, err = decodeTools(p.ID, tools); err != nil {
		return nil, err
	}
	p.CreatedAt, m.CreatedAt = time.UnixMicro(pCreated).UTC(), time.UnixMicro(mCreated).UTC()
	return f, nil
}

// Members ----------------------------------------------------------------

const memberCols = `id, name, admin, token_hash, created_at, revoked_at`

func scanMember(r Row) (*brabo.Member, error) {
	m := &brabo.Member{}
	var created int64
	var revoked sql.NullInt64
	err := r.Scan(&m.ID, &m.Name, &m.Admin, &m.TokenHash, &created, &revoked)
	m.CreatedAt = time.UnixMicro(created).UTC()
	m.RevokedAt = fromMicros(revoked)
	return m, err
}

func (t *Tx) CreateMember(ctx context.Context, m *brabo.Member) error {
	_, err := t.q.Exec(ctx, `INSERT INTO members (`+memberCols+`) VALUES ($1,$2,$3,$4,$5,$6)`,
		m.ID, m.Name, m.Admin, m.TokenHash, m.CreatedAt.UnixMicro(), micros(m.RevokedAt))
	return t.conflict(err, "member "+m.Name)
}

func (t *Tx) Member(ctx context.Context, id string) (*brabo.Member, error) {
	m, err := scanMember(t.q.QueryRow(ctx, `SELECT `+memberCols+` FROM members WHERE id = $1`, id))
	if err != nil {
		return nil, t.notFound(err, "member "+id)
	}
	return m, nil
}

func (t *Tx) MemberByTokenHash(ctx context.Context, hash string) (*brabo.Member, error) {
	m, err := scanMember(t.q.QueryRow(ctx, `SELECT `+memberCols+` FROM members WHERE token_hash = $1 AND revoked_at IS NULL`, hash))
	if err != nil {
		return nil, t.notFound(err, "member token")
	}
	return m, nil
}

func (t *Tx) CountMembers(ctx context.Context) (int, error) {
	var n int
	err := t.q.QueryRow(ctx, `SELECT COUNT(*) FROM members`).Scan(&n)
	return n, err
}

func (t *Tx) SetRole(ctx context.Context, m brabo.Membership) error {
	_, err := t.q.Exec(ctx, `INSERT INTO memberships (project_id, member_id, role) VALUES ($1,$2,$3)
		ON CONFLICT (project_id, member_id) DO UPDATE SET role = excluded.role`,
		m.ProjectID, m.MemberID, string(m.Role))
	return err
}

func (t *Tx) Role(ctx context.Context, projectID, memberID string) (brabo.Role, error) {
	var role string
	err := t.q.QueryRow(ctx, `SELECT role FROM memberships WHERE project_id = $1 AND member_id = $2`,
		projectID, memberID).Scan(&role)
	if err != nil {
		if t.d.IsNoRows(err) {
			return "", nil
		}
		return "", err
	}
	return brabo.Role(role), nil
}

func (t *Tx) Memberships(ctx context.Context, memberID string) ([]brabo.Membership, error) {
	rows, err := t.q.Query(ctx, `SELECT project_id, member_id, role FROM memberships WHERE member_id = $1 ORDER BY project_id`, memberID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []brabo.Membership
	for rows.Next() {
		var m brabo.Membership
		if err := rows.Scan(&m.ProjectID, &m.MemberID, &m.Role); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Agents -----------------------------------------------------------------

const agentCols = `id, project_id, name, principal_id, token_hash, created_at, revoked_at, kind`

func scanAgent(r Row) (*brabo.Agent, error) {
	a := &brabo.Agent{}
	var created int64
	var revoked sql.NullInt64
	err := r.Scan(&a.ID, &a.ProjectID, &a.Name, &a.PrincipalID, &a.TokenHash, &created, &revoked, &a.Kind)
	a.CreatedAt = time.UnixMicro(created).UTC()
	a.RevokedAt = fromMicros(revoked)
	return a, err
}

func (t *Tx) CreateAgent(ctx context.Context, a *brabo.Agent) error {
	_, err := t.q.Exec(ctx, `INSERT INTO agents (`+agentCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
		a.ID, a.ProjectID, a.Name, a.PrincipalID, a.TokenHash, a.CreatedAt.UnixMicro(), micros(a.RevokedAt), a.Kind)
	return t.conflict(err, "agent "+a.Name)
}

func (t *Tx) Agent(ctx context.Context, id string) (*brabo.Agent, error) {
	a, err := scanAgent(t.q.QueryRow(ctx, `SELECT `+agentCols+` FROM agents WHERE id = $1`, id))
	if err != nil {
		return nil, t.notFound(err, "agent "+id)
	}
	return a, nil
}

func (t *Tx) AgentByTokenHash(ctx context.Context, hash string) (*brabo.Agent, error) {
	a, err := scanAgent(t.q.QueryRow(ctx, `SELECT `+agentCols+` FROM agents WHERE token_hash = $1 AND revoked_at IS NULL`, hash))
	if err != nil {
		return nil, t.notFound(err, "agent token")
	}
	return a, nil
}

func (t *Tx) Agents(ctx context.Context, projectID string) ([]*brabo.Agent, error) {
	return queryAll(ctx, t.q, scanAgent, `SELECT `+agentCols+` FROM agents WHERE project_id = $1 ORDER BY created_at, id`, projectID)
}

func (t *Tx) PutAutonomy(ctx context.Context, a brabo.AgentAutonomy) error {
	_, err := t.q.Exec(ctx, `INSERT INTO agent_autonomy (agent_id, action_type, mode) VALUES ($1,$2,$3)
		ON CONFLICT (agent_id, action_type) DO UPDATE SET mode = excluded.mode`,
		a.AgentID, string(a.ActionType), string(a.Mode))
	return err
}

func (t *Tx) Autonomy(ctx context.Context, agentID string) ([]brabo.AgentAutonomy, error) {
	rows, err := t.q.Query(ctx, `SELECT agent_id, action_type, mode FROM agent_autonomy WHERE agent_id = $1 ORDER BY action_type`, agentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []brabo.AgentAutonomy
	for rows.Next() {
		var a brabo.AgentAutonomy
		if err := rows.Scan(&a.AgentID, &a.ActionType, &a.Mode); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Actions ----------------------------------------------------------------

const actionCols = `id, project_id, type, payload, actor_id, actor_kind, principal_id, status, reason,
	decision, decided_by, result, created_at, decided_at, settled_at, execution, preview`

func scanAction(r Row) (*brabo.ProposedAction, error) {
	a := &brabo.ProposedAction{}
	var payload, decision string
	var decidedBy, result, execution, preview sql.NullString
	var created int64
	var decidedAt, settledAt sql.NullInt64
	err := r.Scan(&a.ID, &a.ProjectID, &a.Type, &payload, &a.ActorID, &a.ActorKind, &a.PrincipalID,
		&a.Status, &a.Reason, &decision, &decidedBy, &result, &created, &decidedAt, &settledAt, &execution, &preview)
	if err != nil {
		return nil, err
	}
	if preview.Valid && preview.String != "" {
		a.Preview = &brabo.Preview{}
		if err := json.Unmarshal([]byte(preview.String), a.Preview); err != nil {
			return nil, fmt.Errorf("action %s preview: %w", a.ID, err)
		}
	}
	if a.Execution, err = decodeExecution(a.ID, execution); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(payload), &a.Payload); err != nil {
		return nil, fmt.Errorf("action %s payload: %w", a.ID, err)
	}
	if err := json.Unmarshal([]byte(decision), &a.Decision); err != nil {
		return nil, fmt.Errorf("action %s decision: %w", a.ID, err)
	}
	if result.Valid {
		a.Result = &brabo.Result{}
		if err := json.Unmarshal([]byte(result.String), a.Result); err != nil {
			return nil, fmt.Errorf("action %s result: %w", a.ID, err)
		}
	}
	a.DecidedBy = decidedBy.String
	a.CreatedAt = time.UnixMicro(created).UTC()
	a.DecidedAt = fromMicros(decidedAt)
	a.SettledAt = fromMicros(settledAt)
	return a, nil
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func (t *Tx) InsertAction(ctx context.Context, a *brabo.ProposedAction) error {
	payload, err := jsonText(a.Payload)
	if err != nil {
		return err
	}
	decision, err := jsonText(a.Decision)
	if err != nil {
		return err
	}
	var result any
	if a.Result != nil {
		s, err := jsonText(a.Result)
		if err != nil {
			return err
		}
		result = s
	}
	var mergePR any
	if a.Type == brabo.GitMerge {
		mergePR = a.Payload.PR
	}
	execution, err := encodeExecution(a.Execution)
	if err != nil {
		return err
	}
	var preview any
	if a.Preview != nil {
		if preview, err = jsonText(a.Preview); err != nil {
			return err
		}
	}
	var waitUntil any
	if a.External() && !a.Execution.WaitUntil.IsZero() {
		waitUntil = a.Execution.WaitUntil.UnixMicro()
	}
	_, err = t.q.Exec(ctx, `INSERT INTO actions (`+actionCols+`, merge_pr, search, wait_until)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20)`,
		a.ID, a.ProjectID, string(a.Type), payload, a.ActorID, a.ActorKind, a.PrincipalID,
		string(a.Status), a.Reason, decision, nullString(a.DecidedBy), result,
		a.CreatedAt.UnixMicro(), micros(a.DecidedAt), micros(a.SettledAt), execution, preview, mergePR, searchText(a), waitUntil)
	return t.conflict(err, "action "+a.ID)
}

// ExpiredWaits lists the pending external actions whose hook's deadline
// (wait_until) is before before, oldest deadline first, at most limit
// (brabo.Tx).
func (t *Tx) ExpiredWaits(ctx context.Context, before time.Time, limit int) ([]*brabo.ProposedAction, error) {
	return queryAll(ctx, t.q, scanAction, `SELECT `+actionCols+` FROM actions
		WHERE status = 'pending' AND wait_until IS NOT NULL AND wait_until < $1 ORDER BY wait_until, id LIMIT $2`,
		before.UnixMicro(), limit)
}

func (t *Tx) Action(ctx context.Context, id string) (*brabo.ProposedAction, error) {
	a, err := scanAction(t.q.QueryRow(ctx, `SELECT `+actionCols+` FROM actions WHERE id = $1`, id))
	if err != nil {
		return nil, t.notFound(err, "action "+id)
	}
	return a, nil
}

func (t *Tx) TransitionAction(ctx context.Context, id string, from []brabo.ActionStatus, u brabo.ActionUpdate) (bool, error) {
	if len(from) == 0 || u.Status == "" {
		return false, errors.New("sqlstore: a transition needs from statuses and a new status")
	}
	args := []any{id, string(u.Status)}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	set := []string{"status = $2"}
	if u.Reason != "" {
		set = append(set, "reason = "+arg(u.Reason))
	}
	if u.DecidedBy != "" {
		set = append(set, "decided_by = "+arg(u.DecidedBy))
	}
	if !u.DecidedAt.IsZero() {
		set = append(set, "decided_at = "+arg(u.DecidedAt.UnixMicro()))
	}
	if u.Result != nil {
		s, err := jsonText(u.Result)
		if err != nil {
			return false, err
		}
		set = append(set, "result = "+arg(s))
	}
	if !u.SettledAt.IsZero() {
		set = append(set, "settled_at = "+arg(u.SettledAt.UnixMicro()))
	}
	if u.Preview != nil {
		s, err := jsonText(u.Preview)
		if err != nil {
			return false, err
		}
		set = append(set, "preview = "+arg(s))
	}
	ph := make([]string, len(from))
	for i, s := range from {
		ph[i] = arg(string(s))
	}
	n, err := t.q.Exec(ctx, `UPDATE actions SET `+strings.Join(set, ", ")+
		` WHERE id = $1 AND status IN (`+strings.Join(ph, ",")+`)`, args...)
	if err != nil {
		return false, t.conflict(err, "action "+id)
	}
	return n == 1, nil
}

func (t *Tx) MergeActions(ctx context.Context, projectID string, pr int64) ([]*brabo.ProposedAction, error) {
	return queryAll(ctx, t.q, scanAction, `SELECT `+actionCols+` FROM actions WHERE project_id = $1 AND merge_pr = $2 ORDER BY created_at`, projectID, pr)
}

// Outbox -----------------------------------------------------------------

func (t *Tx) Enqueue(ctx context.Context, m *brabo.OutboxMessage) error {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now().UTC()
	}
	if len(m.Payload) == 0 {
		m.Payload = json.RawMessage("{}")
	}
	err := t.q.QueryRow(ctx, `INSERT INTO outbox (project_id, topic, actor_key, action_id, payload, created_at)
		VALUES ($1,$2,$3,$4,$5,$6) RETURNING id`,
		m.ProjectID, m.Topic, m.ActorKey, m.ActionID, string(m.Payload), m.CreatedAt.UnixMicro()).Scan(&m.ID)
	if err != nil {
		return err
	}
	return t.touch(ctx, m.ProjectID)
}

func (t *Tx) ClaimOutbox(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]brabo.OutboxMessage, error) {
	return t.claimOutbox(ctx, now, lease, limit, "")
}

// claimOutbox leases messages; filter, when set, is one more condition on
// the outbox row o, with $4 as its one argument (arg).
func (t *Tx) claimOutbox(ctx context.Context, now time.Time, lease time.Duration, limit int, filter string, arg ...any) ([]brabo.OutboxMessage, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := t.q.Query(ctx, `UPDATE outbox SET claimed_until = $1 WHERE id IN (
		SELECT o.id FROM outbox o WHERE o.delivered_at IS NULL AND (o.claimed_until IS NULL OR o.claimed_until < $2)`+filter+`
		ORDER BY o.id LIMIT $3`+t.d.SkipLocked+`)
		RETURNING id, project_id, topic, actor_key, action_id, payload, created_at, claimed_until`,
		append([]any{now.Add(lease).UnixMicro(), now.UnixMicro(), limit}, arg...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []brabo.OutboxMessage
	for rows.Next() {
		var m brabo.OutboxMessage
		var payload string
		var created int64
		var claimed sql.NullInt64
		if err := rows.Scan(&m.ID, &m.ProjectID, &m.Topic, &m.ActorKey, &m.ActionID, &payload, &created, &claimed); err != nil {
			return nil, err
		}
		m.Payload = json.RawMessage(payload)
		m.CreatedAt = time.UnixMicro(created).UTC()
		m.ClaimedUntil = fromMicros(claimed)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sortOutbox(out)
	return out, nil
}

func sortOutbox(ms []brabo.OutboxMessage) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].ID < ms[j-1].ID; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func (t *Tx) MarkDelivered(ctx context.Context, id int64, at time.Time) error {
	_, err := t.q.Exec(ctx, `UPDATE outbox SET delivered_at = $1 WHERE id = $2`, at.UnixMicro(), id)
	return err
}

// Pull requests ----------------------------------------------------------

const prCols = `project_id, number, title, head, base, state, task_id, merged_by, created_at`

func scanPR(r Row) (*brabo.PullRequest, error) {
	pr := &brabo.PullRequest{}
	var task, merged sql.NullString
	var created int64
	err := r.Scan(&pr.ProjectID, &pr.Number, &pr.Title, &pr.Head, &pr.Base, &pr.State, &task, &merged, &created)
	pr.TaskID, pr.MergedBy = task.String, merged.String
	pr.CreatedAt = time.UnixMicro(created).UTC()
	return pr, err
}

func (t *Tx) CreatePR(ctx context.Context, pr *brabo.PullRequest) error {
	if err := t.q.QueryRow(ctx, `UPDATE projects SET pr_seq = pr_seq + 1 WHERE id = $1 RETURNING pr_seq`,
		pr.ProjectID).Scan(&pr.Number); err != nil {
		return t.notFound(err, "project "+pr.ProjectID)
	}
	if pr.State == "" {
		pr.State = brabo.PROpen
	}
	if pr.CreatedAt.IsZero() {
		pr.CreatedAt = time.Now().UTC()
	}
	_, err := t.q.Exec(ctx, `INSERT INTO pull_requests (`+prCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
		pr.ProjectID, pr.Number, pr.Title, pr.Head, pr.Base, string(pr.State), nullString(pr.TaskID),
		nullString(pr.MergedBy), pr.CreatedAt.UnixMicro())
	return err
}

func (t *Tx) PR(ctx context.Context, projectID string, number int64) (*brabo.PullRequest, error) {
	pr, err := scanPR(t.q.QueryRow(ctx, `SELECT `+prCols+` FROM pull_requests WHERE project_id = $1 AND number = $2`, projectID, number))
	if err != nil {
		return nil, t.notFound(err, fmt.Sprintf("pull request #%d", number))
	}
	return pr, nil
}

func (t *Tx) PRs(ctx context.Context, projectID string) ([]*brabo.PullRequest, error) {
	return queryAll(ctx, t.q, scanPR, `SELECT `+prCols+` FROM pull_requests WHERE project_id = $1 ORDER BY number`, projectID)
}

func (t *Tx) MarkPRMerged(ctx context.Context, projectID string, number int64, actionID string) (bool, error) {
	n, err := t.q.Exec(ctx, `UPDATE pull_requests SET state = $1, merged_by = $2
		WHERE project_id = $3 AND number = $4 AND state <> $1`,
		string(brabo.PRMerged), actionID, projectID, number)
	return n == 1, err
}

var _ brabo.Tx = (*Tx)(nil)
