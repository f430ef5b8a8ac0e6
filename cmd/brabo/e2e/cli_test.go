package e2e

// The command line's conventions, checked on the real binary: every
// command's help exits 0 and says what it does; --version prints the
// version; every documented error exits with its code and one line.

import (
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestCLIHelp: `brabo <cmd> -h`, `--help` and `brabo help <cmd>` exit 0 and
// print, on standard output, the one-line description, the usage and the
// flags with two dashes; so do `brabo -h` and `brabo help` for brabo.
func TestCLIHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	top := []string{"brabo — the approval pipeline for AI coding agents", "Usage:", "Commands:"}
	commands := helpCommands(t, dir)
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		r := runBrabo(t, dir, nil, args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("brabo %q: want exit 0 and nothing on stderr\n%s", args, r)
		}
		for _, want := range top {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("brabo %q does not say %q\n%s", args, want, r)
			}
		}
	}
	for _, c := range commands {
		// Commands with flags list them, each with two dashes.
		wantFlag := map[string]string{"serve": "  --data string", "demo": "  --keep", "check": "  --permissions string",
			"migrate": "  --db string", "agent": "  --model string", "mcp": "  --config string"}[c.name]
		for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {"help", c.name}} {
			r := runBrabo(t, dir, nil, args...)
			if r.code != 0 || r.stderr != "" {
				t.Errorf("brabo %q: want exit 0 and nothing on stderr\n%s", args, r)
				continue
			}
			if !strings.HasPrefix(r.stdout, "brabo "+c.name+": "+c.summary+"\n") || !strings.Contains(r.stdout, "\nUsage:\n  brabo ") {
				t.Errorf("brabo %q does not start with its description and usage\n%s", args, r)
			}
			if wantFlag != "" && !strings.Contains(r.stdout, "\nFlags:\n") || !strings.Contains(r.stdout, wantFlag) {
				t.Errorf("brabo %q does not list its flags (%q)\n%s", args, wantFlag, r)
			}
			for _, l := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") {
					t.Errorf("brabo %q: a flag with one dash: %q", args, l)
				}
			}
		}
	}
	// The verbs' own flag sets answer -h the same way.
	for _, args := range [][]string{{"admin", "token", "-h"}, {"install", "claude", "-h"}, {"permissions", "show", "-h"}} {
		r := runBrabo(t, dir, nil, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "brabo "+args[0]+": ") || !strings.Contains(r.stdout, "\nFlags:\n  --") {
			t.Errorf("brabo %q: want exit 0, the description and the flags\n%s", args, r)
		}
	}
	// A token's default is the environment's secret: help never prints it.
	r := runBrabo(t, dir, nil, "install", "claude", "-h")
	if strings.Contains(r.stdout, os.Getenv("BRABO_TOKEN")+`"`) && os.Getenv("BRABO_TOKEN") != "" {
		t.Errorf("the help printed BRABO_TOKEN's value")
	}
}

// TestCLIVersion: --version and version print the module version and, for
// a build from a checkout, its VCS revision; the same text either way.
func TestCLIVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := runBrabo(t, dir, nil, "--version")
	b := runBrabo(t, dir, nil, "version")
	if a.code != 0 || b.code != 0 || a.stdout != b.stdout || !strings.HasPrefix(a.stdout, "brabo ") {
		t.Fatalf("brabo --version and brabo version:\n%s\n%s", a, b)
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok || !strings.Contains(a.stdout, bi.GoVersion) {
		t.Errorf("the version does not name the Go version %s:\n%s", bi.GoVersion, a)
	}
}

// TestCLIErrors: each documented error exits with its code and prints one
// line on standard error, "brabo <cmd>: message", and nothing on standard
// output. Usage errors exit 2, failures 1, check's usage 3, and a hook
// that cannot answer denies with 2 as before.
func TestCLIErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	// A port no one answers on, for the clients' "cannot reach" failure.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	noKeys := []string{"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "BRABO_MODEL=", "BRABO_TOKEN=", "BRABO_DB=", "BRABO_DATA="}
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		says string // a part of the one line on stderr
	}{
		{[]string{"chek"}, nil, exitUsage, `brabo: unknown command "chek"`},
		{[]string{"help", "chek"}, nil, exitUsage, `brabo help: unknown command "chek"`},
		{[]string{"version", "now"}, nil, exitUsage, "brabo version: unexpected argument"},
		{[]string{"serve", "--bogus"}, nil, exitUsage, "brabo serve: flag provided but not defined: --bogus"},
		{[]string{"serve", "18093"}, nil, exitUsage, "brabo serve: unexpected argument(s) [\"18093\"]"},
		{[]string{"serve", "--log-level", "loud"}, nil, exitUsage, "brabo serve: --log-level"},
		{[]string{"serve", "--max-pending", "0"}, nil, exitUsage, "brabo serve: --max-pending 0"},
		{[]string{"serve", "--addr", "x", "--data", empty}, nil, exitFailure, "brabo serve: listen tcp: address x"},
		{[]string{"serve", "--db", "mysql://x"}, nil, exitUsage, "brabo serve: --db \"mysql://x\""},
		{[]string{"serve", "--model", "openai:gpt-4o"}, noKeys, exitUsage, "OPENAI_API_KEY is not set"},
		{[]string{"agent", "--model", "openai:gpt-4o", "--data", empty}, noKeys, exitUsage, "brabo agent: --model: model \"openai:gpt-4o\": OPENAI_API_KEY is not set"},
		{[]string{"agent", "--model", "anthropic:claude-x", "--data", empty}, noKeys, exitUsage, "ANTHROPIC_API_KEY is not set"},
		{[]string{"agent", "--data", empty}, noKeys, exitUsage, "brabo agent: no model"},
		{[]string{"agent", "--model", "gpt-4o", "--data", empty}, noKeys, exitUsage, "want openai:<model>"},
		{[]string{"demo", "--bogus"}, nil, exitUsage, "brabo demo: flag provided but not defined: --bogus"},
		{[]string{"demo", "--addr", "256.0.0.1:1"}, nil, exitFailure, "brabo demo: listen tcp"},
		{[]string{"migrate", "now"}, nil, exitUsage, "brabo migrate: unexpected argument"},
		{[]string{"admin"}, nil, exitUsage, "brabo admin: which?"},
		{[]string{"admin", "tokens"}, nil, exitUsage, `brabo admin: unknown subcommand "tokens"`},
		{[]string{"admin", "token", "--data", empty}, nil, exitFailure, "brabo admin token: no database in the data folder"},
		{[]string{"permissions"}, nil, exitUsage, "brabo permissions: which?"},
		{[]string{"permissions", "show"}, nil, exitUsage, "brabo permissions show: --project is required"},
		{[]string{"permissions", "show", "--project", "prj_x"}, noKeys, exitFailure, "brabo permissions show: no token: export BRABO_TOKEN="},
		{[]string{"permissions", "show", "--project", "prj_x", "--url", closed}, []string{"BRABO_TOKEN=brb_x"}, exitFailure, "brabo permissions show: cannot reach brabo at"},
		{[]string{"install"}, nil, exitUsage, "brabo install: which agent?"},
		{[]string{"install", "claude", "--project", "--user"}, nil, exitUsage, "brabo install claude: --project or --user, not both"},
		{[]string{"install", "claude", "--scope", "team"}, nil, exitUsage, `brabo install claude: --scope "team": want project or user`},
		{[]string{"install", "claude", "--url", "http://a", "--server", "http://b"}, nil, exitUsage, "brabo install claude: --url http://a and --server http://b (its old spelling) disagree"},
		{[]string{"install", "claude", "extra"}, nil, exitUsage, "brabo install claude: unexpected argument"},
		{[]string{"mcp"}, nil, exitUsage, "brabo mcp: --config FILE is required"},
		{[]string{"mcp", "--config", filepath.Join(dir, "none.json")}, nil, exitFailure, "brabo mcp: "},
		// check's own codes: 3 for its usage, the decision otherwise.
		{[]string{"check"}, nil, exitCheckUsage, "brabo check: no command"},
		{[]string{"check", "ls", "--json"}, nil, exitCheckUsage, "brabo check: [\"--json\"] after the command is not read as a flag"},
		{[]string{"check", "--json", "-h"}, nil, exitCheckUsage, "brabo check: -h with other arguments"},
		{[]string{"check", "--bogus", "--", "ls"}, nil, exitCheckUsage, "brabo check: flag provided but not defined: --bogus"},
		// The hook's answers are the agents' protocol: a call it cannot
		// read is a deny (exit 2), as before this convention.
		{[]string{"hook", "claude"}, nil, 2, "brabo hook: unknown agent or event"},
	} {
		r := runBraboEnv(t, empty, append(os.Environ(), tc.env...), tc.args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if tc.args[0] == "hook" {
			lines = lines[:1] // the hook prints its usage after the line
		}
		if r.code != tc.code || len(lines) != 1 || !(strings.HasPrefix(lines[0], "brabo ") || strings.HasPrefix(lines[0], "brabo: ")) || !strings.Contains(lines[0], tc.says) {
			t.Errorf("brabo %q: want exit %d and one line saying %q\n%s", tc.args, tc.code, tc.says, r)
		}
		if r.stdout != "" {
			t.Errorf("brabo %q: an error printed on standard output\n%s", tc.args, r)
		}
	}
	// Bare brabo is bad usage: the usage on stderr, exit 2.
	if r := runBrabo(t, dir, nil); r.code != exitUsage || !strings.Contains(r.stderr, "Commands:") || r.stdout != "" {
		t.Errorf("bare brabo: want exit 2 and the usage on stderr\n%s", r)
	}
	// After --, check reads every word as the command's: --json is ls's.
	if r := runBrabo(t, dir, nil, "check", "--", "ls", "--json"); r.code > exitDeny || !strings.Contains(r.stdout, "ls --json") {
		t.Errorf("brabo check -- ls --json: want the decision of \"ls --json\"\n%s", r)
	}
	// Help alone is 0; as a command after --, "-h" is decided.
	if r := runBrabo(t, dir, nil, "check", "-h"); r.code != 0 || !strings.Contains(r.stdout, "brabo check: ") {
		t.Errorf("brabo check -h: want exit 0 and the help\n%s", r)
	}
	if r := runBrabo(t, dir, nil, "check", "--", "-h"); r.code != exitRequireApproval || !strings.HasPrefix(r.stdout, "require_approval") {
		t.Errorf("brabo check -- -h: want the decision of the command \"-h\"\n%s", r)
	}
}

// helpCommand is one line of brabo help's list: a command and its summary.
type helpCommand struct{ name, summary string }

// helpCommands reads the commands brabo help lists (the binary's table;
// cmd/brabo's TestUsageListsEveryCommand checks the list is the whole
// table). Fewer than ten fails: the list was not read.
func helpCommands(t *testing.T, dir string) []helpCommand {
	t.Helper()
	r := runBrabo(t, dir, nil, "help")
	_, list, ok := strings.Cut(r.stdout, "\nCommands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var out []helpCommand
	for _, l := range strings.Split(list, "\n") {
		name, summary, _ := strings.Cut(strings.TrimPrefix(l, "  "), " ")
		if name != "" {
			out = append(out, helpCommand{name, strings.TrimSpace(summary)})
		}
	}
	if !ok || len(out) < 10 {
		t.Fatalf("brabo help lists %d commands, want at least 10\n%s", len(out), r)
	}
	return out
}
