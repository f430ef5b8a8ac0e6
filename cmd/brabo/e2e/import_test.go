package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/policy"
)

// importProject copies testdata/import/<agent> (the agent's rule files,
// written as its documentation shows) into a fresh project folder.
func importProject(t *testing.T, agent string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "import", agent)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// wantLines fails unless out holds every line, in any order.
func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Errorf("the output lacks %q:\n%s", l, out)
		}
	}
}

// brabo import claude reads .claude/settings.json and settings.local.json
// as Claude Code's documentation writes them, prints the entries and what
// it did not carry over, and writes nothing without --write.
func TestImportClaudePrintsEntriesAndWhatItDrops(t *testing.T) {
	dir := importProject(t, "claude")
	r := runBrabo(t, dir, nil, "import", "claude")
	if r.code != 0 {
		t.Fatalf("brabo import claude: %s", r)
	}
	wantLines(t, r.stdout,
		"read .claude/settings.json, .claude/settings.local.json",
		"allow Terminal(npm run lint)", "allow Terminal(npm run test:*)", "allow WriteFile(src/**/*.ts)",
		"allow McpTool(github__get_issue)", "allow Network(docs.anthropic.com)", "allow Terminal(git diff)",
		"allow McpTool(puppeteer__*)",
		"deny  Terminal(curl:*)", "deny  Read(./.env)", "deny  Read(./.env.*)", "deny  ReadFile(secrets/**)",
		"deny  Read(//etc/ssl/private/**)", "deny  Edit(~/.ssh/**)",
		"ask   Terminal(git push:*)",
		"not carried over:",
		"permissions.allow[2]: Read(~/.zshrc) — names a path outside the project folder",
		"permissions.allow[6]: WebSearch — Claude Code's WebSearch has no brabo counterpart",
		`permissions.defaultMode: "acceptEdits" — brabo has no counterpart`,
		"permissions.allow[2]: Read(//tmp/build/**) — names a path outside the project folder",
		"nothing written")
	if _, err := os.Stat(filepath.Join(dir, "permissions.json")); !os.IsNotExist(err) {
		t.Errorf("brabo import without --write wrote permissions.json (%v)", err)
	}
}

// --write merges the entries into permissions.json, keeping what the file
// held (its entries and unknown keys), and a second run adds nothing.
func TestImportWriteMergesIntoPermissions(t *testing.T) {
	dir := importProject(t, "claude")
	before := `{"note": "ours", "allow": ["Terminal(ls)", "Terminal(npm run lint)"], "deny": ["Terminal(sudo)"]}`
	os.WriteFile(filepath.Join(dir, "permissions.json"), []byte(before), 0o600)
	r := runBrabo(t, dir, nil, "import", "claude", "--write", "--json")
	if r.code != 0 {
		t.Fatalf("brabo import claude --write: %s", r)
	}
	var out struct {
		Written bool                `json:"written"`
		Added   map[string][]string `json:"added"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || !out.Written {
		t.Fatalf("--json: %v\n%s", err, r)
	}
	if len(out.Added["allow"]) != 6 || len(out.Added["deny"]) != 6 || len(out.Added["ask"]) != 1 {
		t.Errorf("added %v, want 6 allow (npm run lint was there), 6 deny, 1 ask", out.Added)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "permissions.json"))
	rules, err := policy.Parse("permissions.json", data)
	if err != nil {
		t.Fatalf("the written file is invalid: %v\n%s", err, data)
	}
	var file map[string]any
	json.Unmarshal(data, &file)
	if file["note"] != "ours" || !strings.Contains(string(data), `"Terminal(ls)"`) || !strings.Contains(string(data), `"Terminal(sudo)"`) {
		t.Errorf("the merge lost what the file held:\n%s", data)
	}
	if strings.Count(string(data), "Terminal(npm run lint)") != 1 {
		t.Errorf("an entry already there was added again:\n%s", data)
	}
	if st, _ := os.Stat(filepath.Join(dir, "permissions.json")); st.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode became %v", st.Mode().Perm())
	}
	for _, w := range rules.Warnings() {
		if strings.Contains(w, "dropped") {
			t.Errorf("import wrote an entry brabo drops: %s", w)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".permissions.json.import-") {
			t.Errorf("a temporary file stayed: %s", e.Name())
		}
	}
	r = runBrabo(t, dir, nil, "import", "claude", "--write")
	if r.code != 0 || !strings.Contains(r.stdout, "already holds every entry") {
		t.Errorf("a second --write: %s", r)
	}
}

// brabo import gemini reads the [[rule]] tables of .gemini/policies/*.toml
// as Gemini CLI's documentation writes them.
func TestImportGeminiPrintsEntriesAndWhatItDrops(t *testing.T) {
	dir := importProject(t, "gemini")
	r := runBrabo(t, dir, nil, "import", "gemini")
	if r.code != 0 {
		t.Fatalf("brabo import gemini: %s", r)
	}
	wantLines(t, r.stdout,
		"read .gemini/policies/project.toml",
		"allow Terminal(git status)", "ask   Terminal(git)", "deny  Terminal(rm -rf)", "deny  Terminal(sudo)",
		"ask   WriteFile()", "allow McpTool(my-server__*)", "deny  McpTool(my-server__delete_everything)",
		"not carried over:",
		`commandRegex = "git (commit|push)"`, "commandRegex is a regular expression",
		`modes = ["autoEdit", "yolo"]`, "modes narrows the rule to some calls",
		"the tool google_web_search has no brabo counterpart",
		"note: Gemini CLI lets the rule of highest priority win")
	if strings.Count(r.stdout, "ask   WriteFile()") != 1 {
		t.Errorf("write_file and replace became two entries:\n%s", r.stdout)
	}
}

// brabo import codex reads .codex/rules/*.rules as Codex's documentation
// writes them, and carries a rule over only when the real codex
// execpolicy check decides its pattern as brabo would: env, which Codex
// lets run whatever follows it, is not carried.
func TestImportCodexChecksEachRuleWithCodex(t *testing.T) {
	codex := nativeCodex(t)
	dir := importProject(t, "codex")
	r := runBrabo(t, dir, nil, "import", "codex", "--codex", codex)
	if r.code != 0 {
		t.Fatalf("brabo import codex: %s", r)
	}
	wantLines(t, r.stdout,
		"read .codex/rules/default.rules",
		"ask   Terminal(gh pr view)", "ask   Terminal(git push)", "ask   Terminal(git fetch)",
		"deny  Terminal(rm -rf)", "allow Terminal(npm test)", "allow Terminal(git status)",
		"not carried over:",
		`default.rules:43: prefix_rule(decision="allow", pattern=["env"]) — codex execpolicy check decides allow for "env brabo-probe", brabo would read none`)
	if strings.Contains(r.stdout, "Terminal(env)") {
		t.Errorf("env was carried over:\n%s", r.stdout)
	}
	r = runBrabo(t, dir, nil, "import", "codex", "--codex", filepath.Join(t.TempDir(), "no-codex"))
	if r.code == 0 {
		t.Errorf("brabo import codex without a codex to check with carried rules over unchecked:\n%s", r)
	}
}

// A permissions.json that brabo import --write loosened is held by the
// running server until a maintainer accepts it, as every change on disk.
func TestImportWriteIsHeldUntilAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server")
	}
	root := importProject(t, "claude")
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(ls)"]}`), 0o644)
	srv := startServe(t, t.TempDir())
	project := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "shop", "mode": "local", "root": root}, 201)["id"].(string)
	if r := runBrabo(t, root, nil, "import", "claude", "--write"); r.code != 0 || !strings.Contains(r.stdout, "a maintainer accepts it") {
		t.Fatalf("brabo import claude --write: %s", r)
	}
	r := runBraboAs(t, srv.token, "permissions", "show", "--addr", srv.url, "--project", project)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "held: ") || !strings.Contains(r.stdout, "WriteFile(src/**/*.ts)") {
		t.Fatalf("the imported allow entries apply without an accept:\n%s", r)
	}
}
