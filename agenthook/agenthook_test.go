package agenthook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/client"
)

func TestPatchFiles(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a/new.txt\n+hello\n+world\n*** Update File: b.go\n@@\n-x\n+y\n*** Move to: c.go\n*** Delete File: d.md\n*** End Patch\n"
	got, err := patchFiles(patch)
	if err != nil {
		t.Fatal(err)
	}
	want := []patchFile{{"a/new.txt", "hello\nworld\n"}, {"b.go", "(moved to c.go)"}, {"c.go", "@@\n-x\n+y\n"}, {"d.md", "(deleted)"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q", got)
	}
	for _, bad := range []string{"", "*** Begin Patch\n*** End Patch", "*** Begin Patch\n*** Add File: x\n+y\n"} {
		if _, err := patchFiles(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// The tool tables: what each agent's tool becomes in brabo.
func TestRequests(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "f.txt"), []byte("one two one"), 0o644)
	os.Symlink(filepath.Join(root, "f.txt"), filepath.Join(root, "link.txt"))
	outside := t.TempDir()
	os.Symlink(filepath.Join(outside, "target"), filepath.Join(root, "escape"))
	t.Setenv("SHELL", "/bin/bash")
	t.Setenv("CLAUDE_CODE_SHELL", "")
	type tc struct {
		agent, tool, input string
		kind               kind
		typ                brabo.ActionType
		path, command      string
		content            string
		nonBash            bool
	}
	for _, c := range []tc{
		{agent: "claude", tool: "Bash", input: `{"command":"ls -la"}`, kind: kindShell, typ: brabo.Terminal, command: "ls -la"},
		{agent: "claude", tool: "PowerShell", input: `{"command":"Get-ChildItem"}`, kind: kindShell, typ: brabo.Terminal, command: "Get-ChildItem", nonBash: true},
		{agent: "claude", tool: "Write", input: `{"file_path":"` + root + `/n.txt","content":"x"}`, kind: kindWrite, typ: brabo.WriteFile, path: "n.txt", content: "x"},
		{agent: "claude", tool: "Edit", input: `{"file_path":"` + root + `/link.txt","old_string":"one","new_string":"1"}`, kind: kindEdit, typ: brabo.WriteFile, path: "f.txt", content: "1 two one"},
		{agent: "claude", tool: "Edit", input: `{"file_path":"f.txt","old_string":"one","new_string":"1","replace_all":true}`, kind: kindEdit, typ: brabo.WriteFile, path: "f.txt", content: "1 two 1"},
		{agent: "claude", tool: "Write", input: `{"file_path":"` + root + `/escape","content":"x"}`, kind: kindWrite, typ: brabo.WriteFile, path: filepath.Join(outside, "target"), content: "x"},
		{agent: "claude", tool: "Read", input: `{"file_path":"/etc/hosts"}`, kind: kindRead, typ: brabo.ReadFile, path: "/etc/hosts"},
		{agent: "claude", tool: "Glob", input: `{"pattern":"*.go"}`, kind: kindRead, typ: brabo.ReadFile, path: "."},
		{agent: "claude", tool: "mcp__github__create_issue", input: `{"title":"x"}`, kind: kindMcp, typ: brabo.McpTool},
		{agent: "claude", tool: "TodoWrite", input: `{}`, kind: kindPass},
		{agent: "claude", tool: "WebFetch", input: `{"url":"https://x"}`, kind: kindUnknown},
		{agent: "codex", tool: "Bash", input: `{"command":"echo hi"}`, kind: kindShell, typ: brabo.Terminal, command: "echo hi"},
		{agent: "codex", tool: "exec_command", input: `{"cmd":"echo hi","workdir":"sub"}`, kind: kindShell, typ: brabo.Terminal, command: "echo hi"},
		{agent: "codex", tool: "shell", input: `{"command":["bash","-lc","git status"]}`, kind: kindShell, typ: brabo.Terminal, command: "git status"},
		{agent: "gemini", tool: "run_shell_command", input: `{"command":"make"}`, kind: kindShell, typ: brabo.Terminal, command: "make"},
		{agent: "gemini", tool: "replace", input: `{"file_path":"f.txt","old_string":"two","new_string":"2"}`, kind: kindEdit, typ: brabo.WriteFile, path: "f.txt", content: "one 2 one"},
		{agent: "gemini", tool: "save_memory", input: `{"fact":"x"}`, kind: kindUnknown},
	} {
		in := &hookInput{ToolName: c.tool, ToolInput: json.RawMessage(c.input), Cwd: root}
		reqs, k, err := requests(c.agent, in, root)
		if err != nil || k != c.kind {
			t.Errorf("%s %s: kind %v err %v, want %v", c.agent, c.tool, k, err, c.kind)
			continue
		}
		if c.typ == "" {
			if len(reqs) != 0 {
				t.Errorf("%s %s: %v", c.agent, c.tool, reqs)
			}
			continue
		}
		if len(reqs) != 1 || reqs[0].typ != c.typ || reqs[0].nonBash != c.nonBash {
			t.Errorf("%s %s: %+v", c.agent, c.tool, reqs)
			continue
		}
		p := reqs[0].payload
		if c.path != "" && p.Path != c.path || c.command != "" && p.Command != c.command || c.content != "" && p.Content != c.content {
			t.Errorf("%s %s: payload %+v, want path %q command %q content %q", c.agent, c.tool, p, c.path, c.command, c.content)
		}
	}
	if got := PassThroughTools("claude"); !strings.Contains(strings.Join(got, " "), "TodoWrite") {
		t.Errorf("pass-through tools %v", got)
	}
}

// fakeBrabo answers proposals with the statuses given per command, and
// records the reports.
type fakeBrabo struct {
	mu       sync.Mutex
	statuses map[string]brabo.ActionStatus
	reports  []map[string]any
}

func (f *fakeBrabo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch {
	case strings.HasSuffix(r.URL.Path, "/actions"):
		var p client.Proposal
		json.Unmarshal(body, &p)
		st := f.statuses[p.Payload.Command]
		json.NewEncoder(w).Encode(brabo.ProposedAction{ID: "act_1", Status: st, Reason: "rule for " + p.Payload.Command})
	case strings.HasSuffix(r.URL.Path, "/result"):
		m := map[string]any{}
		json.Unmarshal(body, &m)
		f.reports = append(f.reports, m)
		w.Write([]byte(`{}`))
	case strings.HasSuffix(r.URL.Path, "/wait"):
		json.NewEncoder(w).Encode(brabo.ProposedAction{ID: "act_1", Status: brabo.StatusPending})
	}
}

func hookRun(t *testing.T, cfg string, input string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Run(append(args, "--config", cfg), strings.NewReader(input), &out, &errOut)
	return code, out.String(), errOut.String()
}

// Each agent's answer format, and every failure a deny.
func TestRunAnswers(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("SHELL", "/bin/bash")
	t.Setenv("CLAUDE_CODE_SHELL", "")
	root := t.TempDir()
	fb := &fakeBrabo{statuses: map[string]brabo.ActionStatus{"ok": brabo.StatusAutoApproved, "no": brabo.StatusDenied, "wait": brabo.StatusPending}}
	srv := httptest.NewServer(fb)
	defer srv.Close()
	cfg := filepath.Join(t.TempDir(), "c.json")
	writeConfig(cfg, &Config{Server: srv.URL, WaitSeconds: 1, Projects: []ProjectConfig{{ID: "p", Root: root, Token: "t"}}})
	call := func(tool, cmd string) string {
		return `{"session_id":"s","tool_use_id":"u-` + cmd + `","cwd":"` + root + `","tool_name":"` + tool + `","tool_input":{"command":"` + cmd + `"}}`
	}
	for _, c := range []struct {
		args       []string
		input      string
		code       int
		out, sterr string
	}{
		{[]string{"claude", "pre-tool-use"}, call("Bash", "ok"), 0, `"permissionDecision":"allow"`, ""},
		{[]string{"claude", "pre-tool-use"}, call("Bash", "no"), 0, `"permissionDecision":"deny","permissionDecisionReason":"brabo: denied: rule for no"`, "brabo: denied: rule for no"},
		{[]string{"claude", "pre-tool-use"}, call("Bash", "wait"), 0, `"permissionDecision":"deny"`, "no one decided within 1s"},
		{[]string{"claude", "pre-tool-use"}, call("WebFetch", "x"), 0, `"permissionDecision":"deny"`, "not one brabo knows"},
		{[]string{"claude", "pre-tool-use"}, call("TodoWrite", "x"), 0, "", ""},
		{[]string{"claude", "pre-tool-use"}, `not json`, 0, `"permissionDecision":"deny"`, "not the JSON"},
		{[]string{"claude", "permission-request"}, call("Bash", "ok"), 0, `"behavior":"allow"`, ""},
		{[]string{"claude", "permission-request"}, call("Bash", "no"), 2, `"behavior":"deny"`, "brabo: denied: rule for no"},
		{[]string{"codex", "pre-tool-use"}, call("Bash", "ok"), 0, "", ""},
		{[]string{"codex", "pre-tool-use"}, call("Bash", "no"), 2, "", "brabo: denied: rule for no"},
		{[]string{"gemini", "before-tool"}, call("run_shell_command", "ok"), 0, `"decision":"allow"`, ""},
		{[]string{"gemini", "before-tool"}, call("run_shell_command", "no"), 2, "", "brabo: denied: rule for no"},
		{[]string{"claude", "no-such-event"}, call("Bash", "ok"), 2, "", "unknown agent or event"},
	} {
		code, out, errOut := hookRun(t, cfg, c.input, c.args...)
		if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.sterr) {
			t.Errorf("%v %s: exit %d out %q err %q", c.args, c.input, code, out, errOut)
		}
	}
	// The after-tool event reports what the before-tool event got approved.
	hookRun(t, cfg, call("Bash", "ok"), "claude", "pre-tool-use")
	post := strings.TrimSuffix(call("Bash", "ok"), "}") + `,"tool_response":{"stdout":"fine","stderr":"","interrupted":false}}`
	if code, _, _ := hookRun(t, cfg, post, "claude", "post-tool-use"); code != 0 || len(fb.reports) != 1 || fb.reports[0]["output"] != "fine" || fb.reports[0]["exitCode"] != 0.0 {
		t.Fatalf("report: %v", fb.reports)
	}
	// A server that is not there: a deny, at once.
	srv.Close()
	start := time.Now()
	if code, _, errOut := hookRun(t, cfg, call("Bash", "ok"), "codex", "pre-tool-use"); code != 2 || !strings.Contains(errOut, "cannot be reached") || time.Since(start) > 5*time.Second {
		t.Errorf("brabo down: exit %d %q", code, errOut)
	}
	// No configuration: a deny.
	// The model reads that the configuration cannot be read, not its path.
	if code, _, errOut := hookRun(t, filepath.Join(t.TempDir(), "none.json"), call("Bash", "ok"), "codex", "pre-tool-use"); code != 2 || !strings.Contains(errOut, "configuration") || strings.Contains(errOut, "none.json") {
		t.Errorf("no configuration: exit %d %q", code, errOut)
	}
}

// Install keeps the user's other settings, is idempotent, and uninstall
// removes only what it wrote.
func TestInstallClaudeAndGeminiKeepOtherSettings(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GEMINI_CLI_HOME", t.TempDir())
	// The settings files are what this test reads; the hook agent's life
	// in a real brabo is cmd/brabo's TestInstallIsIdempotentAndAtomic.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/agents"):
			w.Write([]byte(`{"agents":[]}`))
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/agents"):
			w.WriteHeader(201)
			w.Write([]byte(`{"agent":{"id":"agt_1","kind":"hook"},"token":"brb_hook"}`))
		default:
			w.WriteHeader(204)
		}
	}))
	defer srv.Close()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	mine := `{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"/usr/local/bin/my-lint"}]}]},"env":{"FOO":"1"}}`
	os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(mine), 0o644)
	o := InstallOptions{Server: srv.URL, Token: "brb_admin", ProjectID: "prj_1", Root: root,
		HookCommand: []string{"/opt/brabo/brabo-hook"}, Wait: time.Minute}
	for _, agent := range []string{"claude", "claude", "gemini", "gemini"} {
		o.Agent = agent
		if err := Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	settings, _ := readJSONFile(filepath.Join(root, ".claude", "settings.json"))
	b, _ := json.Marshal(settings)
	s := string(b)
	// Five hooks: PreToolUse, PermissionRequest, PostToolUse,
	// PostToolUseFailure and PostToolBatch (a call Claude Code refused
	// itself after brabo allowed it).
	if strings.Count(s, "brabo-hook") != 5 || !strings.Contains(s, "my-lint") || !strings.Contains(s, `"model":"opus"`) ||
		!strings.Contains(s, `"FOO":"1"`) || !strings.Contains(s, "CLAUDE_CODE_SHELL") || !strings.Contains(s, `"timeout":90`) {
		t.Fatalf("claude settings after two installs: %s", s)
	}
	gs, _ := os.ReadFile(filepath.Join(root, ".gemini", "settings.json"))
	if strings.Count(string(gs), "brabo-hook") != 2 || !strings.Contains(string(gs), `"timeout": 90000`) {
		t.Fatalf("gemini settings: %s", gs)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("GEMINI_CLI_HOME"), ".gemini", "policies", "brabo.toml")); err != nil {
		t.Fatal(err)
	}
	o.Uninstall = true
	for _, agent := range []string{"claude", "gemini"} {
		o.Agent = agent
		if err := Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	settings, _ = readJSONFile(filepath.Join(root, ".claude", "settings.json"))
	b, _ = json.Marshal(settings)
	if s := string(b); strings.Contains(s, "brabo") || strings.Contains(s, "CLAUDE_CODE_SHELL") || !strings.Contains(s, "my-lint") || !strings.Contains(s, `"FOO":"1"`) {
		t.Fatalf("after uninstall: %s", s)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("GEMINI_CLI_HOME"), ".gemini", "policies", "brabo.toml")); err == nil {
		t.Fatal("the Gemini policy stayed")
	}
	left, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "brabo", "hooks", "*.json"))
	if len(left) != 0 {
		t.Fatalf("token files left: %v", left)
	}
}
