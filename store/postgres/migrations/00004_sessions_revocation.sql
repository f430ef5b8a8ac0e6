-- +goose Up
-- Tokens can be revoked (a revoked token authenticates nobody), and a web
-- login is a session of its own: a random secret stored hashed, with an
-- expiry, listed and revocable, instead of the member token in a cookie.
ALTER TABLE members ADD COLUMN revoked_at BIGINT;
ALTER TABLE agents ADD COLUMN revoked_at BIGINT;
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    member_id  TEXT NOT NULL REFERENCES members(id),
    token_hash TEXT NOT NULL UNIQUE,
    user_agent TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX sessions_member ON sessions (member_id, created_at);
-- The pending-per-agent limit counts an agent's pending actions on every
-- proposal.
CREATE INDEX actions_actor_status ON actions (actor_id, status);

-- +goose Down
DROP INDEX actions_actor_status;
DROP TABLE sessions;
ALTER TABLE agents DROP COLUMN revoked_at;
ALTER TABLE members DROP COLUMN revoked_at;
