-- +goose Up
-- Every action type runs when approved (issue 15): what executing the
-- types that change brabo's own state writes. git_branch_protect adds to
-- a project's protected branches (the merge cap reads them on top of the
-- built-in dev, qa, rc and main); instruction_patch replaces an agent's
-- stored instructions; spend and brabo's own agents' model calls go to
-- the project's budget ledger, and the budget row keeps what was spent
-- (amounts in millionths of the currency's unit); the module map says
-- what each module's container share needs; and project_containers is
-- the lifecycle of the project's container, with the time its mounted
-- folder was last proven writable.
CREATE TABLE protected_branches (
    project_id TEXT NOT NULL REFERENCES projects(id),
    branch     TEXT NOT NULL,
    action_id  TEXT,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, branch)
);

CREATE TABLE agent_instructions (
    agent_id   TEXT PRIMARY KEY REFERENCES agents(id),
    content    TEXT NOT NULL,
    action_id  TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE budgets (
    project_id   TEXT PRIMARY KEY REFERENCES projects(id),
    limit_micros INTEGER NOT NULL,
    spent_micros INTEGER NOT NULL DEFAULT 0,
    input_price  INTEGER NOT NULL DEFAULT 0,
    output_price INTEGER NOT NULL DEFAULT 0,
    updated_by   TEXT NOT NULL,
    updated_at   INTEGER NOT NULL
);

CREATE TABLE budget_entries (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id    TEXT NOT NULL REFERENCES projects(id),
    kind          TEXT NOT NULL,
    amount_micros INTEGER NOT NULL,
    action_id     TEXT,
    agent_id      TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    note          TEXT NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL
);
CREATE INDEX budget_entries_project ON budget_entries (project_id, id);

CREATE TABLE module_maps (
    project_id TEXT PRIMARY KEY REFERENCES projects(id),
    modules    TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE project_containers (
    project_id            TEXT PRIMARY KEY REFERENCES projects(id),
    state                 TEXT NOT NULL,
    name                  TEXT NOT NULL,
    container_id          TEXT NOT NULL DEFAULT '',
    image                 TEXT NOT NULL DEFAULT '',
    cpus                  REAL NOT NULL DEFAULT 0,
    memory_mb             INTEGER NOT NULL DEFAULT 0,
    workspace_verified_at INTEGER,
    error                 TEXT NOT NULL DEFAULT '',
    action_id             TEXT NOT NULL DEFAULT '',
    updated_at            INTEGER NOT NULL
);

-- +goose Down
DROP TABLE project_containers;
DROP TABLE module_maps;
DROP TABLE budget_entries;
DROP TABLE budgets;
DROP TABLE agent_instructions;
DROP TABLE protected_branches;
