-- +goose Up
-- The project's infra agent (ADR 0190): the one agent whose
-- container_handoff, once a maintainer approves it, seeds
-- container_start: auto_approve for that agent alone. '' is none.
ALTER TABLE projects ADD COLUMN infra_agent_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE projects DROP COLUMN infra_agent_id;
