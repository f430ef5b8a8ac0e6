package brabo_test

import (
	"testing"

	"github.com/brabo-dev/brabo"
)

func TestDecisionSentence(t *testing.T) {
	local := brabo.ScopeRoot{Mode: brabo.ModeLocal, ID: "shop-1a2b3c4d"}
	for _, tc := range []struct {
		name   string
		status brabo.ActionStatus
		reason string
		scope  brabo.ScopeRoot
		want   string
	}{
		{"an allow line auto-approved it (RN-614)", brabo.StatusAutoApproved, "permissions.json allow: Terminal(pnpm test)", brabo.ScopeRoot{},
			"auto-approved: permissions.json allows it (Terminal(pnpm test))"},
		{"the scope root follows the rule, relative", brabo.StatusAutoApproved, "permissions.json allow: Terminal(ls)", local,
			"auto-approved: permissions.json allows it (Terminal(ls)) (scope root: local/shop-1a2b3c4d)"},
		{"a pending action says why it asks", brabo.StatusPending, "default: no rule approves it", brabo.ScopeRoot{},
			"asks a human: nothing in permissions.json allows it"},
		{"a policy denial names the rule", brabo.StatusDenied, "permissions.json deny: Terminal(rm -rf /*)", brabo.ScopeRoot{},
			"denied: permissions.json denies it (Terminal(rm -rf /*))"},
		{"an event without a reason reads not recorded", brabo.StatusAutoApproved, "", brabo.ScopeRoot{}, "not recorded"},
		{"white space is no reason either", brabo.StatusPending, "  ", local, "not recorded (scope root: local/shop-1a2b3c4d)"},
		{"a scope root without a mode shows its id", brabo.StatusPending, "cap: git_push leaves the machine; a human approves every one", brabo.ScopeRoot{ID: "shop"},
			"asks a human: a git_push leaves the machine, and a human approves every one (scope root: shop)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := brabo.DecisionSentence(tc.status, tc.reason, tc.scope); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
