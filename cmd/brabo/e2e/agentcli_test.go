package e2e

// Shared by the tests that drive the real agent CLIs (Claude Code, Codex,
// Gemini CLI) against a real `brabo serve`, each talking only to a scripted
// model server on 127.0.0.1, in temporary folders with a temporary HOME.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/internal/agenttest"
)

// agentProject is a brabo project guarded by an agent's hook.
type agentProject struct {
	srv     *server
	data    string
	admin   string
	project string
	root    string
	home    string // the agents' HOME
	xdg     string // XDG_CONFIG_HOME: where the hook's configuration lives
}

// newAgentProject starts brabo serve, makes a local project with the
// permissions given, and a home for the agent.
func newAgentProject(t *testing.T, permissions string) *agentProject {
	t.Helper()
	base := t.TempDir()
	ap := &agentProject{data: filepath.Join(base, "data"), root: filepath.Join(base, "proj"),
		home: filepath.Join(base, "home"), xdg: filepath.Join(base, "home", ".config")}
	for _, d := range []string{ap.root, ap.home, ap.xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ap.root, "permissions.json"), []byte(permissions), 0o644); err != nil {
		t.Fatal(err)
	}
	ap.srv = startServe(t, ap.data)
	ap.admin = ap.srv.token
	p := ap.srv.must(t, "POST", "/v1/projects", ap.admin, map[string]any{"slug": "agents", "mode": "local", "root": ap.root}, 201)
	ap.project = p["id"].(string)
	return ap
}

// env is the environment an agent CLI and brabo install run with: only
// what they need, a temporary HOME, and no proxy.
func (ap *agentProject) env(extra ...string) []string {
	return append([]string{"HOME=" + ap.home, "XDG_CONFIG_HOME=" + ap.xdg, "PATH=/usr/local/bin:/usr/bin:/bin",
		"SHELL=/bin/bash", "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1"}, extra...)
}

// install runs brabo install for the agent, with the hook's wait short.
func (ap *agentProject) install(t *testing.T, agent string, wait time.Duration, extra []string, env ...string) string {
	t.Helper()
	// The project by its slug: install finds its id.
	args := append([]string{"install", agent, "--url", ap.srv.url, "--project", "agents", "--root", ap.root,
		"--wait", wait.String()}, extra...)
	cmd := exec.Command(braboBin, args...)
	cmd.Env = append(ap.env(env...), "BRABO_TOKEN="+ap.admin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("brabo install %s: %v\n%s", agent, err, out)
	}
	return string(out)
}

// runAgent runs an agent CLI in the project folder until it exits (at most
// limit) and returns what it printed.
func (ap *agentProject) runAgent(t *testing.T, limit time.Duration, env []string, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = ap.root
	cmd.Env = env
	cmd.Stdin = nil
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s did not end within %s:\n%s", filepath.Base(bin), limit, out)
	}
	return string(out), err
}

// actions lists the project's actions, newest first (none when brabo
// does not answer: it may be stopped on purpose).
func (ap *agentProject) actions() []map[string]any {
	status, out, err := ap.srv.call("GET", "/v1/projects/"+ap.project+"/actions?limit=1000", ap.admin, nil)
	if err != nil || status != 200 {
		return nil
	}
	var list []map[string]any
	for _, a := range out["actions"].([]any) {
		list = append(list, a.(map[string]any))
	}
	return list
}

// action finds the newest action whose command (or path, or tool) holds
// text.
func (ap *agentProject) action(text string) map[string]any {
	for _, a := range ap.actions() {
		p, _ := a["payload"].(map[string]any)
		for _, k := range []string{"command", "path", "tool"} {
			if s, _ := p[k].(string); s != "" && strings.Contains(s, text) {
				return a
			}
		}
	}
	return nil
}

// events returns the types of the events of one action, in order, with
// their actors.
func (ap *agentProject) events(t *testing.T, actionID string) []string {
	t.Helper()
	out := ap.srv.must(t, "GET", "/v1/projects/"+ap.project+"/events?limit=1000", ap.admin, nil, 200)
	var evs []string
	for _, e := range out["events"].([]any) {
		m := e.(map[string]any)
		if m["actionId"] == actionID {
			evs = append(evs, fmt.Sprintf("%s by %s", m["type"], m["actorId"]))
		}
	}
	return evs
}

// decideWhenPending waits (in the background) for a pending action whose
// command holds text, then approves it (reason "") or denies it with the
// reason, as the admin through the API. The returned channel gets the
// action's id, or "" when none came within limit.
func (ap *agentProject) decideWhenPending(t *testing.T, text, reason string, limit time.Duration) <-chan string {
	done := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(limit)
		for time.Now().Before(deadline) {
			status, out, err := ap.srv.call("GET", "/v1/queue", ap.admin, nil)
			if err == nil && status == 200 {
				for _, a := range out["actions"].([]any) {
					m := a.(map[string]any)
					p, _ := m["payload"].(map[string]any)
					s := fmt.Sprint(p["command"], p["path"], p["tool"])
					if strings.Contains(s, text) {
						id := m["id"].(string)
						if reason == "" {
							ap.srv.call("POST", "/v1/actions/"+id+"/approve", ap.admin, nil)
						} else {
							ap.srv.call("POST", "/v1/actions/"+id+"/deny", ap.admin, map[string]any{"reason": reason})
						}
						done <- id
						return
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		done <- ""
	}()
	return done
}

// hookPIDs finds the running hook processes of this project (their command
// line names its configuration): the test's own processes.
func (ap *agentProject) hookPIDs() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(string(b), "\x00")
		cmd := strings.Join(argv, " ")
		// The hook itself, not the shell the agent starts it with.
		if filepath.Base(argv[0]) == "brabo-hook" && strings.Contains(cmd, ap.xdg) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killHookWhenPending kills the hook process once an action whose command
// holds text is pending (the hook is then waiting for a human).
func (ap *agentProject) killHookWhenPending(t *testing.T, text string, limit time.Duration) <-chan bool {
	done := make(chan bool, 1)
	go func() {
		deadline := time.Now().Add(limit)
		for time.Now().Before(deadline) {
			if a := ap.action(text); a != nil && a["status"] == "pending" {
				time.Sleep(200 * time.Millisecond)
				killed := false
				for _, pid := range ap.hookPIDs() {
					if p, err := os.FindProcess(pid); err == nil && p.Kill() == nil {
						killed = true
					}
				}
				done <- killed
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		done <- false
	}()
	return done
}

// exists reports whether a file of the project exists.
func (ap *agentProject) exists(name string) bool {
	_, err := os.Stat(filepath.Join(ap.root, name))
	return err == nil
}

var _ = agenttest.FinalText

// runBraboEnv runs the binary in dir with env only.
func runBraboEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(braboBin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("brabo %q: %v", args, err)
	}
	return r
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
