-- +goose Up
-- Project settings of brabo's processes (docs/processes.md): whether
-- brabo's git actions run the repository's hooks (off by default: a hook
-- is code the agent may have written), and the project's ceiling on a
-- terminal command's timeoutSec (0: the executor's alone).
ALTER TABLE projects ADD COLUMN git_hooks BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE projects ADD COLUMN max_timeout_sec INTEGER NOT NULL DEFAULT 0;

-- One row per brabo process (serve, agent) alive on the database, renewed
-- while it runs: where it runs (host, boot id), its pid and the pid's start
-- time (so that a recycled pid is never taken for it), and until when its
-- lease holds. A process that stops gracefully deletes its row.
CREATE TABLE instances (
    id          TEXT PRIMARY KEY,
    host        TEXT NOT NULL,
    boot_id     TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    pid_start   BIGINT NOT NULL,
    started_at  BIGINT NOT NULL,
    lease_until BIGINT NOT NULL
);

-- One row per action whose execution is in progress: which instance runs
-- it, on which host and boot, and the process group of the command it
-- runs now (with its leader's start time), so that what a dead instance
-- left running is found and stopped. Deleted when the action settles.
CREATE TABLE running_actions (
    action_id    TEXT PRIMARY KEY,
    instance_id  TEXT NOT NULL,
    host         TEXT NOT NULL,
    boot_id      TEXT NOT NULL,
    pgid         INTEGER NOT NULL DEFAULT 0,
    leader_start BIGINT NOT NULL DEFAULT 0,
    started_at   BIGINT NOT NULL
);

-- +goose Down
DROP TABLE running_actions;
DROP TABLE instances;
ALTER TABLE projects DROP COLUMN max_timeout_sec;
ALTER TABLE projects DROP COLUMN git_hooks;
