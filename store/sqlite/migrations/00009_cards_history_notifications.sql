-- +goose Up
-- What the human sees (issue 14). An action keeps its preview (JSON: the
-- diff of a write, the commits of a push, the flags of each segment),
-- computed when it was proposed: the card as it was decided. search holds
-- the action's subject in lower case (type, command, path, message,
-- branch, base, title, tool, remote, from), for the history's text filter;
-- rows from before are filled from their payload. An action's page lists
-- its events (events_action). A project's maintainers set webhooks that
-- are told when an action starts waiting and when it is decided; the json
-- ones are signed with the project's secret (webhook_secrets), which is
-- shown to the maintainer once.
ALTER TABLE actions ADD COLUMN preview TEXT;
ALTER TABLE actions ADD COLUMN search TEXT NOT NULL DEFAULT '';
UPDATE actions SET search = lower(type
    || ' ' || COALESCE(json_extract(payload, '$.command'), '')
    || ' ' || COALESCE(json_extract(payload, '$.path'), '')
    || ' ' || COALESCE(json_extract(payload, '$.message'), '')
    || ' ' || COALESCE(json_extract(payload, '$.branch'), '')
    || ' ' || COALESCE(json_extract(payload, '$.base'), '')
    || ' ' || COALESCE(json_extract(payload, '$.title'), '')
    || ' ' || COALESCE(json_extract(payload, '$.tool'), '')
    || ' ' || COALESCE(json_extract(payload, '$.remote'), '')
    || ' ' || COALESCE(json_extract(payload, '$.from'), ''));
CREATE INDEX events_action ON events (project_id, action_id, seq) WHERE action_id IS NOT NULL;
CREATE TABLE webhooks (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    url        TEXT NOT NULL,
    format     TEXT NOT NULL,
    details    INTEGER NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX webhooks_project ON webhooks (project_id, created_at);
CREATE TABLE webhook_secrets (
    project_id TEXT PRIMARY KEY REFERENCES projects(id),
    secret     TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE webhook_secrets;
DROP TABLE webhooks;
DROP INDEX events_action;
ALTER TABLE actions DROP COLUMN search;
ALTER TABLE actions DROP COLUMN preview;
