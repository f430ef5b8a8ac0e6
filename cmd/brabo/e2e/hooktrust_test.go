package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/agenthook"
)

// The hook decides a read inside the project with the permissions brabo
// decides with, not with the file on disk: a branch
// switch that drops a ReadFile deny leaves the read denied, through the
// real `brabo hook` and the real `brabo serve`, until a maintainer accepts
// the new file.
func TestHookReadsStayDeniedUntilAccept(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real server")
	}
	strict := `{"deny": ["ReadFile(secret.txt)"]}` + "\n"
	ap := newAgentProject(t, strict)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = ap.root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(ap.root, "secret.txt"), []byte("s3cret\n"), 0o644)
	os.WriteFile(filepath.Join(ap.root, "notes.txt"), []byte("hello\n"), 0o644)
	git("init", "--quiet", "--initial-branch=main")
	git("add", "permissions.json", "notes.txt")
	git("commit", "--quiet", "-m", "strict")
	git("checkout", "--quiet", "-b", "loose")
	os.WriteFile(filepath.Join(ap.root, "permissions.json"), []byte("{}\n"), 0o644)
	git("commit", "--quiet", "-am", "drop the deny")
	git("checkout", "--quiet", "main")

	ag := ap.srv.must(t, "POST", "/v1/projects/"+ap.project+"/agents", ap.admin, map[string]any{"name": "claude", "kind": "hook"}, 201)
	cfg := filepath.Join(ap.xdg, "brabo", "hooks", "claude.json")
	b, _ := json.Marshal(agenthook.Config{Server: ap.srv.url, Agent: "claude", WaitSeconds: 5,
		Projects: []agenthook.ProjectConfig{{ID: ap.project, Root: ap.root, Token: ag["token"].(string)}}})
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(name string) (int, string) {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": "s", "tool_use_id": "u-" + name, "cwd": ap.root,
			"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": map[string]any{"file_path": filepath.Join(ap.root, name)}})
		cmd := exec.Command(braboBin, "hook", "claude", "pre-tool-use", "--config", cfg)
		cmd.Env = ap.env()
		cmd.Stdin = bytes.NewReader(in)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String() + errOut.String()
	}
	allowed := func(code int, out string) bool {
		return code == 0 && strings.Contains(out, `"permissionDecision":"allow"`)
	}

	if code, out := read("notes.txt"); !allowed(code, out) {
		t.Fatalf("a read of notes.txt inside the project: exit %d %s", code, out)
	}
	if code, out := read("secret.txt"); allowed(code, out) || !strings.Contains(out, "denied") {
		t.Fatalf("a read of the denied secret.txt: exit %d %s", code, out)
	}

	// The branch switch drops the deny on disk: the read stays denied.
	git("checkout", "--quiet", "loose")
	for range 2 {
		if code, out := read("secret.txt"); allowed(code, out) || !strings.Contains(out, "denied") {
			t.Fatalf("after the branch switch dropped the deny, a read of secret.txt: exit %d %s", code, out)
		}
	}
	st := ap.srv.must(t, "GET", "/v1/projects/"+ap.project+"/permissions/trust", ap.admin, nil, 200)
	if st["status"] != "held" {
		t.Fatalf("trust state after the switch: %v", st)
	}
	if code, out := read("notes.txt"); !allowed(code, out) {
		t.Fatalf("a read of notes.txt after the switch: exit %d %s", code, out)
	}

	// A maintainer accepts the file: the read is the file's to allow now.
	ap.srv.must(t, "POST", "/v1/projects/"+ap.project+"/permissions/accept", ap.admin, map[string]any{"hash": st["diskHash"]}, 200)
	if code, out := read("secret.txt"); !allowed(code, out) {
		t.Fatalf("after the accept, a read of secret.txt: exit %d %s", code, out)
	}
}
