package policy

// A module dev agent's own allow patterns (Input.AgentAllow, DESIGN §9
// "Always-allow"): what an always-allow click on that agent's terminal
// action records. They are matched like the file's allow list, for that
// agent only; everything that stops the file's allow stops them too.

import "testing"

func TestAgentAllow(t *testing.T) {
	lint := []string{"Terminal(pnpm lint)"}
	runRows(t, []row{
		{name: "agent allow: the agent's pattern allows what the file does not",
			agentAllow: lint, cmd: "pnpm lint", want: A, reason: "agent allow: Terminal(pnpm lint)", segs: "allow",
			rules: []string{"agent allow: Terminal(pnpm lint)"}},
		{name: "agent allow: without the agent's patterns the same line asks",
			cmd: "pnpm lint", want: RA, reason: "default: no rule approves it", segs: "none"},
		{name: "agent allow: a token prefix, as in the file",
			agentAllow: lint, cmd: "pnpm lint --fix", want: A, reason: "agent allow: Terminal(pnpm lint)", segs: "allow"},
		{name: "agent allow: another program is not covered",
			agentAllow: lint, cmd: "curl x", want: RA, reason: "default: no rule approves it", segs: "none"},
		{name: "agent allow: another subcommand is not covered",
			agentAllow: lint, cmd: "pnpm publish", want: RA, reason: "default: no rule approves it", segs: "none"},
		{name: "agent allow: the file's allow is named first",
			allow: lint, agentAllow: lint, cmd: "pnpm lint", want: A, reason: "permissions.json allow: Terminal(pnpm lint)", segs: "allow"},
		{name: "agent allow: the file's deny still wins",
			deny: lint, agentAllow: lint, cmd: "pnpm lint", want: D, reason: "permissions.json deny: Terminal(pnpm lint)", segs: "deny"},
		{name: "agent allow: the built-in deny still wins",
			agentAllow: []string{"Terminal(rm)"}, cmd: "rm -rf /", want: D, reason: "built-in deny: Terminal(rm -rf /)", segs: "deny"},
		{name: "agent allow: the file's ask still asks",
			ask: lint, agentAllow: lint, cmd: "pnpm lint", want: RA, reason: "permissions.json ask: Terminal(pnpm lint)", segs: "ask"},
		{name: "agent allow: never by basename",
			agentAllow: lint, cmd: "./pnpm lint", want: RA, reason: "default: no rule approves it", segs: "none"},
		{name: "agent allow: an opaque program stays opaque",
			agentAllow: lint, cmd: "$x lint", want: RA, reason: "default: no rule approves it", segs: "opaque"},
		{name: "agent allow: a protected write is still capped",
			agentAllow: []string{"Terminal(echo)"}, cmd: "echo '{}' > permissions.json", want: RA, reason: "protected: ", segs: "allow"},
		{name: "agent allow: an external effect is still capped",
			agentAllow: []string{"Terminal(git)"}, cmd: "git push origin main", want: RA, reason: "cap: external-effect git push", segs: "allow"},
		{name: "agent allow: a path outside the project is still capped",
			agentAllow: []string{"Terminal(cat)"}, cmd: "cat /etc/hostname", want: RA, reason: "scope: ", segs: "allow"},
		{name: "agent allow: the read-only guard holds for a seeded pattern's content",
			agentAllow: []string{"Terminal(git branch -a)"}, cmd: "git branch -a -D main", want: RA, reason: "default: no rule approves it", segs: "none",
			rules: []string{"Terminal(git branch -a) only covers reading"}},
		{name: "agent allow: a compound line needs every segment allowed",
			agentAllow: lint, cmd: "pnpm lint && curl x", want: RA, reason: `compound: the segment "curl x" has no rule`, segs: "allow none"},
		{name: "agent allow: the file and the agent together allow a compound line, each named",
			allow: []string{"Terminal(ls)"}, agentAllow: lint, cmd: "ls && pnpm lint", want: A,
			reason: "permissions.json allow: Terminal(ls); agent allow: Terminal(pnpm lint)", segs: "allow allow"},
		{name: "agent allow: an invalid file approves nothing",
			file: `{"allow": "Terminal(ls)"}`, agentAllow: lint, cmd: "pnpm lint", want: RA, reason: "permissions.json invalid", segs: "none"},
		{name: "agent allow: a denied program in auto mode is still denied",
			deny: []string{"Terminal(curl)"}, agentAllow: []string{"Terminal(curl)"}, auto: true, cmd: "curl x", want: D,
			reason: "permissions.json deny: Terminal(curl)", segs: "deny"},
	})
}
