package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestCheckStartInitCost: brabo check is run once per decision, so a
// package of brabo's own that does work at start (parses the web's
// templates, builds an SDK or Docker client, compiles a table) makes every
// check slower although check uses none of it (issue 27, item 9;
// docs/PERFORMANCE.md). GODEBUG=inittrace=1 reports each package's
// initialisation; beyond policy (with its shell analyzer) and the root
// package, which check uses,
// none of brabo's packages may allocate more than 100 KB at start. The web
// templates alone were 510 KB when they were parsed at start.
func TestCheckStartInitCost(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/permissions.json", []byte(`{"allow": ["Terminal(go test)"]}`), 0o644)
	cmd := exec.Command(braboBin, "check", "--root", dir, "--", "go test ./...")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("brabo check: %v\n%s", err, stderr.String())
	}
	const module = "github.com/brabo-dev/brabo"
	allowed := map[string]bool{module: true, module + "/policy": true, module + "/policy/internal/shell": true}
	seen := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init github.com/brabo-dev/brabo/http @8.9 ms, 1.8 ms clock, 510144 bytes, 9010 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || (f[1] != module && !strings.HasPrefix(f[1], module+"/")) {
			continue
		}
		seen++
		n, err := strconv.Atoi(f[7])
		if err != nil || f[8] != "bytes," {
			t.Fatalf("unexpected inittrace line %q", sc.Text())
		}
		if !allowed[f[1]] && n > 100<<10 {
			t.Errorf("%s allocates %d bytes at start, over 100 KB: make it lazy (sync.OnceValue) so that brabo check does not pay for it", f[1], n)
		}
	}
	if seen < 3 {
		t.Fatalf("inittrace showed %d of brabo's packages; is GODEBUG=inittrace=1 still honoured?\n%s", seen, stderr.String())
	}
}
