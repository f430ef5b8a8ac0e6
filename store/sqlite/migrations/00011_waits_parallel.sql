-- +goose Up
-- A project's cap on dev agents working at once (docs/engine.md) and its
-- inactivity cap in seconds (0: brabo serve --wait-cap).
ALTER TABLE projects ADD COLUMN max_parallel INTEGER NOT NULL DEFAULT 3;
ALTER TABLE projects ADD COLUMN wait_cap_sec INTEGER NOT NULL DEFAULT 0;

-- When a waiting run's inactivity cap runs out: the store's sweep blocks
-- a run still waiting then (engine/wake.Sweeper). Runs waiting when this
-- migration runs keep the cap they were promised, the former process-wide
-- 24 hours from their suspension.
ALTER TABLE runs ADD COLUMN deadline INTEGER;
UPDATE runs SET deadline = updated_at + 86400000000 WHERE state IN ('awaiting_approval', 'awaiting_pr');
CREATE INDEX runs_deadline ON runs (deadline) WHERE deadline IS NOT NULL;

-- +goose Down
DROP INDEX runs_deadline;
ALTER TABLE runs DROP COLUMN deadline;
ALTER TABLE projects DROP COLUMN wait_cap_sec;
ALTER TABLE projects DROP COLUMN max_parallel;
