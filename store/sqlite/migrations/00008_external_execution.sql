-- +goose Up
-- Agents that run their tools themselves (Claude Code, Codex, Gemini CLI
-- through brabo hook, issue 13). An action brabo only decides records who
-- runs it (JSON: mode "external", runner, the agent's session, turn and
-- tool-use ids); NULL is an action brabo runs. A hook agent's token is of
-- kind 'hook': it proposes external actions and reports their results,
-- nothing else. A project's mapped MCP tools (a JSON list of server__tool
-- or server__*) are approved by a developer; others need a maintainer.
ALTER TABLE actions ADD COLUMN execution TEXT;
ALTER TABLE agents ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN mcp_tools TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE projects DROP COLUMN mcp_tools;
ALTER TABLE agents DROP COLUMN kind;
ALTER TABLE actions DROP COLUMN execution;
