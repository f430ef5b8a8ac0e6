package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// TestAgentCommandOnAnOpenAICompatibleServer runs `brabo agent` with its
// model configured from the environment (BRABO_MODEL, OPENAI_BASE_URL,
// OPENAI_API_KEY) against a server that speaks the Chat Completions wire
// format: the agent takes the task, runs an allowed command, and the
// command's real output is in the next request the server receives.
func TestAgentCommandOnAnOpenAICompatibleServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real processes")
	}
	var calls atomic.Int32
	var sawOutput atomic.Bool
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "unexpected request "+r.URL.Path, 400)
			return
		}
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"fake","choices":[{"index":0,"finish_reason":"tool_calls",
				"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls\"}"}}]}}],
				"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`)
			return
		}
		sawOutput.Store(strings.Contains(string(body), "README.md"))
		fmt.Fprint(w, `{"id":"c2","object":"chat.completion","created":2,"model":"fake","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":"Looked around; done."}}],"usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25}}`)
	}))
	defer llm.Close()

	data, root := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# shop\n"), 0o644)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)"]}`), 0o644)
	gitProject(t, root)
	srv := startServe(t, data)
	admin := srv.token
	project := srv.must(t, "POST", "/v1/projects", admin, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	srv.must(t, "POST", "/v1/projects/"+project+"/agents", admin, map[string]any{"name": "dev-shop"}, 201)
	task := srv.must(t, "POST", "/v1/projects/"+project+"/tasks", admin, map[string]any{"title": "Look around"}, 201)["id"].(string)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()

	agent := exec.Command(braboBin, "agent", "--data", data)
	agent.Env = append(os.Environ(), "BRABO_DB=", "BRABO_MODEL=openai:fake", "OPENAI_BASE_URL="+llm.URL+"/v1", "OPENAI_API_KEY=sk-test")
	agent.Stdout, agent.Stderr = io.Discard, io.Discard
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { agent.Process.Signal(syscall.SIGTERM); agent.Wait() }()

	store, err := sqlite.Open(context.Background(), filepath.Join(data, "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	waitFor(t, "the agent to finish the task", func() string {
		var got *brabo.Task
		store.View(context.Background(), func(tx brabo.Tx) error {
			var err error
			got, err = tx.Task(context.Background(), task)
			return err
		})
		if got != nil && got.Status == brabo.TaskBlocked {
			b, _ := json.Marshal(got)
			t.Fatalf("the task was blocked: %s", b)
		}
		if got != nil && got.Status == brabo.TaskDone {
			return "done"
		}
		return ""
	})
	if calls.Load() != 2 || !sawOutput.Load() {
		t.Fatalf("the model was called %d times; the ls output reached it: %v", calls.Load(), sawOutput.Load())
	}
}
