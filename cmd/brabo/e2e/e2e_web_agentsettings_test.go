package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/store/sqlite"
)

// The agents page shows the project's wait cap and its cap on parallel
// dev agents; a maintainer saves them (lowering the cap only) and
// proposes a raise, which waits in the queue; a developer sees them and
// changes nothing.
func TestWebAgentSettings(t *testing.T) {
	s, err := sqlite.Open(t.Context(), t.TempDir()+"/brabo.db")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	page := "/ui/projects/" + e.project + "/agents"
	w := newWebClient(t, e.srv.URL)
	w.login(e.maintainer)
	_, body := w.do("GET", page, nil, nil)
	if !strings.Contains(body, `data-wait-cap="0"`) || !strings.Contains(body, `data-max-parallel="3"`) ||
		!strings.Contains(body, "the server's default") || !strings.Contains(body, `class="settings"`) {
		t.Fatalf("the settings box:\n%s", body)
	}
	post := func(c *webClient, path string, form url.Values) (int, string) {
		resp, body := c.do("POST", path, form, map[string]string{"X-CSRF-Token": c.csrf})
		return resp.StatusCode, body
	}
	code, body := post(w, "/ui/projects/"+e.project+"/settings", url.Values{"waitCapMinutes": {"45"}, "maxParallel": {"2"}})
	if code != http.StatusOK || !strings.Contains(body, `data-wait-cap="45"`) || !strings.Contains(body, `data-max-parallel="2"`) {
		t.Fatalf("save: %d %s", code, body)
	}
	p := e.ok("GET", e.pp(""), e.admin, nil, 200)["project"].(map[string]any)
	if p["waitCapSec"] != float64(2700) || p["maxParallel"] != float64(2) {
		t.Fatalf("the project after the save: %v", p)
	}
	code, body = post(w, "/ui/projects/"+e.project+"/settings", url.Values{"waitCapMinutes": {"45"}, "maxParallel": {"9"}})
	if code != http.StatusConflict || !strings.Contains(body, "raise_max_parallel") {
		t.Fatalf("a raise through save: %d %s", code, body)
	}
	code, body = post(w, "/ui/projects/"+e.project+"/settings", url.Values{"waitCapMinutes": {"soon"}, "maxParallel": {"2"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "waitCapMinutes") {
		t.Fatalf("a bad wait cap: %d %s", code, body)
	}
	code, body = post(w, "/ui/projects/"+e.project+"/raise", url.Values{"maxParallel": {"6"}, "reason": {"release week"}})
	if code != http.StatusOK || !strings.Contains(body, "raise_max_parallel to 6 proposed") || !strings.Contains(body, "pending") {
		t.Fatalf("raise: %d %s", code, body)
	}
	queue := e.ok("GET", "/v1/queue", e.admin, nil, 200)["actions"].([]any)
	found := false
	for _, x := range queue {
		a := x.(map[string]any)
		if a["type"] == "raise_max_parallel" && a["actorId"] == e.memberID(e.maintainer) && a["status"] == "pending" {
			found = true
		}
	}
	if !found {
		t.Fatalf("the raise is not in the queue: %v", queue)
	}
	if p := e.ok("GET", e.pp(""), e.admin, nil, 200)["project"].(map[string]any); p["maxParallel"] != float64(2) {
		t.Fatalf("a proposed raise changed the cap: %v", p)
	}

	dev := newWebClient(t, e.srv.URL)
	dev.login(e.developer)
	_, body = dev.do("GET", page, nil, nil)
	if strings.Contains(body, `class="settings"`) || !strings.Contains(body, "Changing these needs maintainer") {
		t.Fatalf("a developer's settings box:\n%s", body)
	}
	if code, _ := post(dev, "/ui/projects/"+e.project+"/settings", url.Values{"waitCapMinutes": {"1"}, "maxParallel": {"1"}}); code != http.StatusForbidden {
		t.Fatalf("a developer's save: %d", code)
	}
	if p := e.ok("GET", e.pp(""), e.admin, nil, 200)["project"].(map[string]any); p["waitCapSec"] != float64(2700) {
		t.Fatalf("a refused save wrote: %v", p)
	}
}
