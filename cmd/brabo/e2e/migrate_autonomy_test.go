package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// `brabo serve` turns, at start, a blanket terminal: auto_approve rule an
// old always-allow click wrote into the clicked unit, as the agent's own
// pattern (pipeline.MigrateClickAutonomy), before it decides anything.
func TestServeMigratesClickWrittenTerminalRules(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	data, root := t.TempDir(), t.TempDir()
	srv := startServe(t, data)
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	ag := srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-web"}, 201)
	token, agentID := ag["token"].(string), ag["agent"].(map[string]any)["id"].(string)
	clicked := srv.must(t, "POST", "/v1/projects/"+project+"/actions", token,
		map[string]any{"type": "terminal", "payload": map[string]any{"command": "pnpm lint"}}, 201)["id"].(string)
	admins := srv.must(t, "GET", "/v1/me", admin, nil, 200)["member"].(map[string]any)["id"].(string)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()

	// What the click wrote before the agents' own patterns existed, written the old way.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(data, "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"agentId": agentID, "actionType": "terminal", "actionId": clicked})
	err = st.Update(ctx, func(tx brabo.Tx) error {
		if err := tx.PutAutonomy(ctx, brabo.AgentAutonomy{AgentID: agentID, ActionType: brabo.Terminal, Mode: brabo.AutoApprove}); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, &brabo.Event{ProjectID: project, Type: brabo.EventPermissionGranted,
			ActorID: admins, ActionID: clicked, Payload: payload})
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	srv = startServe(t, data)
	auto := srv.must(t, "GET", "/v1/projects/"+project+"/agents/"+agentID+"/autonomy", admin, nil, 200)
	if rules, _ := auto["autonomy"].([]any); len(rules) != 0 {
		t.Fatalf("the blanket rule survived the start: %v", rules)
	}
	patterns, _ := srv.must(t, "GET", "/v1/projects/"+project+"/agents/"+agentID+"/patterns", admin, nil, 200)["patterns"].([]any)
	if len(patterns) != 1 || patterns[0].(map[string]any)["pattern"] != "Terminal(pnpm lint)" {
		t.Fatalf("patterns after the start: %v", patterns)
	}
	free := srv.must(t, "POST", "/v1/projects/"+project+"/actions", token,
		map[string]any{"type": "terminal", "payload": map[string]any{"command": "touch free.txt"}}, 201)
	if free["status"] != "pending" {
		t.Fatalf("after the start dev-web's other commands should ask: %v", free)
	}
}
