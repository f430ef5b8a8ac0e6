-- +goose Up
CREATE TABLE members (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    admin      INTEGER NOT NULL DEFAULT 0,
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);
CREATE TABLE projects (
    id                TEXT PRIMARY KEY,
    slug              TEXT NOT NULL UNIQUE,
    name              TEXT NOT NULL,
    mode              TEXT NOT NULL,
    root              TEXT NOT NULL,
    workspace_dir     TEXT NOT NULL,
    container_running INTEGER NOT NULL DEFAULT 0,
    owner_id          TEXT NOT NULL REFERENCES members(id),
    event_seq         INTEGER NOT NULL DEFAULT 0,
    pr_seq            INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL
);
CREATE TABLE memberships (
    project_id TEXT NOT NULL REFERENCES projects(id),
    member_id  TEXT NOT NULL REFERENCES members(id),
    role       TEXT NOT NULL,
    PRIMARY KEY (project_id, member_id)
);
CREATE TABLE agents (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    name         TEXT NOT NULL,
    principal_id TEXT NOT NULL REFERENCES members(id),
    token_hash   TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    UNIQUE (project_id, name)
);
CREATE TABLE agent_autonomy (
    agent_id    TEXT NOT NULL REFERENCES agents(id),
    action_type TEXT NOT NULL,
    mode        TEXT NOT NULL,
    PRIMARY KEY (agent_id, action_type)
);
CREATE TABLE actions (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    type         TEXT NOT NULL,
    payload      TEXT NOT NULL,
    actor_id     TEXT NOT NULL,
    actor_kind   TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    status       TEXT NOT NULL,
    reason       TEXT NOT NULL,
    decision     TEXT NOT NULL,
    decided_by   TEXT,
    result       TEXT,
    merge_pr     INTEGER,
    created_at   INTEGER NOT NULL,
    decided_at   INTEGER,
    settled_at   INTEGER
);
CREATE INDEX actions_queue ON actions (project_id, status, created_at);
CREATE INDEX actions_actor ON actions (actor_id, created_at);
-- One live git_merge per PR: the refusal merge_already_proposed holds under races.
CREATE UNIQUE INDEX actions_live_merge ON actions (project_id, merge_pr)
    WHERE merge_pr IS NOT NULL AND status IN ('pending', 'approved', 'auto_approved');
CREATE TABLE events (
    project_id TEXT NOT NULL REFERENCES projects(id),
    seq        INTEGER NOT NULL,
    type       TEXT NOT NULL,
    actor_id   TEXT NOT NULL,
    action_id  TEXT,
    payload    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, seq)
);
CREATE TABLE outbox (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id    TEXT NOT NULL,
    topic         TEXT NOT NULL,
    actor_key     TEXT NOT NULL,
    action_id     TEXT NOT NULL,
    payload       TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    claimed_until INTEGER,
    delivered_at  INTEGER
);
CREATE INDEX outbox_undelivered ON outbox (id) WHERE delivered_at IS NULL;
CREATE TABLE pull_requests (
    project_id TEXT NOT NULL REFERENCES projects(id),
    number     INTEGER NOT NULL,
    title      TEXT NOT NULL,
    head       TEXT NOT NULL,
    base       TEXT NOT NULL,
    state      TEXT NOT NULL,
    task_id    TEXT,
    merged_by  TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, number)
);

-- +goose Down
DROP TABLE pull_requests;
DROP TABLE outbox;
DROP TABLE events;
DROP TABLE actions;
DROP TABLE agent_autonomy;
DROP TABLE agents;
DROP TABLE memberships;
DROP TABLE projects;
DROP TABLE members;
