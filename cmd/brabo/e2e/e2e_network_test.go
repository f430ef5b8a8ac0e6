package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// newNetworkEnv is an env whose terminal commands run in the sandbox
// under brabo's egress forwarder (the test binary, TestMain), with a
// session deciding on the project's effective rules: brabo's own wiring.
func newNetworkEnv(t *testing.T) *env {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, s)
}

// run proposes command as the agent and has the maintainer approve it:
// the executed action.
func (e *env) runApproved(command string) map[string]any {
	e.t.Helper()
	id := e.terminal(command)["id"].(string)
	d := e.ok("POST", "/v1/actions/"+id+"/approve", e.maintainer, nil, 200)
	return d["action"].(map[string]any)
}

// A refused connection is visible and fixable: the action's result says
// which host and the pattern that would allow it, network.refused is in
// the log, a maintainer's always-allow adds the pattern to
// permissions.json (a developer's is refused), and the next run passes.
func TestNetworkRefusalIsRecordedAndAlwaysAllowFixesIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello through brabo") }))
	defer srv.Close()
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	e := newNetworkEnv(t)
	cmd := "curl -sS --max-time 10 " + srv.URL + "/"

	a := e.runApproved(cmd)
	id := a["id"].(string)
	want := fmt.Sprintf("network: 127.0.0.1:%[1]s is not allowed (Network(127.0.0.1:%[1]s) would allow it)", port)
	if got := str(a, "result", "detail", brabo.DetailNetwork); got != want {
		t.Fatalf("the result says %q, want %q (%v)", got, want, a["result"])
	}
	if out := str(a, "result", "output"); strings.Contains(out, "hello") || !strings.Contains(out, "brabo: "+want) {
		t.Fatalf("the command's output %q", out)
	}
	evs := e.eventsOf(id, brabo.EventNetworkRefused)
	if len(evs) != 1 {
		t.Fatalf("network.refused events: %v", evs)
	}
	p := payloadOf(evs[0])
	if p["host"] != "127.0.0.1" || fmt.Sprint(p["port"]) != port || p["actionId"] != id || p["verdict"] != "none" ||
		p["suggestion"] != "Network(127.0.0.1:"+port+")" || evs[0].ActorID != brabo.SystemActor {
		t.Fatalf("network.refused payload %v", p)
	}

	e.refused("POST", "/v1/actions/"+id+"/allow-network", e.developer, nil, 403, "forbidden_role")
	d := e.ok("POST", "/v1/actions/"+id+"/allow-network", e.maintainer, nil, 200)
	if fmt.Sprint(d["patterns"]) != "[Network(127.0.0.1:"+port+")]" || d["outcome"] != "network_allowed" {
		t.Fatalf("allow-network: %v", d)
	}
	file, _ := os.ReadFile(filepath.Join(e.root, "permissions.json"))
	if !strings.Contains(string(file), `"Network(127.0.0.1:`+port+`)"`) {
		t.Fatalf("permissions.json: %s", file)
	}
	if g := e.eventsOf(id, brabo.EventPermissionGranted); len(g) != 1 || payloadOf(g[0])["pattern"] != "Network(127.0.0.1:"+port+")" {
		t.Fatalf("permission.granted: %v", g)
	}

	again := e.runApproved(cmd)
	if out := str(again, "result", "output"); out != "hello through brabo" || str(again, "result", "detail", brabo.DetailNetwork) != "" {
		t.Fatalf("the next run: %v", again["result"])
	}
	if evs := e.eventsOf(again["id"].(string), brabo.EventNetworkRefused); len(evs) != 0 {
		t.Fatalf("the next run was refused: %v", evs)
	}
}

// An always-allow cannot open what a deny holds back, nor brabo's own
// address, and an action that was refused nothing has nothing to allow.
func TestNetworkAlwaysAllowRefusals(t *testing.T) {
	e := newNetworkEnv(t)
	api := e.srv // brabo's own API, whose /healthz names the sandbox
	port := strings.TrimPrefix(api.URL, "http://127.0.0.1:")

	e.setPermissions(`{"allow": ["Terminal(echo)", "Network(127.0.0.1:` + port + `)", "Network(localhost)"], "deny": ["Network(denied.example)"]}`)
	own := e.runApproved("curl -sS --max-time 10 http://localhost:" + port + "/healthz; curl -sS --max-time 10 " + api.URL + "/healthz")
	if out := str(own, "result", "output"); strings.Contains(out, "bubblewrap") {
		t.Fatalf("brabo's own address was reached: %q", out)
	}
	if got := str(own, "result", "detail", brabo.DetailNetwork); !strings.Contains(got, "brabo's own listening address") {
		t.Fatalf("the result says %q", got)
	}
	e.refused("POST", "/v1/actions/"+own["id"].(string)+"/allow-network", e.maintainer, nil, 400, "always_allow_cap")

	denied := e.runApproved("curl -sS --max-time 10 http://denied.example/")
	if got := str(denied, "result", "detail", brabo.DetailNetwork); !strings.Contains(got, "deny: Network(denied.example)") {
		t.Fatalf("the result says %q", got)
	}
	e.refused("POST", "/v1/actions/"+denied["id"].(string)+"/allow-network", e.maintainer, nil, 400, "always_allow_cap")

	quiet := e.runApproved("echo nothing")
	e.refused("POST", "/v1/actions/"+quiet["id"].(string)+"/allow-network", e.maintainer, nil, 400, "invalid_action")
}

// The card and the action page show a refused connection, and a
// maintainer's button on them adds the pattern; a developer sees no
// button.
func TestNetworkRefusalOnTheCardAndThePage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	defer srv.Close()
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	e := newNetworkEnv(t)
	id := e.runApproved("curl -sS --max-time 10 " + srv.URL + "/")["id"].(string)
	want := fmt.Sprintf("network: 127.0.0.1:%[1]s is not allowed (Network(127.0.0.1:%[1]s) would allow it)", port)

	dev := newWebClient(t, e.srv.URL)
	dev.login(e.developer)
	_, page := dev.do("GET", "/ui/actions/"+id, nil, nil)
	if !strings.Contains(page, want) || strings.Contains(page, "/allow-network") || !strings.Contains(page, "needs the role maintainer") {
		t.Fatalf("the developer's action page:\n%s", page)
	}
	mia := newWebClient(t, e.srv.URL)
	mia.login(e.maintainer)
	_, card := mia.do("GET", "/ui/cards/"+id, nil, nil)
	if !strings.Contains(card, want) || !strings.Contains(card, `hx-post="/ui/actions/`+id+`/allow-network"`) ||
		!strings.Contains(card, "Always allow Network(127.0.0.1:"+port+")") {
		t.Fatalf("the maintainer's card:\n%s", card)
	}
	resp, body := mia.do("POST", "/ui/actions/"+id+"/allow-network", url.Values{}, map[string]string{"X-CSRF-Token": mia.csrf})
	if resp.StatusCode != 200 || !strings.Contains(body, "recorded Network(127.0.0.1:"+port+") in permissions.json") {
		t.Fatalf("the button: %d\n%s", resp.StatusCode, body)
	}
	if out := str(e.runApproved("curl -sS --max-time 10 "+srv.URL+"/"), "result", "output"); out != "hello" {
		t.Fatalf("the next run: %q", out)
	}
}
