-- +goose Up
CREATE TABLE tasks (
    id             TEXT PRIMARY KEY,
    project_id     TEXT NOT NULL REFERENCES projects(id),
    title          TEXT NOT NULL,
    description    TEXT NOT NULL,
    agent_id       TEXT,
    status         TEXT NOT NULL,
    blocked_reason TEXT,
    blocked_origin TEXT,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX tasks_project ON tasks (project_id, created_at);
CREATE TABLE runs (
    id                 TEXT PRIMARY KEY,
    project_id         TEXT NOT NULL REFERENCES projects(id),
    actor_key          TEXT NOT NULL,
    task_id            TEXT,
    state              TEXT NOT NULL,
    awaiting_action_id TEXT,
    ctx                TEXT,
    lease_owner        TEXT,
    lease_until        INTEGER,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX runs_awaiting ON runs (actor_key, awaiting_action_id);
CREATE INDEX runs_actor_state ON runs (actor_key, state, updated_at);
CREATE INDEX runs_state ON runs (state, updated_at);

-- +goose Down
DROP TABLE runs;
DROP TABLE tasks;
