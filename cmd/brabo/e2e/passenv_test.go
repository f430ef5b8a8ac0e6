package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --pass-env never hands a command one of brabo's secrets:
// `brabo serve` refuses, at start, a name brabo holds a secret in or a
// variable holding the value of one; and with an ordinary name passed, an
// approved `env` run through the real server shows none of the secrets the
// server's environment holds.
func TestServePassEnvRefusesSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	const dbURL = "postgres://brabo:s3cret@127.0.0.1:1/brabo"
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"BRABO_DB", []string{"BRABO_DB="}, []string{"--pass-env", "PATH,BRABO_DB"}},
		{"OPENAI_API_KEY", nil, []string{"--pass-env", "OPENAI_API_KEY"}},
		{"ANTHROPIC_API_KEY", nil, []string{"--pass-env", " ANTHROPIC_API_KEY "}},
		{"DATABASE_URL", nil, []string{"--pass-env", "DATABASE_URL"}},
		{"SHOP_DATABASE_URL", nil, []string{"--pass-env", "SHOP_DATABASE_URL"}},
		{"PGPASSWORD", nil, []string{"--pass-env", "PGPASSWORD"}},
		{"BRABO_TOKEN", []string{"BRABO_PASS_ENV=BRABO_TOKEN"}, nil},
		// Another name holding the database URL given with --db.
		{"MY_DB", []string{"MY_DB=" + dbURL}, []string{"--pass-env", "MY_DB", "--db", dbURL}},
		// Or holding a model's key.
		{"KEY_COPY", []string{"OPENAI_API_KEY=sk-brabo-secret", "KEY_COPY=sk-brabo-secret"}, []string{"--pass-env", "KEY_COPY"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, braboBin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)...)
		cmd.Env = append(append(os.Environ(), "BRABO_DB=", "BRABO_PASS_ENV="), c.env...)
		out, _ := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("%s: brabo serve started: it was not refused\n%s", c.name, out)
		}
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(out), "--pass-env "+c.name) ||
			!strings.Contains(string(out), "pass_env_secret") {
			t.Errorf("%s: exit %d, want %d naming --pass-env %s with pass_env_secret\n%s", c.name, code, exitUsage, c.name, out)
		}
		if strings.Contains(string(out), "s3cret") || strings.Contains(string(out), "sk-brabo-secret") {
			t.Errorf("%s: the refusal prints the secret\n%s", c.name, out)
		}
	}

	// An ordinary name passes; the server's secrets never reach a command.
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(env)"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets := []string{"OPENAI_API_KEY=sk-brabo-secret-1", "ANTHROPIC_API_KEY=sk-brabo-secret-2",
		"DATABASE_URL=postgres://u:brabo-secret-3@h/db", "PGPASSWORD=brabo-secret-4", "BRABO_TOKEN=brb_brabo-secret-5",
		"SHOP_DATABASE_URL=postgres://u:brabo-secret-6@h/db"}
	srv := startServeEnv(t, t.TempDir(), append(secrets, "SHOP_FLAG=passed-through"), "--pass-env", "SHOP_FLAG")
	project := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "env", "mode": "local", "root": root}, 201)["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", srv.token, map[string]any{"name": "coder"}, 201)["token"].(string)
	a := srv.must(t, "POST", "/v1/projects/"+project+"/actions", agent, map[string]any{"type": "terminal", "payload": map[string]any{"command": "env"}}, 201)
	res, _ := a["result"].(map[string]any)
	output, _ := res["output"].(string)
	if a["status"] != "executed" || !strings.Contains(output, "SHOP_FLAG=passed-through") {
		t.Fatalf("env through the server: %v %v", a["status"], a["result"])
	}
	if strings.Contains(output, "brabo-secret") {
		t.Errorf("a secret of the server reached the command:\n%s", output)
	}
}
