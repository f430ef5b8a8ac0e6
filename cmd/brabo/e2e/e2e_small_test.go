package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheCardsReasonIsEscapedLikeTheCommand: a U+202E (right-to-left
// override) in a rule of permissions.json (an always-allow records what
// an agent typed) reaches the card's reason sentence, which names the
// rule; it is shown escaped there, as in the command, and no raw one
// reaches the page.
func TestTheCardsReasonIsEscapedLikeTheCommand(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions("{\"ask\": [\"Terminal(ls \u202etxt.exe)\"]}")
		a := e.terminal("ls \u202etxt.exe")
		if a["status"] != "pending" || !strings.Contains(a["reason"].(string), "\u202e") {
			t.Fatalf("the reason does not carry the override, nothing to check: %v %q", a["status"], a["reason"])
		}
		w := newWebClient(t, e.srv.URL)
		w.login(e.maintainer)
		for _, path := range []string{"/", "/ui/cards/" + a["id"].(string)} {
			_, page := w.do("GET", path, nil, nil)
			if strings.ContainsRune(page, '\u202e') {
				t.Errorf("%s: a raw U+202E reached the page", path)
			}
			i := strings.Index(page, `<p class="reason">`)
			if i < 0 {
				t.Fatalf("%s: no reason on the card", path)
			}
			if reason := page[i : i+strings.Index(page[i:], "</p>")]; !strings.Contains(reason, `\u202e`) {
				t.Errorf("%s: the reason does not show the override escaped: %s", path, reason)
			}
		}
	})
}

// TestASymlinkedRootIsCheckedResolved: a local project's folder is checked
// once its symlinks are resolved too: a link to a system folder, to
// brabo's own files or to another project's folder is refused at creation,
// and a link pointed elsewhere after creation runs nothing.
func TestASymlinkedRootIsCheckedResolved(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		own := t.TempDir()
		e.api.OwnPaths = []string{own}
		links := t.TempDir()
		link := func(name, target string) string {
			p := filepath.Join(links, name)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			return p
		}
		before := e.written()
		for _, tc := range []struct{ link, target, why string }{
			{"etc", "/etc", "system directory"},
			{"usr", "/usr/lib", "inside the system directory /usr"},
			{"own", own, "overlaps"},
			{"shop", e.root, "overlaps"},
		} {
			out := e.refused("POST", "/v1/projects", e.admin,
				map[string]any{"slug": "via-" + tc.link, "mode": "local", "root": link(tc.link, tc.target)}, 400, "invalid_project")
			if msg := out["message"].(string); !strings.Contains(msg, "resolves through a symlink to") || !strings.Contains(msg, tc.why) {
				t.Errorf("a root linked to %s: %q", tc.target, msg)
			}
		}
		e.unchanged(before, "refused project roots")

		// A link to a plain folder is a project; its commands run there.
		real := t.TempDir()
		root := link("fine", real)
		p := e.ok("POST", "/v1/projects", e.admin, map[string]any{"slug": "linked", "mode": "local", "root": root}, 201)["id"].(string)
		e.ok("PUT", "/v1/projects/"+p+"/permissions", e.admin, `{"allow": ["Terminal(echo)"]}`, 200)
		agent := e.ok("POST", "/v1/projects/"+p+"/agents", e.admin, map[string]any{"name": "linker"}, 201)["token"].(string)
		run := func(cmd string) map[string]any {
			return e.ok("POST", "/v1/projects/"+p+"/actions", agent, map[string]any{"type": "terminal", "payload": map[string]any{"command": cmd}}, 201)
		}
		if a := run("echo here > here.txt"); a["status"] != "executed" {
			t.Fatalf("a command in the linked project: %v", a)
		}
		if _, err := os.Stat(filepath.Join(real, "here.txt")); err != nil {
			t.Fatalf("the command did not run in the link's target: %v", err)
		}
		// The link is pointed at /etc after the project was created.
		os.Remove(root)
		if err := os.Symlink("/etc", root); err != nil {
			t.Fatal(err)
		}
		// (Its permissions.json is now /etc's, which has none: it asks.)
		id := run("echo there")["id"].(string)
		a := e.ok("POST", "/v1/actions/"+id+"/approve", e.admin, nil, 200)["action"].(map[string]any)
		if a["status"] != "failed" || !strings.Contains(str(a, "result", "error"), "resolves through a symlink to /etc") || str(a, "result", "output") != "" {
			t.Errorf("a command in a project whose link now points at /etc: %v %v", a["status"], a["result"])
		}
	})
}

// TestAWriteOfPermissionsJSONIsValidated: a write_file of the project's
// permissions.json, by any path that reaches it, is validated as PUT
// …/permissions is: invalid content is refused with invalid_permissions
// when it is proposed, and nothing is written.
func TestAWriteOfPermissionsJSONIsValidated(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(`{"allow": ["Terminal(echo)"]}`)
		if err := os.Symlink(".", filepath.Join(e.root, "here")); err != nil {
			t.Fatal(err)
		}
		onDisk, _ := os.ReadFile(filepath.Join(e.root, "permissions.json"))
		before := e.written()
		for _, path := range []string{"permissions.json", "./permissions.json", filepath.Join(e.root, "permissions.json"), "here/permissions.json", "src/../permissions.json"} {
			for _, content := range []string{`{"allow": ["Terminal(curl)", "Bogus(x)"]}`, `{"allow": [`, "  "} {
				out := e.refused("POST", e.pp("/actions"), e.agent,
					map[string]any{"type": "write_file", "payload": map[string]any{"path": path, "content": content}}, 400, "invalid_permissions")
				if content == `{"allow": ["Terminal(curl)", "Bogus(x)"]}` && !strings.Contains(out["message"].(string), "Bogus") {
					t.Errorf("%s: the refusal does not name the bad entry: %v", path, out)
				}
			}
		}
		e.unchanged(before, "invalid writes of permissions.json")
		if now, _ := os.ReadFile(filepath.Join(e.root, "permissions.json")); string(now) != string(onDisk) {
			t.Errorf("permissions.json changed: %s", now)
		}
		// A valid file, and a permissions.json that is not the project's,
		// are proposed as any write is.
		if a := e.propose(e.agent, "write_file", map[string]any{"path": "permissions.json", "content": `{"allow": ["Terminal(ls)"]}`}); a["status"] != "pending" {
			t.Errorf("a valid permissions.json: %v", a["status"])
		}
		if a := e.propose(e.agent, "write_file", map[string]any{"path": "src/permissions.json", "content": "not json"}); a["status"] != "pending" {
			t.Errorf("a file named permissions.json in a subfolder: %v", a["status"])
		}
	})
}
