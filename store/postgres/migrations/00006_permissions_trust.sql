-- +goose Up
-- Trusted policy (DESIGN §9): the store, not the file on disk, is the
-- source of trust for a project's permissions.json. Every content brabo
-- trusts is kept by its SHA-256 (with its bytes, so Restore can write it
-- back), and so is every content it saw on disk and reported once without
-- trusting it (no bytes: the file is on disk).
CREATE TABLE permissions_versions (
    project_id TEXT NOT NULL REFERENCES projects(id),
    hash       TEXT NOT NULL,
    trusted    BOOLEAN NOT NULL,
    content    BYTEA,
    source     TEXT NOT NULL,
    actor_id   TEXT,
    action_id  TEXT,
    created_at BIGINT NOT NULL,
    trusted_at BIGINT,
    PRIMARY KEY (project_id, hash)
);

-- Which trusted version is current: the one a change on disk is compared
-- with, and decided with while a loosening waits for a maintainer. One row
-- per project, the row a change of trust locks (SELECT … FOR UPDATE).
CREATE TABLE permissions_trust (
    project_id   TEXT PRIMARY KEY REFERENCES projects(id),
    current_hash TEXT NOT NULL,
    updated_at   BIGINT NOT NULL
);

-- +goose Down
DROP TABLE permissions_trust;
DROP TABLE permissions_versions;
