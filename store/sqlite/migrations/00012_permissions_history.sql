-- +goose Up
-- Trust is the latest accepted version (issue 22 item 3). Until now every
-- content ever trusted stayed trusted, so a file written back to an older
-- accepted version (by a process an action left behind, say) applied again
-- with no event after a maintainer had tightened it. Now the versions that
-- became current are an ordered history, only its last entry is trusted,
-- and a file on disk equal to an older entry is judged against it like any
-- other change.
--
-- permissions_history: one row each time a version became the current one,
-- numbered per project from 1. The migration fills it from the trusted
-- versions, in the order they were trusted, the current one last (a
-- project that had switched back to an older version keeps that one
-- current).
CREATE TABLE permissions_history (
    project_id TEXT NOT NULL REFERENCES projects(id),
    seq        INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    source     TEXT NOT NULL,
    actor_id   TEXT,
    action_id  TEXT,
    at         INTEGER NOT NULL,
    PRIMARY KEY (project_id, seq)
);
INSERT INTO permissions_history (project_id, seq, hash, source, actor_id, action_id, at)
SELECT v.project_id,
       ROW_NUMBER() OVER (PARTITION BY v.project_id
                          ORDER BY CASE WHEN v.hash = t.current_hash THEN 1 ELSE 0 END, v.trusted_at, v.hash),
       v.hash, v.source, v.actor_id, v.action_id, COALESCE(v.trusted_at, v.created_at)
FROM permissions_versions v JOIN permissions_trust t ON t.project_id = v.project_id
WHERE v.trusted;

-- permissions_trust.seq: the history entry that is current.
ALTER TABLE permissions_trust ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE permissions_trust SET seq = (SELECT COUNT(*) FROM permissions_history h WHERE h.project_id = permissions_trust.project_id);

-- permissions_versions.reported_seq: the history entry a content on disk
-- was last reported against (permissions.changed_on_disk is recorded once
-- per content and current version). The contents reported so far count as
-- reported against the current entry; an older trusted version has none,
-- so its first return to disk is reported.
ALTER TABLE permissions_versions ADD COLUMN reported_seq INTEGER;
UPDATE permissions_versions SET reported_seq = (SELECT seq FROM permissions_trust t WHERE t.project_id = permissions_versions.project_id)
WHERE NOT trusted;

-- +goose Down
ALTER TABLE permissions_versions DROP COLUMN reported_seq;
ALTER TABLE permissions_trust DROP COLUMN seq;
DROP TABLE permissions_history;
