package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/agenthook"
)

// brabo install is a client command like the others: --url (BRABO_URL),
// the token from BRABO_TOKEN or --token-file, --project as a slug or an
// id, --json, and --scope project|user. Each spelling of the release
// before (--server, --project-id, --token, --addr, the on/off --project)
// still does what it did, and says, once, that it goes away. Claude Code's
// install needs no CLI (it writes JSON settings), so this runs everywhere
// a server starts.
func TestInstallOldAndNewSpellings(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	ap := newAgentProject(t, `{"allow": []}`)
	cfgPath := filepath.Join(ap.xdg, "brabo", "hooks", "claude-"+ap.project+".json")
	settings := filepath.Join(ap.root, ".claude", "settings.json")
	// installed checks what an install into the project's settings did,
	// whatever its spelling: the hook in Claude Code's settings, the hook's
	// configuration naming the server and the project, one live hook agent.
	installed := func(t *testing.T, r result) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("install: %s", r)
		}
		b, err := os.ReadFile(settings)
		if err != nil || !strings.Contains(string(b), "PreToolUse") || !strings.Contains(string(b), cfgPath) {
			t.Fatalf("Claude Code's settings do not run the hook: %v\n%s\n%s", err, b, r)
		}
		cfg, err := agenthook.LoadConfig(cfgPath)
		if err != nil || cfg.Server != ap.srv.url || len(cfg.Projects) != 1 || cfg.Projects[0].ID != ap.project || cfg.PassUnknownFolders {
			t.Fatalf("the hook's configuration: %+v %v\n%s", cfg, err, r)
		}
		agents := ap.hookAgents(t)
		delete(agents, "claude-user") // the user scope's, once that test made it
		if len(agents) != 1 || !agents["claude"] {
			t.Fatalf("hook agents: %v (want claude, live)\n%s", agents, r)
		}
	}
	warnings := func(r result) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimRight(r.stderr, "\n"), "\n") {
			if _, w, ok := strings.Cut(l, ": warning: "); ok {
				out = append(out, w)
			}
		}
		return out
	}
	hostPort := strings.TrimPrefix(ap.srv.url, "http://")
	withToken := ap.env("BRABO_TOKEN=" + ap.admin)

	t.Run("the release before's call: each old spelling warns once and works", func(t *testing.T) {
		r := runBraboEnv(t, ap.root, ap.env(), "install", "claude", "--project", "--server", ap.srv.url, "--token", ap.admin,
			"--project-id", ap.project, "--root", ap.root, "--wait", "8s")
		installed(t, r)
		w := warnings(r)
		for _, old := range []string{"--project without a project is the old spelling of --scope project", "--server is deprecated",
			"--project-id is deprecated", "--token is deprecated"} {
			if n := len(slices.DeleteFunc(slices.Clone(w), func(s string) bool { return !strings.HasPrefix(s, old) })); n != 1 {
				t.Errorf("%d warnings %q, want 1\n%s", n, old, r)
			}
		}
		if len(w) != 4 {
			t.Errorf("warnings: %q, want 4", w)
		}
	})
	t.Run("--project last is the old switch too", func(t *testing.T) {
		r := runBraboEnv(t, ap.root, append(withToken, "BRABO_URL="+ap.srv.url), "install", "claude", "--project-id", ap.project,
			"--root", ap.root, "--project")
		installed(t, r)
		if w := warnings(r); len(w) != 2 || !strings.HasPrefix(w[0], "--project without a project") || !strings.HasPrefix(w[1], "--project-id is deprecated") {
			t.Errorf("warnings: %q\n%s", w, r)
		}
	})
	t.Run("--addr and BRABO_ADDR: the server, with a warning", func(t *testing.T) {
		r := runBraboEnv(t, ap.root, withToken, "install", "claude", "--addr", hostPort, "--project", ap.project, "--root", ap.root)
		installed(t, r)
		if w := warnings(r); len(w) != 1 || !strings.HasPrefix(w[0], "--addr is deprecated") {
			t.Errorf("warnings: %q\n%s", w, r)
		}
		r = runBraboEnv(t, ap.root, append(withToken, "BRABO_ADDR="+hostPort), "install", "claude", "--project", ap.project, "--root", ap.root)
		installed(t, r)
		if w := warnings(r); len(w) != 1 || !strings.HasPrefix(w[0], "BRABO_ADDR is deprecated") {
			t.Errorf("warnings: %q\n%s", w, r)
		}
	})
	t.Run("the new call: --url, the slug, --token-file, --scope project; no warning", func(t *testing.T) {
		tokenFile := filepath.Join(t.TempDir(), "token")
		writeFile(t, tokenFile, ap.admin+"\n")
		r := runBraboEnv(t, ap.root, ap.env(), "install", "claude", "--url", ap.srv.url, "--token-file", tokenFile,
			"--project", "agents", "--scope", "project", "--root", ap.root)
		installed(t, r)
		if r.stderr != "" || !strings.Contains(r.stdout, "re-used the hook agent \"claude\"") {
			t.Errorf("a new call printed on standard error, or made a second agent:\n%s", r)
		}
		// BRABO_URL and BRABO_PROJECT, as the other client commands read them.
		r = runBraboEnv(t, ap.root, append(withToken, "BRABO_URL="+ap.srv.url, "BRABO_PROJECT=agents"), "install", "claude", "--root", ap.root)
		installed(t, r)
		if r.stderr != "" {
			t.Errorf("warnings:\n%s", r)
		}
	})
	t.Run("--json: what is installed now", func(t *testing.T) {
		r := runBraboEnv(t, ap.root, withToken, "install", "claude", "--json", "--url", ap.srv.url, "--project", "agents", "--root", ap.root)
		installed(t, r)
		var ans struct {
			Agent, Scope, Project string
			Uninstalled           bool
			Status                struct {
				Agent, Scope, Config       string
				Installed, OnDisk, Reaches bool
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil || ans.Agent != "claude" || ans.Scope != "project" || ans.Project != ap.project ||
			ans.Uninstalled || !ans.Status.Installed || !ans.Status.OnDisk || !ans.Status.Reaches || ans.Status.Config != cfgPath {
			t.Fatalf("install --json: %+v %v\n%s", ans, err, r)
		}
		r = runBraboEnv(t, ap.root, ap.env(), "install", "claude", "--status", "--json", "--root", ap.root)
		var st struct {
			Status []struct {
				Agent, Scope       string
				Installed, Reaches bool
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &st); r.code != 0 || err != nil || len(st.Status) != 2 ||
			st.Status[0].Scope != "project" || !st.Status[0].Installed || !st.Status[0].Reaches || st.Status[1].Scope != "user" || st.Status[1].Installed {
			t.Fatalf("install --status --json: %+v %v\n%s", st, err, r)
		}
	})
	t.Run("--scope user and --user: the user's settings", func(t *testing.T) {
		userCfg := filepath.Join(ap.xdg, "brabo", "hooks", "claude-user.json")
		for _, scope := range [][]string{{"--scope", "user"}, {"--user"}} {
			r := runBraboEnv(t, ap.root, withToken, append([]string{"install", "claude", "--url", ap.srv.url, "--project", "agents", "--root", ap.root}, scope...)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("install %q: %s", scope, r)
			}
			cfg, err := agenthook.LoadConfig(userCfg)
			if err != nil || !cfg.PassUnknownFolders || cfg.Projects[0].ID != ap.project {
				t.Fatalf("install %q: the user configuration %+v %v", scope, cfg, err)
			}
			if b, err := os.ReadFile(filepath.Join(ap.home, ".claude", "settings.json")); err != nil || !strings.Contains(string(b), userCfg) {
				t.Fatalf("install %q: the user's settings: %v\n%s", scope, err, b)
			}
		}
		if agents := ap.hookAgents(t); len(agents) != 2 || !agents["claude-user"] {
			t.Fatalf("hook agents: %v (want claude and one claude-user)", agents)
		}
	})
	t.Run("what cannot be done is one line, before any warning", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			env  []string
			code int
			says string
		}{
			{[]string{"--scope", "team"}, nil, exitUsage, `--scope "team": want project or user`},
			{[]string{"--project", "--scope", "user", "--project-id", ap.project}, nil, exitUsage, "--project or --user, not both"},
			{[]string{"--scope", "project", "--user"}, nil, exitUsage, "--scope project or --user, not both"},
			{[]string{"--url", ap.srv.url, "--server", "http://127.0.0.1:1"}, nil, exitUsage, "disagree"},
			{[]string{"--project", "agents", "--project-id", "prj_other"}, nil, exitUsage, "disagree"},
			{[]string{"--token", "brb_x", "--token-file", "/nonexistent"}, nil, exitUsage, "--token or --token-file, not both"},
			// A slug needs the server to find its id, and so a token.
			{[]string{"--url", ap.srv.url, "--project", "agents"}, nil, exitFailure, "--project agents is a slug"},
			{[]string{"--url", ap.srv.url, "--project", "nosuch"}, []string{"BRABO_TOKEN=" + ap.admin}, exitFailure, `no project "nosuch"`},
		} {
			r := runBraboEnv(t, ap.root, ap.env(c.env...), append([]string{"install", "claude", "--root", ap.root}, c.args...)...)
			if r.code != c.code || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.says) || r.stdout != "" {
				t.Errorf("install claude %q: want exit %d and one line saying %q\n%s", c.args, c.code, c.says, r)
			}
		}
		installed(t, runBraboEnv(t, ap.root, withToken, "install", "claude", "--url", ap.srv.url, "--project", ap.project, "--root", ap.root))
	})
}
