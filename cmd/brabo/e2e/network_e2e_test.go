package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/store/storetest"
)

// netWorld is a real brabo serve on PostgreSQL (so that the database's
// port is one of brabo's own) with a project, and a test server on
// 127.0.0.1 over http and https.
type netWorld struct {
	srv            *server
	project, agent string
	plain, secure  string // URLs
	pp, sp         string // their ports
	apiPort        string
	dbPort         string
}

func newNetWorld(t *testing.T) *netWorld {
	t.Helper()
	for _, tool := range []string{"bwrap", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from %s", r.Host) })
	plain := httptest.NewServer(hello)
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(hello)
	t.Cleanup(secure.Close)
	db := storetest.PostgresURL(t)
	srv := startServe(t, t.TempDir(), "--db", db)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Terminal(echo)"]}`), 0o644)
	p := srv.must(t, "POST", "/v1/projects", srv.token, map[string]any{"slug": "net", "mode": "local", "root": root}, 201)
	project := p["id"].(string)
	agent := srv.must(t, "POST", "/v1/projects/"+project+"/agents", srv.token, map[string]any{"name": "coder"}, 201)["token"].(string)
	port := func(u string) string { pu, _ := url.Parse(u); return pu.Port() }
	du, _ := url.Parse(db)
	dbPort := du.Port()
	if dbPort == "" {
		dbPort = "5432"
	}
	return &netWorld{srv: srv, project: project, agent: agent, plain: plain.URL, secure: secure.URL,
		pp: port(plain.URL), sp: port(secure.URL), apiPort: port(srv.url), dbPort: dbPort}
}

// rules replaces the project's permissions.json (a maintainer's PUT).
func (w *netWorld) rules(t *testing.T, content string) {
	t.Helper()
	req, _ := http.NewRequest("PUT", w.srv.url+"/v1/projects/"+w.project+"/permissions", strings.NewReader(content))
	req.Header.Set("Authorization", "Bearer "+w.srv.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT permissions: %d", resp.StatusCode)
	}
}

// run proposes command, approves it, and returns the executed action.
func (w *netWorld) run(t *testing.T, command string) map[string]any {
	t.Helper()
	a := w.srv.must(t, "POST", "/v1/projects/"+w.project+"/actions", w.agent,
		map[string]any{"type": "terminal", "payload": map[string]any{"command": command}}, 201)
	if a["status"] == "pending" {
		a = w.srv.must(t, "POST", "/v1/actions/"+a["id"].(string)+"/approve", w.srv.token, nil, 200)["action"].(map[string]any)
	}
	return a
}

func netOutput(a map[string]any) string {
	r, _ := a["result"].(map[string]any)
	s, _ := r["output"].(string)
	return s
}

func networkSentence(a map[string]any) string {
	r, _ := a["result"].(map[string]any)
	d, _ := r["detail"].(map[string]any)
	s, _ := d["network"].(string)
	return s
}

// refusedEvents returns the network.refused payloads of an action.
func (w *netWorld) refusedEvents(t *testing.T, id string) []map[string]any {
	t.Helper()
	ev := w.srv.must(t, "GET", "/v1/projects/"+w.project+"/events?limit=1000", w.srv.token, nil, 200)
	var out []map[string]any
	items, _ := ev["events"].([]any)
	for _, it := range items {
		e := it.(map[string]any)
		if e["type"] == "network.refused" && e["actionId"] == id {
			out = append(out, e["payload"].(map[string]any))
		}
	}
	return out
}

const pyGet = `python3 -c 'import ssl,sys,urllib.request as u; print(u.urlopen(sys.argv[1], context=ssl._create_unverified_context(), timeout=10).read().decode())' `

// Through a real brabo serve, a sandboxed command reaches a local server
// only where permissions.json names it by literal IP:port, with curl and
// with Python's urllib, over http and https; a raw connect ignoring the
// proxy gets nowhere.
func TestServeNetworkAllowedByALiteralRule(t *testing.T) {
	w := newNetWorld(t)
	w.rules(t, fmt.Sprintf(`{"allow": ["Terminal(echo)", "Network(127.0.0.1:%s)", "Network(127.0.0.1:%s)"]}`, w.pp, w.sp))
	a := w.run(t, fmt.Sprintf("curl -sS --max-time 10 %[1]s/; echo; curl -sSk --max-time 10 %[2]s/; echo; %[3]s %[1]s/; %[3]s %[2]s/", w.plain, w.secure, pyGet))
	if out := netOutput(a); strings.Count(out, "hello from 127.0.0.1:") != 4 {
		t.Fatalf("the fetches: %q (%v)", out, a["result"])
	}
	if s := networkSentence(a); s != "" {
		t.Fatalf("refused: %s", s)
	}
	raw := w.run(t, fmt.Sprintf(`curl -sS --noproxy '*' --max-time 3 %s/; echo " rc=$?"; python3 -c 'import socket; socket.create_connection(("127.0.0.1", %s), 3)' 2>&1 | tail -1`, w.plain, w.pp))
	if out := netOutput(raw); strings.Contains(out, "hello") || !strings.Contains(out, "rc=7") || !strings.Contains(out, "ConnectionRefusedError") {
		t.Fatalf("a connection ignoring the proxy got somewhere: %q", out)
	}
}

// Refused with no rule, with ask, with a deny (deny wins), for a name
// resolving to 127.0.0.1 with a rule for the name only, and for brabo's
// own API and database ports whatever the name and rule: each recorded.
func TestServeNetworkRefusals(t *testing.T) {
	w := newNetWorld(t)
	lit := func(p string) string { return "Network(127.0.0.1:" + p + ")" }
	for _, c := range []struct {
		name, rules, url, verdict, says string
	}{
		{"no rule", `{"allow": ["Terminal(echo)"]}`, w.plain, "none", "would allow it"},
		{"ask", `{"allow": ["` + lit(w.pp) + `"], "ask": ["` + lit(w.pp) + `"]}`, w.plain, "ask", "cannot wait for a human"},
		{"deny wins", `{"allow": ["` + lit(w.pp) + `"], "deny": ["Network(127.0.0.1)"]}`, w.plain, "deny", "deny: Network(127.0.0.1)"},
		{"a name resolving to loopback", `{"allow": ["Network(localhost)"]}`, "http://localhost:" + w.pp, "none", "a loopback address"},
		{"the API by address", `{"allow": ["` + lit(w.apiPort) + `"]}`, "http://127.0.0.1:" + w.apiPort, "deny", "brabo's own listening address"},
		{"the API by name", `{"allow": ["Network(localhost)", "` + lit(w.apiPort) + `"]}`, "http://localhost:" + w.apiPort, "deny", "brabo's own listening address"},
		{"the database", `{"allow": ["Network(localhost)", "` + lit(w.dbPort) + `"]}`, "https://127.0.0.1:" + w.dbPort, "deny", "brabo's own listening address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w.rules(t, c.rules)
			a := w.run(t, "curl -sSk --max-time 10 "+c.url+"/")
			if out := netOutput(a); strings.Contains(out, "hello") {
				t.Fatalf("reached: %q", out)
			}
			if s := networkSentence(a); !strings.Contains(s, c.says) {
				t.Fatalf("the result says %q, want %q", s, c.says)
			}
			evs := w.refusedEvents(t, a["id"].(string))
			if len(evs) != 1 || evs[0]["verdict"] != c.verdict {
				t.Fatalf("network.refused: %v", evs)
			}
		})
	}
}

// Always allow adds the rule and the next run passes.
func TestServeNetworkAlwaysAllow(t *testing.T) {
	w := newNetWorld(t)
	cmd := "curl -sS --max-time 10 " + w.plain + "/"
	a := w.run(t, cmd)
	if want := "network: 127.0.0.1:" + w.pp + " is not allowed (Network(127.0.0.1:" + w.pp + ") would allow it)"; networkSentence(a) != want {
		t.Fatalf("the result says %q, want %q", networkSentence(a), want)
	}
	d := w.srv.must(t, "POST", "/v1/actions/"+a["id"].(string)+"/allow-network", w.srv.token, nil, 200)
	if fmt.Sprint(d["patterns"]) != "[Network(127.0.0.1:"+w.pp+")]" {
		t.Fatalf("allow-network: %v", d)
	}
	if out := netOutput(w.run(t, cmd)); out != "hello from 127.0.0.1:"+w.pp {
		t.Fatalf("the next run: %q", out)
	}
}
