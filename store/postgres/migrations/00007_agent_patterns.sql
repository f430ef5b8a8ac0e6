-- +goose Up
-- An agent's own allow patterns (issue 11 item 8): what an always-allow
-- click on a module dev agent's terminal action records (Terminal(pnpm
-- lint)), matched like permissions.json's allow list for that agent only,
-- instead of a blanket agent_autonomy terminal: auto_approve. id orders
-- them as recorded: the first that matches names the rule.
CREATE TABLE agent_patterns (
    id         BIGSERIAL PRIMARY KEY,
    agent_id   TEXT NOT NULL REFERENCES agents(id),
    pattern    TEXT NOT NULL,
    action_id  TEXT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (agent_id, pattern)
);

-- +goose Down
DROP TABLE agent_patterns;
