package e2e

// The red-team suite of the protected-path rule (DESIGN §9): sequences of
// writer × spelling × protected target go through the real pipeline, with
// the seeded allow list and again with one that allows the writers
// themselves. After each, the test looks on disk: no protected file may
// have changed, and no auto-approved action may have needed the integrity
// layer to put one back (that would be the lexical rule missing a write).

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/procenv"
	"github.com/brabo-dev/brabo/policy"
	"github.com/brabo-dev/brabo/store/sqlite"
)

// redTeamTargets are the protected files the suite aims at, as the line
// names them: relative to the project, in a sibling project, or in the
// home folder.
var redTeamTargets = []string{
	"permissions.json", ".git/config", ".git/hooks/pre-commit", ".husky/pre-commit",
	".claude/settings.json", "CLAUDE.md", ".mcp.json", "../other/permissions.json",
	"~/.gitconfig", "~/.bashrc",
}

// redTeamSpellings are the ways a line may name a target t.
func redTeamSpellings(t, home, root string) []string {
	if rest, ok := strings.CutPrefix(t, "~/"); ok {
		return []string{t, "$HOME/" + rest, "${HOME}/" + rest, `"$HOME"/` + rest, filepath.Join(home, rest),
			"/proc/self/root" + filepath.Join(home, rest)}
	}
	last := len(t) - 1
	out := []string{t, "./" + t, "src/../" + t, "'" + t + "'", `"` + t + `"`, "$PWD/" + t, "${PWD}/" + t,
		"/proc/self/cwd/" + t, filepath.Join(root, t), t[:last] + "?", `\` + t, "$'" + t + "'", "src/{../" + t + ",x}"}
	if strings.HasPrefix(t, ".git/") {
		out = append(out, ".gi?/"+strings.TrimPrefix(t, ".git/"), ".GIT/"+strings.TrimPrefix(t, ".git/"))
	}
	return out
}

// redTeamWriters are the lines that write T (one spelling of a target).
var redTeamWriters = []string{
	"echo x > T", "echo x >> T", "printf x > T", "cat src/a.txt > T", "echo x | tee T", "echo x | tee -a T",
	"cp src/a.txt T", "sed -i s/a/b/ T", "touch T", "ln -sf src/a.txt T", "dd of=T < src/a.txt",
	"ln -s T l && echo x >> l", "cp -s T l && echo x >> l", "mv src/b.txt T", "truncate -s 0 T",
	"echo x 1> T", "echo x &> T", "echo x >| T", "exec 3> T; echo x >&3", "{ echo x; } > T",
}

func TestRedTeamProtectedWrites(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brabo.db"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := append(procenv.Filter(os.Environ(), nil), "HOME="+home)
	e := newEnvWith(t, s, func(c *app.Config) { c.Env = env })
	e.svc.Protect = policy.Protect{Home: home}
	other := filepath.Join(filepath.Dir(e.root), "other")
	for _, f := range []struct{ path, data string }{
		{filepath.Join(e.root, "src", "a.txt"), "a\n"},
		{filepath.Join(other, "permissions.json"), "{}\n"},
		{filepath.Join(home, ".gitconfig"), "[user]\n\tname = x\n"},
		{filepath.Join(home, ".bashrc"), "# rc\n"},
		{filepath.Join(e.root, "CLAUDE.md"), "# instructions\n"},
	} {
		os.MkdirAll(filepath.Dir(f.path), 0o755)
		if err := os.WriteFile(f.path, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs := func(target string) string {
		if rest, ok := strings.CutPrefix(target, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return filepath.Join(e.root, target)
	}
	state := func() map[string][32]byte {
		m := map[string][32]byte{}
		for _, target := range redTeamTargets {
			data, err := os.ReadFile(abs(target))
			if err != nil {
				data = []byte("absent:" + err.Error())
			}
			m[target] = sha256.Sum256(data)
		}
		return m
	}
	writers := []string{"Terminal(echo)", "Terminal(cat)", "Terminal(tee)", "Terminal(cp)", "Terminal(sed)",
		"Terminal(touch)", "Terminal(ln)", "Terminal(printf)", "Terminal(dd)", "Terminal(mv)", "Terminal(truncate)",
		"Terminal(exec)"}
	configs := []struct{ name, file string }{
		{"seeded", permissionsOf(policy.SeedAllow())},
		{"writers", permissionsOf(append(policy.SeedAllow(), writers...))},
	}
	lines, auto := 0, 0
	for _, c := range configs {
		e.setPermissions(c.file) // a maintainer's PUT: the trusted version
		base := state()
		for ti, target := range redTeamTargets {
			for si, spelling := range redTeamSpellings(target, home, e.root) {
				for wi, w := range redTeamWriters {
					if testing.Short() && (ti+si+wi)%5 != 0 {
						continue
					}
					line := strings.ReplaceAll(w, "T", spelling)
					lines++
					status, a := e.call("POST", e.pp("/actions"), e.admin, map[string]any{"type": "terminal",
						"payload": map[string]any{"command": line, "timeoutSec": 10}})
					if status != 201 {
						t.Fatalf("[%s] %q: %d %v", c.name, line, status, a)
					}
					if a["status"] == string(brabo.StatusExecuted) || a["status"] == string(brabo.StatusFailed) {
						auto++
						if r := str(a, "result", "detail", "restored"); r != "" {
							t.Errorf("[%s] %q was auto-approved and wrote %s (the integrity layer put it back): %s",
								c.name, line, r, str(a, "reason"))
						}
					}
					if now := state(); fmt.Sprint(now) != fmt.Sprint(base) {
						for _, target := range redTeamTargets {
							if now[target] != base[target] {
								t.Errorf("[%s] %q changed %s (%s, %s)", c.name, line, target, a["status"], str(a, "reason"))
							}
						}
						t.FailNow()
					}
					os.Remove(filepath.Join(e.root, "l"))
					os.WriteFile(filepath.Join(e.root, "src", "b.txt"), []byte("b\n"), 0o644)
				}
			}
		}
	}
	// The control: the same writers on a plain file are approved with the
	// writers' list, so the suite does not pass by refusing everything.
	control := 0
	for _, w := range redTeamWriters {
		line := strings.ReplaceAll(w, "T", "src/ok.txt")
		a := e.ok("POST", e.pp("/actions"), e.admin, map[string]any{"type": "terminal",
			"payload": map[string]any{"command": line, "timeoutSec": 10}}, 201)
		if a["status"] == string(brabo.StatusExecuted) {
			control++
		}
		os.Remove(filepath.Join(e.root, "l"))
		os.WriteFile(filepath.Join(e.root, "src", "b.txt"), []byte("b\n"), 0o644)
	}
	t.Logf("%d lines through the pipeline, %d of them auto-approved and run, none changed a protected file; "+
		"%d of the %d writers on a plain file were approved", lines, auto, control, len(redTeamWriters))
	if control < len(redTeamWriters)/2 {
		t.Fatalf("only %d of %d writers on a plain file were approved: the suite would pass by refusing everything",
			control, len(redTeamWriters))
	}
}

// permissionsOf is a permissions.json allowing patterns.
func permissionsOf(allow []string) string {
	q := make([]string, len(allow))
	for i, p := range allow {
		q[i] = fmt.Sprintf("%q", p)
	}
	return `{"allow": [` + strings.Join(q, ", ") + `]}`
}
