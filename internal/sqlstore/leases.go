package sqlstore

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/brabo-dev/brabo"
)

// Agent leases ------------------------------------------------------------
//
// One row per leased agent: which process (owner) holds its actor, until
// when. A conditional upsert takes a lease that is free, ran out or is
// already the claimer's, so of several processes claiming at once at
// most one holds it, on SQLite (one writer) and on PostgreSQL (the
// conflict is resolved on the locked row) alike.

// ClaimAgent takes or renews the agent's lease for owner (brabo.Tx): it
// reports true when owner holds it until now+lease.
func (t *Tx) ClaimAgent(ctx context.Context, agentID, owner string, now time.Time, lease time.Duration) (bool, error) {
	n, err := t.q.Exec(ctx, `INSERT INTO agent_leases (agent_id, owner, lease_until) VALUES ($1, $2, $3)
		ON CONFLICT (agent_id) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
		WHERE agent_leases.owner = excluded.owner OR agent_leases.lease_until < $4`,
		agentID, owner, now.Add(lease).UnixMicro(), now.UnixMicro())
	return n == 1, err
}

// claimChunk bounds the ids of one ClaimAgents statement.
const claimChunk = 5000

// ClaimAgents is ClaimAgent's upsert over a JSON array of ids (brabo.Tx):
// one statement per claimChunk agents, returning the rows it took or
// renewed. The ids are made unique first: PostgreSQL refuses an upsert
// that would touch one row twice.
func (t *Tx) ClaimAgents(ctx context.Context, agentIDs []string, owner string, now time.Time, lease time.Duration) (map[string]bool, error) {
	won := make(map[string]bool, len(agentIDs))
	ids := slices.Clone(agentIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), claimChunk)]
		ids = ids[len(chunk):]
		list, err := json.Marshal(chunk)
		if err != nil {
			return nil, err
		}
		rows, err := t.q.Query(ctx, `INSERT INTO agent_leases (agent_id, owner, lease_until)
			SELECT value, $1, $2 FROM `+t.d.JSONTextRows("$3")+` WHERE true
			ON CONFLICT (agent_id) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
			WHERE agent_leases.owner = excluded.owner OR agent_leases.lease_until < $4
			RETURNING agent_id`,
			owner, now.Add(lease).UnixMicro(), string(list), now.UnixMicro())
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			won[id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return won, nil
}

// ReleaseAgent deletes owner's lease of the agent; another owner's stays.
func (t *Tx) ReleaseAgent(ctx context.Context, agentID, owner string) error {
	_, err := t.q.Exec(ctx, `DELETE FROM agent_leases WHERE agent_id = $1 AND owner = $2`, agentID, owner)
	return err
}

// AgentLease reads the agent's lease, brabo.ErrNotFound for none.
func (t *Tx) AgentLease(ctx context.Context, agentID string) (*brabo.AgentLease, error) {
	l := &brabo.AgentLease{}
	var until int64
	err := t.q.QueryRow(ctx, `SELECT agent_id, owner, lease_until FROM agent_leases WHERE agent_id = $1`, agentID).
		Scan(&l.AgentID, &l.Owner, &until)
	if err != nil {
		return nil, t.notFound(err, "lease of agent "+agentID)
	}
	l.Until = time.UnixMicro(until).UTC()
	return l, nil
}

func (t *Tx) AgentLeases(ctx context.Context) (map[string]*brabo.AgentLease, error) {
	rows, err := t.q.Query(ctx, `SELECT agent_id, owner, lease_until FROM agent_leases`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*brabo.AgentLease{}
	for rows.Next() {
		l := &brabo.AgentLease{}
		var until int64
		if err := rows.Scan(&l.AgentID, &l.Owner, &until); err != nil {
			return nil, err
		}
		l.Until = time.UnixMicro(until).UTC()
		out[l.AgentID] = l
	}
	return out, rows.Err()
}

// ClaimOutboxFor is ClaimOutbox leaving out the messages whose actor key
// ("agent:<id>") names an agent another owner holds a live lease of.
func (t *Tx) ClaimOutboxFor(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]brabo.OutboxMessage, error) {
	return t.claimOutbox(ctx, now, lease, limit, `
		AND NOT EXISTS (SELECT 1 FROM agent_leases l WHERE o.actor_key LIKE 'agent:%'
			AND l.agent_id = substr(o.actor_key, 7) AND l.owner <> $4 AND l.lease_until >= $2)`, owner)
}
