package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/agenthook"
)

// TestTheAgentReadsTheCardsSentence runs the real hook (Claude Code's
// PreToolUse) against the real server: the agent reads the sentence the
// card and the API give (reasonText), a human's denial with their name,
// and an approval that does not repeat why the call was held.
func TestTheAgentReadsTheCardsSentence(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		t.Setenv("TMPDIR", t.TempDir())
		t.Setenv("SHELL", "/bin/bash")
		t.Setenv("CLAUDE_CODE_SHELL", "")
		e.setPermissions(`{"deny": ["Terminal(touch:*)"]}`)
		cfg := filepath.Join(t.TempDir(), "hook.json")
		b, _ := json.Marshal(agenthook.Config{Server: e.srv.URL, WaitSeconds: 30,
			Projects: []agenthook.ProjectConfig{{ID: e.project, Root: e.root, Token: e.agent}}})
		os.WriteFile(cfg, b, 0o600)
		hook := func(command string) (reason, banner string) {
			in, _ := json.Marshal(map[string]any{"session_id": "s", "tool_use_id": "u-" + command, "cwd": e.root,
				"tool_name": "Bash", "tool_input": map[string]any{"command": command}})
			var out, errOut bytes.Buffer
			agenthook.Run([]string{"claude", "pre-tool-use", "--config", cfg}, bytes.NewReader(in), &out, &errOut)
			var ans struct {
				Out struct {
					Decision string `json:"permissionDecision"`
					Reason   string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			json.Unmarshal(out.Bytes(), &ans)
			return ans.Out.Decision + " " + ans.Out.Reason, errOut.String()
		}
		// decideWhenPending decides the pending action of command as the
		// maintainer once the hook has proposed it.
		decideWhenPending := func(command, how string, body map[string]any) chan string {
			done := make(chan string, 1)
			go func() {
				for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					_, q := e.call("GET", "/v1/queue", e.maintainer, nil)
					for _, x := range anyList(q["actions"]) {
						a := x.(map[string]any)
						if str(a, "payload", "command") == command {
							if how == "approve" {
								// The card the maintainer saw in the queue.
								body = map[string]any{"revision": a["revision"]}
							}
							e.call("POST", "/v1/actions/"+a["id"].(string)+"/"+how, e.maintainer, body)
							done <- a["reasonText"].(string)
							return
						}
					}
				}
				done <- ""
			}()
			return done
		}
		reasonOf := func(command string) string {
			for _, x := range anyList(e.ok("GET", e.pp("/actions"), e.admin, nil, 200)["actions"]) {
				if a := x.(map[string]any); str(a, "payload", "command") == command {
					return a["reasonText"].(string)
				}
			}
			return ""
		}

		got, _ := hook("touch x")
		if want := "deny brabo: denied: permissions.json denies `touch x` (Terminal(touch:*))"; got != want || got != "deny brabo: "+reasonOf("touch x") {
			t.Errorf("denied by a rule, the agent reads %q, want %q (the card's %q)", got, want, reasonOf("touch x"))
		}
		pending := decideWhenPending("pnpm lint", "deny", map[string]any{"reason": "not today"})
		got, _ = hook("pnpm lint")
		if held := <-pending; got != "deny brabo: denied by mia: not today" || held == "" {
			t.Errorf("denied by a human, the agent reads %q", got)
		}
		pending = decideWhenPending("pnpm build", "approve", map[string]any{})
		got, banner := hook("pnpm build")
		held := <-pending
		if got != "allow brabo: approved by mia" || strings.Contains(got, "permissions.json") {
			t.Errorf("approved by a human, the agent reads %q", got)
		}
		// While it waited, the hook said the card's sentence where the
		// agent's user reads it.
		if !strings.Contains(banner, "brabo: "+held+" — it waits for a human: approve or deny it at "+e.srv.URL+"/ui/actions/act_") {
			t.Errorf("the wait's banner %q does not give the card's sentence %q", banner, held)
		}
	})
}

func anyList(v any) []any { l, _ := v.([]any); return l }
