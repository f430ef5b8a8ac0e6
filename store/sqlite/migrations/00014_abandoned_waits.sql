-- +goose Up
-- A hook's own deadline for a decision (issue 29): past it the agent no
-- longer waits, so brabo's sweep makes a pending external action
-- abandoned (status 'abandoned', event action.abandoned), which leaves the
-- queue. Microseconds, as the other times; NULL for an action brabo runs,
-- or one proposed before this migration (a decision on such an action
-- proceeds as before).
ALTER TABLE actions ADD COLUMN wait_until INTEGER;
CREATE INDEX actions_wait_until ON actions (wait_until) WHERE status = 'pending' AND wait_until IS NOT NULL;

-- +goose Down
DROP INDEX actions_wait_until;
ALTER TABLE actions DROP COLUMN wait_until;
