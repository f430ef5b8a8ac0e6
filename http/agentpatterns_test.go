package http

import (
	"encoding/json"
	"testing"

	"github.com/brabo-dev/brabo"
)

// The session log says what an autonomy.changed changed, and how.
func TestAutonomySentence(t *testing.T) {
	for _, c := range []struct {
		change brabo.AutonomyChange
		want   string
	}{
		{brabo.AutonomyChange{Via: brabo.ViaAPI, ActionType: brabo.GitCommit, Mode: brabo.AutoApprove},
			"agent_autonomy git_commit: auto_approve set (api)"},
		{brabo.AutonomyChange{Via: brabo.ViaWeb, ActionType: brabo.AnyActionType, Mode: brabo.RequireApproval, PreviousMode: brabo.AutoApprove},
			"agent_autonomy *: auto_approve → require_approval (web)"},
		{brabo.AutonomyChange{Via: brabo.ViaAlwaysAllow, Added: []string{"Terminal(pnpm lint)", "Terminal(cat)"}},
			"the agent's own patterns gained Terminal(pnpm lint), Terminal(cat) (always allow)"},
		{brabo.AutonomyChange{Via: brabo.ViaAPI, Removed: []string{"Terminal(cat)"}},
			"the agent's own patterns lost Terminal(cat) (api)"},
		{brabo.AutonomyChange{Via: brabo.ViaMigration, ActionType: brabo.Terminal, PreviousMode: brabo.AutoApprove, Added: []string{"Terminal(make)"}},
			"agent_autonomy terminal: auto_approve removed; the agent's own patterns gained Terminal(make) (migration)"},
	} {
		raw, _ := json.Marshal(c.change)
		e := brabo.Event{Type: brabo.EventAutonomyChanged, Payload: raw}
		if got := eventSentence(e); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", raw, got, c.want)
		}
	}
}
