package policy

// permissions.json (DESIGN §3.1): what parses, what is refused (named with
// the file, the entry and why), and that brabo never decides with an invalid
// file: every decision is require_approval with "permissions.json invalid".

import (
	"errors"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

const testFile = "/home/alice/acme/permissions.json"

// entryWant is one *FileError entry a bad file must produce.
type entryWant struct {
	entry   string // "allow[2]", "deny", or "" for the whole file
	pattern string // the entry as written, when it is one
	why     string // held in Why
}

func TestParseRefusesNamingFileEntryAndWhy(t *testing.T) {
	for _, c := range []struct {
		name    string
		data    string
		entries []entryWant
	}{
		{"an unknown label", `{"allow": ["Terminal(ls)", "Termnal(ls)"]}`,
			[]entryWant{{"allow[1]", "Termnal(ls)", "unknown label Termnal"}}},
		{"a label in snake_case", `{"deny": ["git_push()"]}`, []entryWant{{"deny[0]", "git_push()", "unknown label git_push"}}},
		{"a * inside a token", `{"allow": ["Terminal(ls *.go)"]}`, []entryWant{{"allow[0]", "Terminal(ls *.go)", "a '*' matches only at the end of a token"}}},
		{"a WriteFile path climbing out", `{"allow": ["WriteFile(../x)"]}`, []entryWant{{"allow[0]", "WriteFile(../x)", "cannot climb out"}}},
		{"a WriteFile path that is absolute", `{"allow": ["WriteFile(/etc/x)"]}`, []entryWant{{"allow[0]", "WriteFile(/etc/x)", "not absolute"}}},
		{"a WriteFile ** at the root", `{"allow": ["WriteFile(**)"]}`, []entryWant{{"allow[0]", "WriteFile(**)", `"**" at the root`}}},
		{"a WriteFile ** inside an element", `{"allow": ["WriteFile(src/a**)"]}`, []entryWant{{"allow[0]", "WriteFile(src/a**)", "whole path element"}}},
		{"a WriteFile path that is not clean", `{"allow": ["WriteFile(src//x)"]}`, []entryWant{{"allow[0]", "WriteFile(src//x)", "a path pattern is a clean path"}}},
		{"a * before the end of a token", `{"deny": ["Terminal(rm -*f)"]}`, []entryWant{{"deny[0]", "Terminal(rm -*f)", "a '*' matches only at the end of a token"}}},
		{"a label in lower case", `{"ask": ["terminal(ls)"]}`, []entryWant{{"ask[0]", "terminal(ls)", "unknown label terminal"}}},
		{"a label with a blank before it", `{"allow": [" Terminal(ls)"]}`, []entryWant{{"allow[0]", " Terminal(ls)", "unknown label"}}},
		{"no parentheses", `{"allow": ["Terminal"]}`, []entryWant{{"allow[0]", "Terminal", "a pattern is Label(content)"}}},
		{"text after the parenthesis", `{"allow": ["Terminal(ls) "]}`, []entryWant{{"allow[0]", "Terminal(ls) ", "a pattern is Label(content)"}}},
		{"an empty string", `{"deny": [""]}`, []entryWant{{"deny[0]", "", "a pattern is Label(content)"}}},
		{"a null entry", `{"deny": [null]}`, []entryWant{{"deny[0]", "", "a pattern is Label(content)"}}},
		{"bad JSON, with its line and column", "{\n  \"allow\": [\"Terminal(ls)\",]\n}",
			[]entryWant{{"", "", "not valid JSON at line 2, column 28: invalid character ']'"}}},
		{"bad JSON: a missing comma", "{\"allow\": [\"Terminal(ls)\"]\n \"deny\": []}",
			[]entryWant{{"", "", `not valid JSON at line 2, column 2: invalid character '"' after object key:value pair`}}},
		{"bad JSON: the column counts characters, not bytes", "{\"allow\": [\"Terminal(échô)\" \"x\"]}",
			[]entryWant{{"", "", "not valid JSON at line 1, column 29"}}},
		{"bad JSON: truncated, the column is just past the end", `{"allow": ["Terminal(ls)"`,
			[]entryWant{{"", "", "not valid JSON at line 1, column 26: unexpected end of JSON input"}}},
		{"bad JSON: text after the object", `{"allow": []} x`, []entryWant{{"", "", "not valid JSON at line 1, column 15"}}},
		{"not UTF-8 inside a string is replaced, and the entry is refused", "{\"allow\": [\"\xff\"]}",
			[]entryWant{{"allow[0]", "\uFFFD", "a pattern is Label(content)"}}},
		{"not an object: a list", `["Terminal(ls)"]`, []entryWant{{"", "", "must be a JSON object with the lists allow, deny and ask"}}},
		{"not an object: a string", `"Terminal(ls)"`, []entryWant{{"", "", "must be a JSON object"}}},
		{"a list that is not a list: a string", `{"allow": "Terminal(ls)"}`,
			[]entryWant{{"allow", "", "must be a list of pattern strings"}}},
		{"a list that is not a list: an object", `{"deny": {"Terminal(ls)": true}}`,
			[]entryWant{{"deny", "", "must be a list of pattern strings"}}},
		{"a list that is not a list: a number", `{"ask": 3}`, []entryWant{{"ask", "", "must be a list of pattern strings"}}},
		{"a non-string entry: a number", `{"allow": ["Terminal(ls)", 3]}`,
			[]entryWant{{"allow[1]", "3", `must be a string such as "Terminal(pnpm test)"`}}},
		{"a non-string entry: an object", `{"deny": [{"Terminal": "ls"}]}`,
			[]entryWant{{"deny[0]", `{"Terminal": "ls"}`, "must be a string"}}},
		{"a non-string entry: a list", `{"ask": [["Terminal(ls)"]]}`, []entryWant{{"ask[0]", `["Terminal(ls)"]`, "must be a string"}}},
		{"Terminal() is empty", `{"allow": ["Terminal()"]}`,
			[]entryWant{{"allow[0]", "Terminal()", "Terminal() needs a command: an empty pattern would match every command"}}},
		{"Terminal( ) is empty", `{"deny": ["Terminal( )"]}`, []entryWant{{"deny[0]", "Terminal( )", "Terminal() needs a command"}}},
		{"Terminal(a && b) is not one command", `{"allow": ["Terminal(pnpm test && curl x)"]}`,
			[]entryWant{{"allow[0]", "Terminal(pnpm test && curl x)", "a pattern is one simple command: no operators, redirections or assignments"}}},
		{"Terminal(a | b) is not one command", `{"allow": ["Terminal(ls | sh)"]}`,
			[]entryWant{{"allow[0]", "Terminal(ls | sh)", "a pattern is one simple command"}}},
		{"Terminal(a; b) is a list", `{"allow": ["Terminal(ls; rm -rf /)"]}`,
			[]entryWant{{"allow[0]", "Terminal(ls; rm -rf /)", "a pattern is one simple command, not a list"}}},
		{"Terminal(a \\n b) is a list", `{"allow": ["Terminal(ls\nrm)"]}`,
			[]entryWant{{"allow[0]", "Terminal(ls\nrm)", "a pattern is one simple command, not a list"}}},
		{"Terminal(a &) runs in the background", `{"allow": ["Terminal(ls &)"]}`,
			[]entryWant{{"allow[0]", "Terminal(ls &)", "a pattern is one simple command"}}},
		{"a redirection in a pattern", `{"allow": ["Terminal(echo x > y)"]}`,
			[]entryWant{{"allow[0]", "Terminal(echo x > y)", "no operators, redirections or assignments"}}},
		{"an assignment in a pattern", `{"allow": ["Terminal(A=1 ls)"]}`,
			[]entryWant{{"allow[0]", "Terminal(A=1 ls)", "no operators, redirections or assignments"}}},
		{"a command substitution in a pattern", `{"allow": ["Terminal(ls $(id))"]}`,
			[]entryWant{{"allow[0]", "Terminal(ls $(id))", "a pattern cannot hold a command, process or arithmetic substitution"}}},
		{"a pattern that does not parse names where", `{"deny": ["Terminal(ls))"]}`,
			[]entryWant{{"deny[0]", "Terminal(ls))", "the command does not parse: 1:3:"}}},
		{"a pattern with an unclosed quote names where", `{"deny": ["Terminal(echo 'x)"]}`,
			[]entryWant{{"deny[0]", "Terminal(echo 'x)", "the command does not parse: 1:6: reached EOF without closing quote"}}},
		{"every bad entry of every list is named, in order", `{"allow": ["Nope()", "Terminal(ls)", "Terminal()"], "deny": ["X(y)"], "ask": ["Terminal(a || b)"]}`,
			[]entryWant{{"allow[0]", "Nope()", "unknown label Nope"}, {"allow[2]", "Terminal()", "needs a command"},
				{"deny[0]", "X(y)", "unknown label X"}, {"ask[0]", "Terminal(a || b)", "one simple command"}}},
		{"every list that is not a list is named", `{"allow": "x", "ask": {}}`,
			[]entryWant{{"allow", "", "must be a list"}, {"ask", "", "must be a list"}}},
		// Decided here: a list written twice, or with a capital, would make a
		// rule the reader sees silently not count; the file is refused.
		{"a list written twice", `{"deny": ["Terminal(curl)"], "allow": [], "deny": []}`,
			[]entryWant{{"deny", "", "the list appears more than once"}}},
		{"a list name in another case", `{"Deny": ["Terminal(curl)"]}`,
			[]entryWant{{"Deny", "", `list names are lower case: "Deny" is not read; write "deny"`}}},
		{"a list name in capitals", `{"allow": ["Terminal(ls)"], "ASK": ["GitPush()"]}`,
			[]entryWant{{"ASK", "", `write "ask"`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rules, err := Parse(testFile, []byte(c.data))
			if err == nil {
				t.Fatalf("Parse accepted %s", c.data)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("the error is %T, not a *FileError: %v", err, err)
			}
			if fe.File != testFile {
				t.Errorf("the error names the file %q, want %q", fe.File, testFile)
			}
			if brabo.ErrorCode(err) != brabo.CodeInvalidPermissions {
				t.Errorf("code %q, want invalid_permissions", brabo.ErrorCode(err))
			}
			if rules == nil || rules.Err() == nil {
				t.Fatalf("Parse returned an error but Rules that are not invalid")
			}
			if len(fe.Entries) != len(c.entries) {
				t.Fatalf("%d entries, want %d: %+v", len(fe.Entries), len(c.entries), fe.Entries)
			}
			for i, w := range c.entries {
				got := fe.Entries[i]
				if got.Entry != w.entry || got.Pattern != w.pattern || !strings.Contains(got.Why, w.why) {
					t.Errorf("entry %d = %+v, want entry %q, pattern %q, why holding %q", i, got, w.entry, w.pattern, w.why)
				}
				// The sentence a human reads names all three.
				msg := err.Error()
				if !strings.HasPrefix(msg, testFile+": ") || !strings.Contains(msg, w.entry) || !strings.Contains(msg, got.Why) {
					t.Errorf("the message %q does not name the file, %q and why", msg, w.entry)
				}
			}
			// The same file through Decide: never auto_approve, whatever
			// approves it otherwise; the reason names the entry without the
			// file's absolute path.
			for _, in := range invalidFileInputs(rules) {
				d := Decide(in)
				if d.Policy != brabo.RequireApproval {
					t.Errorf("%s %q with an invalid file: %s (%s), want require_approval", in.Type, in.Command, d.Policy, d.Reason)
				}
				if !strings.HasPrefix(d.Reason, "permissions.json invalid") {
					t.Errorf("%s %q: reason %q, want it to start with \"permissions.json invalid\"", in.Type, in.Command, d.Reason)
				}
				if c.entries[0].entry != "" && !strings.Contains(d.Reason, c.entries[0].entry) {
					t.Errorf("%s %q: the reason %q does not name %s", in.Type, in.Command, d.Reason, c.entries[0].entry)
				}
				if strings.Contains(d.Reason, "/home/alice") {
					t.Errorf("the reason exposes the file's path: %q", d.Reason)
				}
			}
		})
	}
}

// invalidFileInputs are the most permissive proposals there are: each would
// be auto-approved by a valid file, autonomy, auto mode or the floor.
func invalidFileInputs(rules *Rules) []Input {
	scope := Scope{Root: "/srv/projects/acme-1234abcd", Mode: brabo.ModeContainer, ID: "acme-1234abcd"}
	wild := Autonomy{Wildcard: brabo.AutoApprove}
	return []Input{
		{Type: brabo.Terminal, Command: "ls", Role: brabo.Owner, Rules: rules, Scope: scope},
		{Type: brabo.Terminal, Command: "ls", Role: brabo.Owner, Rules: rules, Scope: scope, Autonomy: wild},
		{Type: brabo.Terminal, Command: "ls", Role: brabo.Owner, Rules: rules, Scope: scope, ContainerRunning: true},
		{Type: brabo.Terminal, Command: "cd src && pnpm test", Role: brabo.Owner, Rules: rules, Scope: scope,
			Autonomy: Autonomy{Specific: brabo.AutoApprove}, ContainerRunning: true},
		{Type: brabo.GitCommit, Role: brabo.Owner, Rules: rules, Scope: scope, Autonomy: wild},
		{Type: brabo.ContainerStart, Role: brabo.Owner, Rules: rules, Scope: scope, Autonomy: Autonomy{Specific: brabo.AutoApprove}},
		{Type: brabo.Spend, Role: brabo.Owner, Rules: rules, Scope: scope},
	}
}

// An invalid file still lets deny through: IAM, agent_autonomy deny and the
// built-in denies hold whatever the file (asking instead would loosen them).
func TestInvalidFileKeepsDenies(t *testing.T) {
	rules, _ := Parse("permissions.json", []byte(`{"allow": ["Nope()"]}`))
	runRows(t, []row{
		{name: "invalid file: the built-in deny holds", file: `{"allow": ["Nope()"]}`, cmd: "rm -rf /", auto: true,
			want: D, reason: "built-in deny: Terminal(rm -rf /)", segs: "deny"},
		{name: "invalid file: IAM still denies", file: `{"allow": ["Nope()"]}`, typ: brabo.Spend, role: brabo.Maintainer,
			want: D, reason: "iam: spend requires owner"},
		{name: "invalid file: agent_autonomy deny still denies", file: `{"allow": ["Nope()"]}`, specific: D, cmd: "ls",
			want: D, reason: "agent_autonomy: deny (specific)"},
		{name: "invalid file: a compound with a built-in deny is denied", file: `{"allow": ["Nope()"]}`,
			cmd: "ls && rm -rf /", want: D, reason: "built-in deny: Terminal(rm -rf /)", segs: "none deny"},
		{name: "invalid file: the reason names the entry", file: `{"allow": ["Nope()"]}`, cmd: "ls", auto: true,
			want: RA, reason: `permissions.json invalid: allow[0] "Nope()": unknown label Nope`, segs: "none",
			rules: []string{"permissions.json invalid"}},
		// DESIGN §9: an invalid file never drops its denies.
		{name: "invalid file: the deny it could read still denies", file: `{"allow": ["Nope()"], "deny": ["Terminal(curl)"]}`,
			cmd: "curl x", want: D, reason: "permissions.json deny: Terminal(curl)", segs: "deny"},
		{name: "invalid file: the ask it could read still asks in auto mode", file: `{"allw": ["Terminal(ls)"], "ask": ["Terminal(make)"]}`,
			cmd: "make", auto: true, want: RA, reason: "permissions.json invalid", segs: "ask"},
		{name: "invalid file: its allow approves nothing", file: `{"allow": ["Terminal(ls)", "Nope()"]}`,
			cmd: "ls", want: RA, reason: "permissions.json invalid", segs: "none"},
		{name: "invalid file: a typed deny it could read still denies", file: `{"denny": [], "deny": ["GitCommit()"]}`,
			typ: brabo.GitCommit, auto: true, want: D, reason: "permissions.json deny: GitCommit()"},
		{name: "invalid file: a typed action asks", file: `{"allow": "GitCommit()"}`, typ: brabo.GitCommit, auto: true,
			want: RA, reason: "permissions.json invalid: allow: must be a list of pattern strings"},
	})
	if rules.Warnings() != nil {
		t.Errorf("an invalid file has warnings: %q", rules.Warnings())
	}
}

// A missing file is an empty file, and so is an empty or blank one; lists
// may be null or absent; unknown top-level keys are ignored.
func TestParseAccepts(t *testing.T) {
	for _, c := range []struct {
		name       string
		data       string
		allows     string // a command the file allows, "" for none
		typedAllow brabo.ActionType
	}{
		{"a missing file (nil content)", "\x00missing", "", ""},
		{"an empty file", "", "", ""},
		{"a blank file", " \n\t\n", "", ""},
		{"an empty object", "{}", "", ""},
		{"null", "null", "", ""},
		{"null lists", `{"allow": null, "deny": null, "ask": null}`, "", ""},
		{"empty lists", `{"allow": [], "deny": [], "ask": []}`, "", ""},
		{"the example file", seedExampleFile, "git status", ""},
		{"unknown top-level keys are ignored", `{"$schema": "https://x/schema.json", "version": 2,
			"notes": {"allow": ["Nope()"]}, "tasks": ["Nope()"], "allow": ["Terminal(ls)"]}`, "ls", ""},
		{"a typed pattern", `{"allow": ["GitCommit()", "Terminal(make test)"]}`, "make test", brabo.GitCommit},
		{"a pattern with quotes", `{"allow": ["Terminal('pnpm' \"test\")"]}`, "pnpm test", ""},
		{"a pattern with a $'…' word", `{"allow": ["Terminal($'\\x67it' status)"]}`, "git status", ""},
		{"a UTF-8 pattern", `{"allow": ["Terminal(echo héllo)"]}`, "echo héllo", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var data []byte
			if c.data != "\x00missing" {
				data = []byte(c.data)
			}
			rules, err := Parse(testFile, data)
			if err != nil || rules.Err() != nil {
				t.Fatalf("Parse: %v", err)
			}
			if rules.File() != testFile {
				t.Errorf("File() = %q", rules.File())
			}
			root := newProject(t)
			for _, cmd := range []string{"make build", c.allows} {
				if cmd == "" {
					continue
				}
				d := Decide(Input{Type: brabo.Terminal, Command: cmd, Role: brabo.Developer, Rules: rules, Scope: Scope{Root: root}})
				want := brabo.RequireApproval
				if cmd == c.allows {
					want = brabo.AutoApprove
				}
				if d.Policy != want {
					t.Errorf("%q: %s (%s), want %s", cmd, d.Policy, d.Reason, want)
				}
			}
			typ := c.typedAllow
			if typ == "" {
				typ = brabo.WriteFile
			}
			d := Decide(Input{Type: typ, Role: brabo.Developer, Rules: rules})
			if want := map[bool]brabo.Policy{true: brabo.AutoApprove, false: brabo.RequireApproval}[c.typedAllow != ""]; d.Policy != want {
				t.Errorf("%s: %s (%s), want %s", typ, d.Policy, d.Reason, want)
			}
		})
	}
}

// Content on a label other than Terminal is valid but matches nothing, and
// says so in a warning naming the file and the entry.
func TestParseWarnings(t *testing.T) {
	rules, err := Parse(testFile, []byte(`{"allow": ["GitPush(main)", "Terminal(ls)"], "deny": ["GitCommit(.env)", "Bash(curl:*)"], "ask": ["Spend(100)"]}`))
	if err != nil {
		t.Fatalf("content on a typed label is an error, want a warning: %v", err)
	}
	want := []string{
		testFile + `: allow[0] "GitPush(main)": content is only used for Terminal: GitPush(…) matches nothing; write GitPush()`,
		testFile + `: deny[0] "GitCommit(.env)": content is only used for Terminal: GitCommit(…) matches nothing; write GitCommit()`,
		testFile + `: deny[1] "Bash(curl:*)": read as Terminal(curl:*)`,
		testFile + `: ask[0] "Spend(100)": content is only used for Terminal: Spend(…) matches nothing; write Spend()`,
	}
	got := rules.Warnings()
	if len(got) != len(want) {
		t.Fatalf("warnings %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
	root := newProject(t)
	for _, c := range []struct {
		typ  brabo.ActionType
		cmd  string
		want brabo.Policy
	}{
		{brabo.GitPush, "", brabo.RequireApproval},   // GitPush(main) allows nothing
		{brabo.WriteFile, "", brabo.RequireApproval}, // WriteFile(.env) denies nothing
		{brabo.Spend, "", brabo.RequireApproval},
		{brabo.Terminal, "ls", brabo.AutoApprove},
		{brabo.Terminal, "curl:x y", brabo.Deny}, // the x:* entry still counts for what it matches
	} {
		d := Decide(Input{Type: c.typ, Command: c.cmd, Role: brabo.Owner, Rules: rules, Scope: Scope{Root: root}})
		if d.Policy != c.want {
			t.Errorf("%s %q: %s (%s), want %s", c.typ, c.cmd, d.Policy, d.Reason, c.want)
		}
		if len(d.Warnings) != len(want) {
			t.Errorf("the decision carries %d warnings, want %d", len(d.Warnings), len(want))
		}
	}
	// An allow x:* is the design's own example (pnpm test:*): no warning.
	if r, _ := NewRules("", []string{"Terminal(pnpm test:*)"}, nil, nil); len(r.Warnings()) != 0 {
		t.Errorf("allow Terminal(pnpm test:*) warns: %q", r.Warnings())
	}
}

// An entry holding a character that shows as a blank or not at all warns:
// for the shell it is part of a word, so the entry does not match the
// command its reader sees. It still counts for what it does match.
func TestInvisibleCharacterWarns(t *testing.T) {
	for _, c := range []struct {
		name, entry string
		warn        string // the code point named, "" for no warning
	}{
		{"no-break space", "Terminal(rm\u00a0-rf)", "U+00A0"},
		{"medium mathematical space", "Terminal(0\u205f)", "U+205F"},
		{"zero-width space", "Terminal(git\u200b push)", "U+200B"},
		{"bidi override", "Terminal(ls \u202e)", "U+202E"},
		{"tab is a blank", "Terminal(git\tstatus)", ""},
		{"printable non-ASCII", "Terminal(echo café)", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewRules("", nil, []string{c.entry}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Warnings()
			if c.warn == "" {
				if len(got) != 0 {
					t.Fatalf("warnings %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], c.warn) || !strings.Contains(got[0], "deny[0]") {
				t.Fatalf("warnings %q, want one on deny[0] naming %s", got, c.warn)
			}
		})
	}
	r, _ := NewRules("", nil, []string{"Terminal(rm\u00a0)"}, nil)
	root := newProject(t)
	for cmd, want := range map[string]brabo.Policy{"rm x": brabo.RequireApproval, "rm\u00a0 x": brabo.Deny} {
		if d := Decide(Input{Type: brabo.Terminal, Command: cmd, Role: brabo.Owner, Rules: r, Scope: Scope{Root: root}}); d.Policy != want {
			t.Errorf("%q: %s (%s), want %s", cmd, d.Policy, d.Reason, want)
		}
	}
}

// NewRules is Parse without the JSON: the same errors, named the same way.
func TestNewRules(t *testing.T) {
	_, err := NewRules("", []string{"Terminal(ls)"}, []string{"Terminal()"}, []string{"Foo()"})
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != "permissions.json" || len(fe.Entries) != 2 ||
		fe.Entries[0].Entry != "deny[0]" || fe.Entries[1].Entry != "ask[0]" {
		t.Fatalf("NewRules error %#v", err)
	}
	var nilRules *Rules
	if nilRules.Err() != nil || nilRules.Warnings() != nil || nilRules.File() != "permissions.json" {
		t.Fatalf("the nil *Rules is not the empty file")
	}
	r, err := NewRules("x.json", nil, nil, nil)
	if err != nil || r.File() != "x.json" {
		t.Fatalf("NewRules with no lists: %v", err)
	}
	for _, p := range SeedAllow() {
		if _, err := NewRules("", []string{p}, nil, nil); err != nil {
			t.Errorf("the seeded %s does not compile: %v", p, err)
		}
	}
}

// Keys near a list name make the file invalid; others are warnings
// (DESIGN §9). The table lists keys that must stay warnings.
func TestPermissionsKeys(t *testing.T) {
	for _, key := range []string{"env", "desc", "deps", "all", "any", "key", "tasks", "flow", "$schema", "version", "notes"} {
		rules, err := Parse(testFile, []byte(`{"`+key+`": ["Terminal(x)"], "deny": ["Terminal(curl)"]}`))
		if err != nil {
			t.Errorf("key %q: the file is refused (%v), want a warning", key, err)
			continue
		}
		found := false
		for _, w := range rules.Warnings() {
			found = found || strings.Contains(w, `"`+key+`" is not a list brabo reads`)
		}
		if !found {
			t.Errorf("key %q: no warning in %q", key, rules.Warnings())
		}
	}
	for _, c := range []struct{ key, why string }{
		{"denny", `looks like a misspelt "deny"`},
		{"alow", `looks like a misspelt "allow"`},
		{"allwo", `looks like a misspelt "allow"`},
		{"allowed", `looks like a misspelt "allow"`},
		{"ALOW", `looks like a misspelt "allow"`},
		{"asks", `looks like a misspelt "ask"`},
		{"dny", `looks like a misspelt "deny"`},
		{"Deny", `list names are lower case`},
	} {
		_, err := Parse(testFile, []byte(`{"allow": ["Terminal(ls)"], "`+c.key+`": ["Terminal(curl)"]}`))
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("key %q: %v, want an error holding %q", c.key, err, c.why)
		}
	}
	_, err := Parse(testFile, []byte(`{"permissions": {"allow": ["Bash(ls)"], "deny": ["Bash(curl:*)"]}}`))
	if err == nil || !strings.Contains(err.Error(), `Claude Code's shape`) || !strings.Contains(err.Error(), "at the top level") {
		t.Errorf("Claude Code's shape: %v, want an error saying how to write it", err)
	}
	if _, err := Parse(testFile, []byte(`{"permissions": "see README"}`)); err != nil {
		t.Errorf("a permissions key holding no lists is a warning: %v", err)
	}
}
