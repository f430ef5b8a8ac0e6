-- +goose Up
-- Which process runs an agent's actor (DESIGN §7.2): one row per leased
-- agent, taken and renewed by ClaimAgent, ended by ReleaseAgent. The agent
-- id is not a foreign key: a lease names an agent and needs nothing of it.
CREATE TABLE agent_leases (
    agent_id    TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    lease_until INTEGER NOT NULL
);

-- +goose Down
DROP TABLE agent_leases;
