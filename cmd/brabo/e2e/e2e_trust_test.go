package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// The trusted-policy layer (docs/permissions-trust.md),
// end to end through the real server and store: permissions.json edited
// behind brabo's back (as an editor, a branch switch or an agent's program
// would) applies at once when it tightens, and waits for a maintainer when
// it loosens or does not parse.

const (
	// trusted is the version PUT writes; the commands below are safe to run
	// in the test's project folder if a test fails and lets one through.
	trusted = `{"allow": ["Terminal(echo)"], "deny": ["Terminal(curl)"]}`
	// loosened adds what the agent of the issue wanted: any bash.
	loosened   = `{"allow": ["Terminal(echo)", "Terminal(bash)"], "deny": ["Terminal(curl)"]}`
	bashLine   = `bash -c 'echo loosened'`
	heldMarker = "decided with the trusted permissions.json"
)

func sha(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// writeDisk replaces permissions.json on disk without brabo, as an editor
// or `git checkout` would.
func (e *env) writeDisk(content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.root, "permissions.json"), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) readDisk() string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, "permissions.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *env) trustState() map[string]any {
	e.t.Helper()
	return e.ok("GET", e.pp("/permissions/trust"), e.developer, nil, 200)
}

// eventsOfType returns the project's events of one type.
func (e *env) eventsOfType(typ string) []brabo.Event {
	var out []brabo.Event
	for _, ev := range e.events() {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// permissionEvents counts the events the trust layer records.
func (e *env) permissionEvents() int {
	n := 0
	for _, ev := range e.events() {
		if strings.HasPrefix(ev.Type, "permissions.") {
			n++
		}
	}
	return n
}

func listOf(m map[string]any, path ...string) []string {
	var cur any = m
	for _, p := range path {
		mm, _ := cur.(map[string]any)
		cur = mm[p]
	}
	var out []string
	for _, v := range cur.([]any) {
		out = append(out, v.(string))
	}
	return out
}

func TestTrustedPolicyTighteningAppliesAtOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(trusted)
		if a := e.terminal("echo before"); a["status"] != "executed" {
			t.Fatalf("echo under the trusted file: %v %v", a["status"], a["reason"])
		}
		tightened := `{"allow": ["Terminal(echo)"], "deny": ["Terminal(curl)", "Terminal(echo)"]}`
		e.writeDisk(tightened)
		for range 2 {
			if a := e.terminal("echo after"); a["status"] != "denied" || a["reason"] != "permissions.json deny: Terminal(echo)" {
				t.Fatalf("an added deny on disk did not deny at once: %v %v", a["status"], a["reason"])
			}
		}
		evs := e.eventsOfType(brabo.EventPermissionsChanged)
		if len(evs) != 1 {
			t.Fatalf("%d changed_on_disk events for one content, want 1", len(evs))
		}
		p := payloadOf(evs[0])
		if p["applied"] != true || p["hash"] != sha(tightened) || str(p, "change", "kind") != "tighten" ||
			!slices.Equal(listOf(p, "change", "deny", "added"), []string{"Terminal(echo)"}) {
			t.Fatalf("changed_on_disk: %s", evs[0].Payload)
		}
		if st := e.trustState(); st["status"] != "applied" || st["trustedHash"] != sha(trusted) || st["decidedWith"] != sha(tightened) {
			t.Fatalf("trust state: %v", st)
		}
	})
}

func TestTrustedPolicyLooseningWaitsForAMaintainer(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(trusted)
		e.writeDisk(loosened)

		// Two decisions, one event; neither is loosened.
		for range 2 {
			a := e.terminal(bashLine)
			if a["status"] != "pending" || !strings.Contains(a["reason"].(string), heldMarker) {
				t.Fatalf("bash after a loosening on disk: %v %v", a["status"], a["reason"])
			}
			created := e.eventsOf(a["id"].(string), brabo.EventActionCreated)
			if p := payloadOf(created[0]); p["permissionsHash"] != sha(trusted) || p["permissionsHeld"] != sha(loosened) {
				t.Fatalf("the created event does not say which version decided: %s", created[0].Payload)
			}
		}
		evs := e.eventsOfType(brabo.EventPermissionsChanged)
		if len(evs) != 1 {
			t.Fatalf("%d changed_on_disk events for one content, want 1", len(evs))
		}
		if p := payloadOf(evs[0]); p["applied"] != false || str(p, "change", "kind") != "loosen" ||
			!slices.Equal(listOf(p, "change", "allow", "added"), []string{"Terminal(bash)"}) {
			t.Fatalf("changed_on_disk: %s", evs[0].Payload)
		}

		// The API shows the difference, as the file is on disk.
		perm := e.ok("GET", e.pp("/permissions"), e.developer, nil, 200)
		if perm["content"] != loosened || str(perm, "trust", "status") != "held" {
			t.Fatalf("GET permissions: %v", perm)
		}
		st := e.trustState()
		if st["status"] != "held" || st["diskHash"] != sha(loosened) || st["trustedContent"] != trusted ||
			!slices.Equal(listOf(st, "change", "allow", "added"), []string{"Terminal(bash)"}) {
			t.Fatalf("trust state: %v", st)
		}

		// Accept: a developer is refused, an agent does not even see it,
		// a hash that is not the file on disk is refused.
		accept := e.pp("/permissions/accept")
		e.refused("POST", accept, e.developer, map[string]any{"hash": sha(loosened)}, 403, "forbidden_role")
		e.refused("POST", accept, e.agent, map[string]any{"hash": sha(loosened)}, 404, "not_found")
		e.refused("POST", accept, e.maintainer, map[string]any{"hash": sha(trusted + " ")}, 409, "permissions_changed")
		e.refused("POST", accept, e.maintainer, map[string]any{}, 400, "invalid_action")
		if a := e.terminal(bashLine); a["status"] != "pending" {
			t.Fatalf("a refused accept applied the file: %v", a["status"])
		}
		if n := len(e.eventsOfType(brabo.EventPermissionsAccepted)); n != 0 {
			t.Fatalf("%d accepted events after refusals", n)
		}

		// A maintainer's accept applies it.
		got := e.ok("POST", accept, e.maintainer, map[string]any{"hash": sha(loosened)}, 200)
		if got["status"] != "trusted" || got["trustedHash"] != sha(loosened) {
			t.Fatalf("accept answered %v", got)
		}
		acc := e.eventsOfType(brabo.EventPermissionsAccepted)
		if len(acc) != 1 {
			t.Fatalf("%d accepted events, want 1", len(acc))
		}
		if p := payloadOf(acc[0]); p["hash"] != sha(loosened) || p["previous"] != sha(trusted) ||
			!slices.Equal(listOf(p, "change", "allow", "added"), []string{"Terminal(bash)"}) {
			t.Fatalf("accepted: %s", acc[0].Payload)
		}
		if a := e.terminal(bashLine); a["status"] != "executed" || strings.Contains(a["reason"].(string), heldMarker) {
			t.Fatalf("bash after the accept: %v %v", a["status"], a["reason"])
		}
		if n := len(e.eventsOfType(brabo.EventPermissionsChanged)); n != 1 {
			t.Fatalf("%d changed_on_disk events after the accept, want still 1", n)
		}
	})
}

func TestTrustedPolicyRestoreWritesTheTrustedFileBack(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(trusted)
		e.writeDisk(loosened)
		restore := e.pp("/permissions/restore")
		e.refused("POST", restore, e.developer, nil, 403, "forbidden_role")
		e.refused("POST", restore, e.maintainer, map[string]any{"hash": sha(trusted)}, 409, "permissions_changed")
		if e.readDisk() != loosened {
			t.Fatal("a refused restore wrote the file")
		}
		got := e.ok("POST", restore, e.maintainer, map[string]any{"hash": sha(loosened)}, 200)
		if got["status"] != "trusted" {
			t.Fatalf("restore answered %v", got)
		}
		if disk := e.readDisk(); disk != trusted {
			t.Fatalf("after restore the file is %q, want the trusted version", disk)
		}
		evs := e.eventsOfType(brabo.EventPermissionsRestored)
		if len(evs) != 1 {
			t.Fatalf("%d restored events, want 1", len(evs))
		}
		if p := payloadOf(evs[0]); p["hash"] != sha(trusted) || p["replaced"] != sha(loosened) ||
			!slices.Equal(listOf(p, "dropped", "allow", "added"), []string{"Terminal(bash)"}) {
			t.Fatalf("restored: %s", evs[0].Payload)
		}
		if a := e.terminal(bashLine); a["status"] != "pending" || strings.Contains(a["reason"].(string), heldMarker) {
			t.Fatalf("bash after the restore: %v %v", a["status"], a["reason"])
		}
		// Restoring a trusted file changes nothing and records nothing.
		e.ok("POST", restore, e.maintainer, nil, 200)
		if n := len(e.eventsOfType(brabo.EventPermissionsRestored)); n != 1 {
			t.Fatalf("%d restored events after a restore with nothing to do", n)
		}
	})
}

// Trust is the latest accepted version: a maintainer
// accepted the loose B, then tightened back to A; B written back on disk
// (as a process an action left behind would) is a loosening like any
// other: held, with its event, until a maintainer accepts it again.
func TestTrustedPolicyAnOlderAcceptedVersionIsALoosening(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(trusted)                                                                           // A
		e.writeDisk(loosened)                                                                               // B, on another branch
		e.ok("POST", e.pp("/permissions/accept"), e.maintainer, map[string]any{"hash": sha(loosened)}, 200) // B accepted
		if a := e.terminal(bashLine); a["status"] != "executed" {
			t.Fatalf("bash under the accepted B: %v %v", a["status"], a["reason"])
		}
		e.setPermissions(trusted) // a maintainer tightens back to A
		if a := e.terminal(bashLine); a["status"] != "pending" || strings.Contains(a["reason"].(string), heldMarker) {
			t.Fatalf("bash under A: %v %v", a["status"], a["reason"])
		}
		changed := len(e.eventsOfType(brabo.EventPermissionsChanged))

		// B again on disk, written behind brabo's back: held.
		e.writeDisk(loosened)
		for range 2 {
			a := e.terminal(bashLine)
			if a["status"] != "pending" || !strings.Contains(a["reason"].(string), heldMarker) {
				t.Fatalf("bash after the older B came back on disk: %v %v", a["status"], a["reason"])
			}
		}
		evs := e.eventsOfType(brabo.EventPermissionsChanged)
		if len(evs) != changed+1 {
			t.Fatalf("%d changed_on_disk events for the older version on disk, want 1", len(evs)-changed)
		}
		if p := payloadOf(evs[len(evs)-1]); p["hash"] != sha(loosened) || p["trustedHash"] != sha(trusted) || p["applied"] != false ||
			p["earlierVersion"] != true || str(p, "change", "kind") != "loosen" ||
			!slices.Equal(listOf(p, "change", "allow", "added"), []string{"Terminal(bash)"}) {
			t.Fatalf("changed_on_disk: %s", evs[len(evs)-1].Payload)
		}
		if st := e.trustState(); st["status"] != "held" || st["trustedHash"] != sha(trusted) || st["decidedWith"] != sha(trusted) {
			t.Fatalf("trust state with the older B on disk: %v", st)
		}
		// Accept: a developer is refused; a maintainer's applies it.
		e.refused("POST", e.pp("/permissions/accept"), e.developer, map[string]any{"hash": sha(loosened)}, 403, "forbidden_role")
		if a := e.terminal(bashLine); a["status"] != "pending" {
			t.Fatalf("a refused accept applied B: %v", a["status"])
		}
		got := e.ok("POST", e.pp("/permissions/accept"), e.maintainer, map[string]any{"hash": sha(loosened)}, 200)
		if got["status"] != "trusted" || got["trustedHash"] != sha(loosened) {
			t.Fatalf("accept answered %v", got)
		}
		if a := e.terminal(bashLine); a["status"] != "executed" {
			t.Fatalf("bash after the accept: %v %v", a["status"], a["reason"])
		}
		acc := e.eventsOfType(brabo.EventPermissionsAccepted)
		if p := payloadOf(acc[len(acc)-1]); len(acc) != 2 || p["hash"] != sha(loosened) || p["previous"] != sha(trusted) {
			t.Fatalf("%d accepted events, the last %s", len(acc), acc[len(acc)-1].Payload)
		}

		// A, tighter than the now current B, on disk: applies at once.
		e.writeDisk(trusted)
		if a := e.terminal(bashLine); a["status"] != "pending" || strings.Contains(a["reason"].(string), heldMarker) {
			t.Fatalf("bash after the tighter A came back on disk: %v %v", a["status"], a["reason"])
		}
		if st := e.trustState(); st["status"] != "applied" || st["trustedHash"] != sha(loosened) || st["decidedWith"] != sha(trusted) {
			t.Fatalf("trust state with A on disk: %v", st)
		}
	})
}

func TestTrustedPolicyAnUnparsableFileKeepsTheTrustedDenies(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(trusted)
		broken := `{"allow": ["Terminal(echo)"], "deny": [`
		e.writeDisk(broken)
		for range 2 {
			a := e.terminal("curl --version")
			if a["status"] != "denied" || !strings.HasPrefix(a["reason"].(string), "permissions.json deny: Terminal(curl)") {
				t.Fatalf("curl with an unparsable file on disk: %v %v", a["status"], a["reason"])
			}
		}
		if a := e.terminal("echo still"); a["status"] != "executed" || !strings.Contains(a["reason"].(string), "is invalid") {
			t.Fatalf("echo with an unparsable file on disk: %v %v", a["status"], a["reason"])
		}
		evs := e.eventsOfType(brabo.EventPermissionsChanged)
		if len(evs) != 1 || str(payloadOf(evs[0]), "change", "kind") != "invalid" || payloadOf(evs[0])["applied"] != false {
			t.Fatalf("changed_on_disk events: %v", evs)
		}
		// An invalid file cannot be accepted; it can be restored.
		e.refused("POST", e.pp("/permissions/accept"), e.maintainer, map[string]any{"hash": sha(broken)}, 400, "invalid_permissions")
		e.ok("POST", e.pp("/permissions/restore"), e.maintainer, nil, 200)
		if e.readDisk() != trusted {
			t.Fatal("restore did not write the trusted file back")
		}
	})
}

// The attack trust answers: an agent rewrites permissions.json to allow
// bash. Through brabo the write is refused by the protected-path rule; the
// same content written on disk by other means (an editor, a branch switch,
// an allowed code runner) does not loosen the next proposal either.
func TestTrustedPolicyTheAgentCannotAllowItselfBash(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(trusted)
		a := e.terminal(`echo '{"allow":["Terminal(bash)"]}' > permissions.json`)
		if a["status"] != "pending" || str(a, "decision", "requiredRole") != "maintainer" {
			t.Fatalf("the agent's rewrite of permissions.json: %v %v", a["status"], a["reason"])
		}
		if e.readDisk() != trusted {
			t.Fatal("the agent's rewrite ran")
		}
		e.writeDisk(`{"allow":["Terminal(bash)"]}` + "\n")
		if b := e.terminal(bashLine); b["status"] != "pending" || !strings.Contains(b["reason"].(string), heldMarker) {
			t.Fatalf("the next proposal after the file was rewritten: %v %v", b["status"], b["reason"])
		}
		// The trusted denies hold, though the file on disk dropped them.
		if c := e.terminal("curl --version"); c["status"] != "denied" {
			t.Fatalf("curl after the rewrite: %v %v", c["status"], c["reason"])
		}
		// Always-allow does not build on the rewritten file.
		touch := e.terminal("touch notes.txt")
		if touch["status"] != "pending" {
			t.Fatalf("touch: %v %v", touch["status"], touch["reason"])
		}
		e.refused("POST", "/v1/actions/"+touch["id"].(string)+"/approve-always", e.maintainer, nil, 409, "permissions_changed")
		if e.readDisk() != `{"allow":["Terminal(bash)"]}`+"\n" {
			t.Fatal("a refused always-allow wrote the file")
		}
	})
}

// What brabo writes, and what a maintainer approved, is trusted: a later
// decision uses it with no event of a change on disk.
func TestTrustedPolicyWritesBraboMakesAreTrusted(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		e.setPermissions(trusted)
		if evs := e.eventsOfType(brabo.EventPermissionsTrusted); len(evs) != 1 || payloadOf(evs[0])["source"] != "put" {
			t.Fatalf("PUT recorded %v", evs)
		}
		// Always-allow: the file it writes is the trusted version.
		touch := e.terminal("touch notes.txt")
		e.ok("POST", "/v1/actions/"+touch["id"].(string)+"/approve-always", e.developer, nil, 200)
		if st := e.trustState(); st["status"] != "trusted" || st["diskHash"] != sha(e.readDisk()) {
			t.Fatalf("after always-allow: %v", st)
		}
		// A write_file of permissions.json a maintainer approved.
		w := e.propose(e.agent, "write_file", map[string]any{"path": "permissions.json", "content": loosened})
		if w["status"] != "pending" {
			t.Fatalf("write_file of permissions.json: %v", w["status"])
		}
		e.ok("POST", "/v1/actions/"+w["id"].(string)+"/approve", e.maintainer, nil, 200)
		if a := e.terminal(bashLine); a["status"] != "executed" {
			t.Fatalf("bash after a maintainer-approved write: %v %v", a["status"], a["reason"])
		}
		evs := e.eventsOfType(brabo.EventPermissionsTrusted)
		if last := payloadOf(evs[len(evs)-1]); last["source"] != "write_file" || last["actionId"] != w["id"] || last["hash"] != sha(loosened) {
			t.Fatalf("permissions.trusted of the write: %v", last)
		}
		if n := len(e.eventsOfType(brabo.EventPermissionsChanged)); n != 0 {
			t.Fatalf("%d changed_on_disk events for files brabo wrote", n)
		}
	})
}

// The Permissions page shows the difference of a held file, and Accept and
// Restore to maintainers only; the buttons do what the API does.
func TestTrustedPolicyOnThePermissionsPage(t *testing.T) {
	s, err := sqlite.Open(t.Context(), t.TempDir()+"/brabo.db")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	e.setPermissions(trusted)
	e.writeDisk(loosened)
	page := "/ui/projects/" + e.project + "/permissions"

	dev := newWebClient(t, e.srv.URL)
	dev.login(e.developer)
	_, body := dev.do("GET", page, nil, nil)
	if !strings.Contains(body, "waiting for a maintainer") || !strings.Contains(body, "Terminal(bash)") {
		t.Fatalf("a developer's page does not show the held difference:\n%s", body)
	}
	if strings.Contains(body, `class="accept"`) || strings.Contains(body, `class="restore"`) {
		t.Fatal("a developer is offered Accept or Restore")
	}
	form := url.Values{"hash": {sha(loosened)}}
	if resp, _ := dev.do("POST", page+"/accept", form, map[string]string{"X-CSRF-Token": dev.csrf}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a developer's accept: %d", resp.StatusCode)
	}

	mia := newWebClient(t, e.srv.URL)
	mia.login(e.maintainer)
	_, body = mia.do("GET", page, nil, nil)
	for _, want := range []string{`class="accept"`, `class="restore"`, `name="hash" value="` + sha(loosened) + `"`, ">Accept<", ">Restore<"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the maintainer's page lacks %s:\n%s", want, body)
		}
	}
	if a := e.terminal(bashLine); a["status"] != "pending" {
		t.Fatalf("bash before the accept: %v", a["status"])
	}
	resp, frag := mia.do("POST", page+"/accept", form, map[string]string{"X-CSRF-Token": mia.csrf})
	if resp.StatusCode != http.StatusOK || !strings.Contains(frag, "it is a trusted version") {
		t.Fatalf("accept from the page: %d\n%s", resp.StatusCode, frag)
	}
	if a := e.terminal(bashLine); a["status"] != "executed" {
		t.Fatalf("bash after the page's accept: %v", a["status"])
	}

	// Restore from the page writes the trusted version back.
	e.writeDisk(`{"allow": ["Terminal(echo)", "Terminal(bash)", "Terminal(sh)"]}`)
	resp, frag = mia.do("POST", page+"/restore", url.Values{"hash": {sha(`{"allow": ["Terminal(echo)", "Terminal(bash)", "Terminal(sh)"]}`)}},
		map[string]string{"X-CSRF-Token": mia.csrf})
	if resp.StatusCode != http.StatusOK || !strings.Contains(frag, "it is a trusted version") || e.readDisk() != loosened {
		t.Fatalf("restore from the page: %d %q\n%s", resp.StatusCode, e.readDisk(), frag)
	}
}
