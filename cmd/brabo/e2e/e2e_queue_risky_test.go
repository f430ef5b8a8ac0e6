package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo/store/sqlite"
)

var cardIDRE = regexp.MustCompile(`<article class="card [^"]*"[^>]*id="card-(act_[0-9a-f]+)"|id="card-(act_[0-9a-f]+)"`)

// cardIDs lists the ids of the cards of a queue page, in their order.
func cardIDs(page string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range cardIDRE.FindAllStringSubmatch(page, -1) {
		id := m[1] + m[2]
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// TestRiskyCardsComeFirstAcrossTheQueue (issue 28, "sorts first"): the
// oldest pending actions are risky — a push to main, a write whose file
// was made executable on disk after the proposal — and 120 newer ones are
// not: the risky ones open page 1, though newest first they would be on
// page 2, and page 2 holds only plain cards.
func TestRiskyCardsComeFirstAcrossTheQueue(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, s)
	e.svc.MaxPending = 1000
	push := str(e.terminal("git push origin main"), "id")
	script := filepath.Join(e.root, "tool")
	os.WriteFile(script, []byte("echo old\n"), 0o644)
	write := str(e.propose(e.agent, "write_file", map[string]any{"path": "tool", "content": "echo new\n"}), "id")
	const n = 120
	for i := 0; i < n; i++ {
		if st, out, err := e.proposeRaw(e.agent, map[string]any{"command": fmt.Sprintf("touch q%03d", i)}); st != 201 || err != nil {
			t.Fatalf("proposal %d: %d %v %v", i, st, out, err)
		}
	}
	for _, id := range []string{push, write} {
		if a := e.card(id); str(a, "status") != "pending" {
			t.Fatalf("%s is %s, want pending", id, str(a, "status"))
		}
	}
	os.Chmod(script, 0o755)

	w := newWebClient(t, e.srv.URL)
	w.login(e.maintainer)
	_, one := w.do("GET", "/", nil, nil)
	ids := cardIDs(one)
	if len(ids) != 100 {
		t.Fatalf("page 1 shows %d cards, want 100", len(ids))
	}
	if ids[0] != write && ids[1] != write || ids[0] != push && ids[1] != push {
		t.Fatalf("page 1 opens with %v, want the risky %s and %s first", ids[:3], push, write)
	}
	if !strings.Contains(one, "a write to a file that runs") {
		t.Errorf("the write's card is not marked risky on page 1")
	}
	_, two := w.do("GET", "/?page=2", nil, nil)
	ids2 := cardIDs(two)
	if len(ids2) != n+2-100 {
		t.Fatalf("page 2 shows %d cards, want %d", len(ids2), n+2-100)
	}
	for _, id := range ids2 {
		if id == push || id == write {
			t.Fatalf("page 2 shows the risky %s again", id)
		}
	}
	// The live fragment is in the same order.
	_, frag := w.do("GET", "/ui/queue", nil, nil)
	if f := cardIDs(frag); len(f) < 2 || f[0] != ids[0] || f[1] != ids[1] {
		t.Errorf("the fragment opens with %v, the page with %v", f[:min(2, len(f))], ids[:2])
	}
}
