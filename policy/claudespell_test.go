package policy

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// claudeCase is one row of the spelling tables: a permissions file in
// Claude Code's spelling, one action, what brabo decides, and a warning
// the file must carry.
type claudeCase struct {
	name             string
	allow, deny, ask []string
	typ              brabo.ActionType
	subject          string // the path, the tool, the command or the host
	want             brabo.Policy
	warn             string // a warning the file must carry ("" none asked)
}

func runClaudeCases(t *testing.T, cases []claudeCase) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "proj")
	home := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rules, err := NewRules("permissions.json", c.allow, c.deny, c.ask)
			if err != nil {
				t.Fatalf("the file is refused: %v", err)
			}
			if c.warn != "" && !strings.Contains(strings.Join(rules.Warnings(), "\n"), c.warn) {
				t.Errorf("warnings %q lack %q", rules.Warnings(), c.warn)
			}
			subject := strings.ReplaceAll(strings.ReplaceAll(c.subject, "$ROOT", root), "$HOME", home)
			if c.typ == networkType {
				got := DecideNetwork(rules, subject, 443)
				want := map[brabo.Policy]NetworkVerdict{brabo.AutoApprove: NetworkAllow, brabo.Deny: NetworkDeny,
					brabo.RequireApproval: NetworkAsk}[c.want]
				if got.Verdict != want {
					t.Errorf("network %s: %s (%s), want %s", subject, got.Verdict, got.Reason, want)
				}
				return
			}
			in := Input{Type: c.typ, Role: brabo.Maintainer, Rules: rules, McpMapped: true,
				Scope:   Scope{Root: root, Mode: brabo.ModeLocal, ID: "proj"},
				Protect: Protect{Home: home}}
			switch c.typ {
			case brabo.McpTool:
				in.Tool = subject
			case brabo.Terminal:
				in.Command, in.Cwd = subject, root
			default:
				in.Path = subject
			}
			if d := Decide(in); d.Policy != c.want {
				t.Errorf("%s %s: %s (%s), want %s", c.typ, subject, d.Policy, d.Reason, c.want)
			}
		})
	}
}

// Read(path) is ReadFile(path), with Claude Code's path forms: ./p and /p
// are in the project folder, a name with no '/' denies at any depth.
func TestClaudeReadIsReadFile(t *testing.T) {
	runClaudeCases(t, []claudeCase{
		{name: "Read(./src/**) allows a read under src", allow: []string{"Read(./src/**)"}, typ: brabo.ReadFile,
			subject: "src/a/b.go", want: brabo.AutoApprove, warn: `"Read(./src/**)": read as ReadFile(src/**)`},
		{name: "Read(/docs/*.md) is the project's docs", ask: []string{"Read(/docs/*.md)"}, typ: brabo.ReadFile,
			subject: "docs/x.md", want: brabo.RequireApproval, warn: "read as ReadFile of docs/*.md, and everything under it"},
		{name: "Read(.env) in deny holds at any depth", deny: []string{"Read(.env)"}, typ: brabo.ReadFile,
			subject: "apps/api/.env", want: brabo.Deny, warn: "at any depth"},
		{name: "Read(.env) in deny holds at the root", deny: []string{"Read(.env)"}, typ: brabo.ReadFile,
			subject: ".env", want: brabo.Deny},
		{name: "Read(secrets) in deny holds what the folder holds", deny: []string{"Read(secrets)"}, typ: brabo.ReadFile,
			subject: "a/secrets/k.pem", want: brabo.Deny},
		{name: "Read(secrets/) is the folder's content", deny: []string{"Read(./secrets/)"}, typ: brabo.ReadFile,
			subject: "secrets/k.pem", want: brabo.Deny},
		{name: "Read alone is ReadFile()", deny: []string{"Read"}, typ: brabo.ReadFile,
			subject: "README.md", want: brabo.Deny, warn: `"Read": read as ReadFile()`},
	})
}

// Edit(path) and Write(path) are WriteFile(path).
func TestClaudeEditAndWriteAreWriteFile(t *testing.T) {
	runClaudeCases(t, []claudeCase{
		{name: "Edit(src/**) allows a write under src", allow: []string{"Edit(src/**)"}, typ: brabo.WriteFile,
			subject: "src/x.go", want: brabo.AutoApprove, warn: "read as WriteFile(src/**)"},
		{name: "Write(./docs/**) allows a write under docs", allow: []string{"Write(./docs/**)"}, typ: brabo.WriteFile,
			subject: "docs/a.md", want: brabo.AutoApprove},
		{name: "Edit(src/**) does not allow another folder", allow: []string{"Edit(src/**)"}, typ: brabo.WriteFile,
			subject: "lib/x.go", want: brabo.RequireApproval},
		{name: "Edit(*.pem) in deny holds at any depth", allow: []string{"Edit"}, deny: []string{"Edit(*.pem)"},
			typ: brabo.WriteFile, subject: "certs/site.pem", want: brabo.Deny},
		{name: "Edit(*.ts) in allow is only the root's", allow: []string{"Edit(*.ts)"}, typ: brabo.WriteFile,
			subject: "a/b.ts", want: brabo.RequireApproval, warn: "read as WriteFile(*.ts)"},
		{name: "Edit(*.ts) in allow is the root's", allow: []string{"Edit(*.ts)"}, typ: brabo.WriteFile,
			subject: "b.ts", want: brabo.AutoApprove},
		{name: "Edit(**/*.ts) in allow is any depth", allow: []string{"Edit(**/*.ts)"}, typ: brabo.WriteFile,
			subject: "a/b/c.ts", want: brabo.AutoApprove, warn: "read as WriteFile of **/*.ts"},
		{name: "Edit(secrets) in ask asks for what it holds", allow: []string{"Edit"}, ask: []string{"Edit(secrets)"}, typ: brabo.WriteFile,
			subject: "x/secrets/a", want: brabo.RequireApproval},
		{name: "Edit alone is WriteFile()", allow: []string{"Edit"}, typ: brabo.WriteFile,
			subject: "a/b.txt", want: brabo.AutoApprove, warn: "read as WriteFile()"},
	})
}

// mcp__server__tool is McpTool(server__tool); mcp__server every tool of it.
func TestClaudeMcpNameIsMcpTool(t *testing.T) {
	runClaudeCases(t, []claudeCase{
		{name: "an exact tool", allow: []string{"mcp__github__create_issue"}, typ: brabo.McpTool,
			subject: "github__create_issue", want: brabo.AutoApprove, warn: "read as McpTool(github__create_issue)"},
		{name: "another tool of the server", allow: []string{"mcp__github__create_issue"}, typ: brabo.McpTool,
			subject: "github__delete_repo", want: brabo.RequireApproval},
		{name: "the whole server", deny: []string{"mcp__github"}, typ: brabo.McpTool,
			subject: "github__delete_repo", want: brabo.Deny, warn: "read as McpTool(github__*)"},
		{name: "the server's star", ask: []string{"mcp__github__*"}, typ: brabo.McpTool,
			subject: "github__x", want: brabo.RequireApproval},
	})
}

// WebFetch(domain:host) is Network(host).
func TestClaudeWebFetchDomainIsNetwork(t *testing.T) {
	runClaudeCases(t, []claudeCase{
		{name: "a host allowed", allow: []string{"WebFetch(domain:docs.python.org)"}, typ: networkType,
			subject: "docs.python.org", want: brabo.AutoApprove, warn: "read as Network(docs.python.org)"},
		{name: "another host not", allow: []string{"WebFetch(domain:docs.python.org)"}, ask: []string{"WebFetch(domain:*.python.org)"},
			typ: networkType, subject: "pypi.python.org", want: brabo.RequireApproval},
		{name: "a host denied", allow: []string{"Network(*.example.com)"}, deny: []string{"WebFetch(domain:evil.example.com)"},
			typ: networkType, subject: "evil.example.com", want: brabo.Deny},
	})
}

// Bash(cmd) is Terminal(cmd); Claude Code's trailing " *" (the words after
// are optional) is brabo's prefix.
func TestClaudeBashIsTerminal(t *testing.T) {
	runClaudeCases(t, []claudeCase{
		{name: "Bash(npm run test:*)", allow: []string{"Bash(npm run test:*)"}, typ: brabo.Terminal,
			subject: "npm run test:unit", want: brabo.AutoApprove, warn: "read as Terminal(npm run test:*)"},
		{name: "Bash(git diff *) matches git diff alone", allow: []string{"Bash(git diff *)"}, typ: brabo.Terminal,
			subject: "git diff", want: brabo.AutoApprove, warn: "read as Terminal(git diff)"},
		{name: "Bash(rm *) in deny holds rm alone", deny: []string{"Bash(rm *)"}, typ: brabo.Terminal,
			subject: "rm", want: brabo.Deny},
	})
}

// Claude Code's //abs and ~/p name paths outside the project folder: a
// deny holds them back, an ask asks (with a warning), an allow is dropped
// with a warning, since brabo's allow never reaches outside the scope.
func TestClaudeOutsidePathHoldsOnlyInDeny(t *testing.T) {
	runClaudeCases(t, []claudeCase{
		{name: "//abs in deny", deny: []string{"Read(//etc/**)"}, typ: brabo.ReadFile,
			subject: "/etc/passwd", want: brabo.Deny, warn: "read as ReadFile of /etc/** (outside the project folder)"},
		{name: "~/p in deny", deny: []string{"Read(~/.ssh/**)"}, typ: brabo.ReadFile,
			subject: "$HOME/.ssh/id_ed25519", want: brabo.Deny},
		{name: "~/p in deny, a file named", deny: []string{"Edit(~/.bashrc)"}, typ: brabo.WriteFile,
			subject: "$HOME/.bashrc", want: brabo.Deny},
		{name: "~/p in deny does not hold the project", allow: []string{"Read(./**)"}, deny: []string{"Read(~/.ssh/**)"},
			typ: brabo.ReadFile, subject: "src/a", want: brabo.AutoApprove},
		{name: "//abs in allow is dropped", allow: []string{"Read(//etc/**)"}, typ: brabo.ReadFile,
			subject: "/etc/hosts", want: brabo.RequireApproval, warn: `allow[0] "Read(//etc/**)": dropped: names a path outside the project folder`},
		{name: "~/p in allow is dropped", allow: []string{"Edit(~/notes/**)"}, typ: brabo.WriteFile,
			subject: "$HOME/notes/a.md", want: brabo.RequireApproval, warn: "dropped"},
		{name: "~/p in ask asks, with a warning", allow: []string{"Read"}, ask: []string{"Read(~/Documents/**)"}, typ: brabo.ReadFile,
			subject: "$HOME/Documents/a.pdf", want: brabo.RequireApproval, warn: "brabo asks for those anyway"},
	})
}

// An entry in another agent's spelling brabo cannot read is dropped, with a
// warning, only from allow: in deny or ask it makes the file invalid, so no
// deny or question is ever dropped; brabo's own typos stay errors.
func TestUnreadableEntryIsDroppedOnlyInAllow(t *testing.T) {
	unreadable := []string{"WebSearch", "Bash", "Glob(src/**)", "Read(src/[ab].ts)", "WebFetch",
		"Bash(git * main)", "Read(../x)", "mcp__bad name", "WebFetch(https://x.org)", "Edit(~bob/x)"}
	for _, src := range unreadable {
		t.Run(src, func(t *testing.T) {
			r, err := NewRules("permissions.json", []string{src, "Terminal(ls)"}, nil, nil)
			if err != nil {
				t.Fatalf("allow %q made the file invalid: %v", src, err)
			}
			if w := strings.Join(r.Warnings(), "\n"); !strings.Contains(w, `allow[0] "`+src+`": dropped: `) {
				t.Errorf("no drop warning for %q: %q", src, r.Warnings())
			}
			if n := len(r.entries(listAllow)); n != 1 {
				t.Errorf("allow keeps %d entries, want 1 (Terminal(ls))", n)
			}
			for _, list := range []string{"deny", "ask"} {
				var deny, ask []string
				if list == "deny" {
					deny = []string{src}
				} else {
					ask = []string{src}
				}
				r, err := NewRules("permissions.json", nil, deny, ask)
				var fe *FileError
				if !errors.As(err, &fe) || len(fe.Entries) != 1 || fe.Entries[0].Entry != list+"[0]" {
					t.Fatalf("%s %q: err %v, want the file invalid naming %s[0]", list, src, err, list)
				}
				if d := Decide(Input{Type: brabo.Terminal, Command: "ls", Role: brabo.Developer, Rules: r,
					Scope: Scope{Root: t.TempDir(), Mode: brabo.ModeLocal}}); d.Policy == brabo.AutoApprove {
					t.Errorf("an invalid file approved: %+v", d)
				}
			}
		})
	}
	if _, err := NewRules("permissions.json", []string{"Termnal(ls)"}, nil, nil); err == nil {
		t.Error("a typo in brabo's own spelling was dropped, not refused")
	}
}

// A dropped allow entry counts as absent in the trust comparison, and
// Claude Code's spelling means what brabo's does.
func TestDroppedAllowEntryIsAbsentInTrust(t *testing.T) {
	parse := func(s string) *Rules {
		r, _ := Parse("permissions.json", []byte(s))
		return r
	}
	for _, c := range []struct {
		name, trusted, onDisk string
		want                  ChangeKind
	}{
		{"a dropped entry added changes nothing", `{"allow": ["Terminal(ls)"]}`, `{"allow": ["Terminal(ls)", "WebSearch", "Read(//etc/**)"]}`, ChangeSame},
		{"a dropped entry removed changes nothing", `{"allow": ["Glob", "Terminal(ls)"]}`, `{"allow": ["Terminal(ls)"]}`, ChangeSame},
		{"the spellings are one meaning", `{"allow": ["ReadFile(src/**)", "McpTool(gh__x)", "Network(a.org)", "WriteFile()"], "deny": ["Terminal(curl)"]}`,
			`{"allow": ["Read(./src/**)", "mcp__gh__x", "WebFetch(domain:a.org)", "Edit"], "deny": ["Bash(curl *)"]}`, ChangeSame},
		{"a readable Claude allow is a loosening", `{"allow": ["Terminal(ls)"]}`, `{"allow": ["Terminal(ls)", "Edit(src/**)"]}`, ChangeLoosen},
		{"a Claude deny is a tightening", `{}`, `{"deny": ["Read(~/.ssh/**)"]}`, ChangeTighten},
		{"an unreadable deny is invalid, not dropped", `{"deny": ["Terminal(curl)"]}`, `{"deny": ["Terminal(curl)", "WebSearch"]}`, ChangeInvalid},
		{"a deny at any depth is not the root's", `{"deny": ["ReadFile(.env)"]}`, `{"deny": ["Read(.env)"]}`, ChangeLoosen},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Compare(parse(c.trusted), parse(c.onDisk)); got.Kind != c.want {
				t.Errorf("Compare: %s, want %s", got.Summary(), c.want)
			}
		})
	}
}

// FuzzClaudeSpelling: whatever the entry, reading it never panics; a deny
// or an ask is either kept or makes the file invalid, never dropped; an
// entry read as brabo's own spelling means what that spelling does; and an
// allow never names more paths than the same entry in deny.
func FuzzClaudeSpelling(f *testing.F) {
	for _, s := range []string{"Read(./src/**)", "Read(.env)", "Edit(/docs/*.md)", "Write(//etc/**)", "Read(~/.ssh/**)",
		"mcp__github__create_issue", "mcp__github", "WebFetch(domain:example.com)", "Bash(npm run test:*)",
		"Bash(git diff *)", "Read(**/*.ts)", "Edit(secrets/)", "Read", "WebSearch", "Read(../x)", "Bash(a * b)"} {
		f.Add(s)
	}
	paths := []string{".env", "a/.env", "src/a.go", "secrets/k", "docs/x.md", "a/b/c.ts"}
	f.Fuzz(func(t *testing.T, src string) {
		for _, k := range []listKind{listDeny, listAsk} {
			lists := [3][]string{}
			lists[k] = []string{src}
			r, err := compile("permissions.json", lists)
			if err == nil && len(r.entries(k)) != 1 {
				t.Fatalf("%s %q was dropped without making the file invalid", listNames[k], src)
			}
		}
		allow, ok, aerr := parseClaudePattern(src, listAllow)
		if !ok || aerr != nil {
			return
		}
		if s := allow.synonym; strings.HasSuffix(s, ")") && !strings.Contains(s, " of ") {
			q, _, err := parsePattern(s)
			if err != nil {
				t.Fatalf("%q is read as %q, which brabo refuses: %v", src, s, err)
			}
			if q.normalKey() != allow.normalKey() {
				t.Fatalf("%q is read as %q but means %q, not %q", src, s, allow.normalKey(), q.normalKey())
			}
		}
		deny, _, derr := parseClaudePattern(src, listDeny)
		if derr != nil {
			t.Fatalf("%q reads in allow but not in deny: %v", src, derr)
		}
		if pathLabel(string(allow.typ)) && !allow.path.outside() {
			for _, p := range paths {
				if allow.path.matchPath(p, true, "/r/"+p, "/home/u") && !deny.path.matchPath(p, true, "/r/"+p, "/home/u") {
					t.Fatalf("%q names %s in allow but not in deny", src, p)
				}
			}
		}
	})
}
