package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeInsideAProjectFolder: the set-up a newcomer tries first, `cd
// myproj && brabo serve` and then a project whose root is myproj, works
// with the default data folder, which is in the user's state folder; the
// database never lands in an agent's scope, and the refusals name --data.
func TestServeInsideAProjectFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	home := t.TempDir()
	proj := filepath.Join(t.TempDir(), "myproj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	// No --data, no BRABO_DATA, no XDG_STATE_HOME: ~/.local/state/brabo.
	env := []string{"HOME=" + home, "BRABO_DATA=", "XDG_STATE_HOME="}
	srv := startServeIn(t, proj, env)
	want := filepath.Join(home, ".local", "state", "brabo")
	if !strings.Contains(strings.Join(srv.out, "\n"), "Data folder: "+want+" (--data") {
		t.Errorf("the start does not print the data folder %s:\n%s", want, strings.Join(srv.out, "\n"))
	}
	if _, err := os.Stat(filepath.Join(want, "brabo.db")); err != nil {
		t.Errorf("no database in the default data folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(proj, ".brabo")); !os.IsNotExist(err) {
		t.Errorf("serve made .brabo in the folder it was started in (%v)", err)
	}
	p := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "myproj", "mode": "local", "root": proj}, 201)
	if p["root"] != proj {
		t.Errorf("the created project does not say its root %s: %v", proj, p)
	}
	got := srv.must(t, "GET", "/v1/projects/"+p["id"].(string), srv.token, nil, 200)
	if got["project"].(map[string]any)["root"] != proj {
		t.Errorf("GET of the project does not say its root: %v", got)
	}
	list := srv.must(t, "GET", "/v1/projects", srv.token, nil, 200)["projects"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["root"] != proj {
		t.Errorf("the project list does not say the root: %v", list)
	}

	// The state folder itself as a project would hold the database: refused,
	// with its own code, naming the flag that moves the data folder.
	out := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "state", "mode": "local", "root": filepath.Join(home, ".local")}, 400)
	if out["code"] != "invalid_project" || !strings.Contains(out["message"].(string), "--data") || !strings.Contains(out["message"].(string), "overlaps brabo's data folder") {
		t.Errorf("a project holding the data folder: %v", out)
	}
	for _, bad := range []map[string]any{
		{"slug": "Bad Slug", "mode": "local", "root": proj},
		{"slug": "norooot", "mode": "local"},
		{"slug": "relative", "mode": "local", "root": "myproj"},
		{"slug": "nofolder", "mode": "local", "root": filepath.Join(home, "missing")},
		{"slug": "nomode", "root": proj},
	} {
		if out := srv.must(t, "POST", "/v1/projects", srv.token, bad, 400); out["code"] != "invalid_project" {
			t.Errorf("%v: %v, want invalid_project", bad, out)
		}
	}
}

// TestDataFolderInsideAProjectIsRefused: the overlap refusal stays, at
// both doors. A server whose --data lies in a project folder refuses to
// create that project, naming --data; a server started with --data inside
// an existing project's folder does not start, naming --data. A ./.brabo
// the old default left is pointed at.
func TestDataFolderInsideAProjectIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	proj := t.TempDir()
	state := t.TempDir()
	env := []string{"BRABO_DATA=", "XDG_STATE_HOME=" + state}

	inside := startServeIn(t, proj, env, "--data", ".brabo")
	out := inside.must(t, "POST", "/v1/projects", inside.token, map[string]any{"slug": "myproj", "mode": "local", "root": proj}, 400)
	msg, _ := out["message"].(string)
	if out["code"] != "invalid_project" || !strings.Contains(msg, "overlaps brabo's data folder "+filepath.Join(proj, ".brabo")) || !strings.Contains(msg, "--data") {
		t.Errorf("a project folder holding --data: %v", out)
	}
	inside.cmd.Process.Kill()
	inside.cmd.Wait()

	// The default is $XDG_STATE_HOME/brabo; the ./.brabo the first server
	// made is pointed at, as an earlier default's would be.
	srv := startServeIn(t, proj, env)
	if !strings.Contains(strings.Join(srv.out, "\n"), "Data folder: "+filepath.Join(state, "brabo")) {
		t.Errorf("XDG_STATE_HOME is not the default's parent:\n%s", strings.Join(srv.out, "\n"))
	}
	if logs := srv.logs.String(); !strings.Contains(logs, "./.brabo holds a database") || !strings.Contains(logs, "--data") {
		t.Errorf("no warning about the old default's ./.brabo:\n%s", logs)
	}
	srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "myproj", "mode": "local", "root": proj}, 201)
	srv.cmd.Process.Kill()
	srv.cmd.Wait()

	// The data folder moved into the project: the start is refused.
	moved := filepath.Join(proj, "data")
	if err := os.Rename(filepath.Join(state, "brabo"), moved); err != nil {
		t.Fatal(err)
	}
	r := runBounded(t, "serve", "--addr", "127.0.0.1:0", "--db", "", "--data", moved)
	if r.code != 1 || !strings.Contains(r.stderr, "brabo serve: the data folder "+moved+" overlaps the folder of the project myproj") ||
		!strings.Contains(r.stderr, "--data") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("a start with --data inside a project: want exit 1 and one line naming --data\n%s", r)
	}
}
