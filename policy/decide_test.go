package policy

// The table-driven tests of Decide share one row type and one runner,
// written here. Every row states the decision (Policy), how its Reason
// starts (the rule that decided, DESIGN §4), and for a terminal action the
// verdict of every segment, in source order. seedpage_test.go turns the
// seed permissions page into rows, adversarial_test.go attacks the shell
// analysis, scope_test.go the path scope, rules_test.go the file.

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// rootToken stands for the scope root (a fresh temp dir) in a row's
// command, cwd, root, reason, tokens and patterns.
const rootToken = "<root>"

// noRole is a row's way to say "the principal has no role at all".
const noRole brabo.Role = "-"

// row is one decision Decide must make.
type row struct {
	name string

	// the proposal
	typ    brabo.ActionType // "" is terminal
	cmd    string
	cwd    string
	role   brabo.Role // "" is owner; noRole is none
	target string     // git_merge's target branch
	path   string     // write_file's path

	// what Decide is given
	allow, deny, ask   []string
	seed               bool     // SeedAllow() comes before allow
	file               string   // permissions.json content, parsed (instead of the lists) when set
	agentAllow         []string // the agent's own allow patterns (Input.AgentAllow)
	specific, wildcard brabo.Policy
	auto               bool // wildcard auto_approve: auto mode
	container          bool
	root               string             // the scope root when not the temp project ("" is the temp project)
	programs           map[string]Program // Input.Programs (<root> replaced in keys and paths)

	// what Decide must return
	want   brabo.Policy
	reason string // how Reason starts
	segs   string // terminal: the verdict of each segment, space separated ("" is none)
	verbs  string // optional: the verb of each segment, space separated
	tokens []string
	rules  []string // optional: how each segment's Rule starts ("" skips one)
	warn   string   // optional: a warning holds this
}

// testScope is the Mode and ID every row's Scope carries; the decision must
// name the root by them and never by its absolute path.
var testScope = Scope{Mode: brabo.ModeLocal, ID: "acme-1234abcd"}

// newProject returns a real project folder with a few sub folders.
func newProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"src/app", "lib/core", "docs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckRoot(root); err != nil {
		t.Fatalf("the temp dir cannot be a scope root: %v", err)
	}
	return root
}

func withRoot(s, root string) string { return strings.ReplaceAll(s, rootToken, root) }

func withRootAll(list []string, root string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = withRoot(s, root)
	}
	return out
}

// input builds what Decide is given for r, in the project root.
func (r row) input(t *testing.T, root string) Input {
	t.Helper()
	in := Input{
		Type:             r.typ,
		Command:          withRoot(r.cmd, root),
		Cwd:              withRoot(r.cwd, root),
		Role:             r.role,
		TargetBranch:     r.target,
		Path:             withRoot(r.path, root),
		ContainerRunning: r.container,
		Autonomy:         Autonomy{Specific: r.specific, Wildcard: r.wildcard},
		Scope:            testScope,
	}
	in.Scope.Root = root
	if r.root != "" {
		in.Scope.Root = withRoot(r.root, root)
	}
	if in.Type == "" {
		in.Type = brabo.Terminal
	}
	switch in.Role {
	case "":
		in.Role = brabo.Owner
	case noRole:
		in.Role = ""
	}
	if r.auto {
		in.Autonomy.Wildcard = brabo.AutoApprove
	}
	switch {
	case r.file != "":
		in.Rules, _ = Parse(filepath.Join(root, "permissions.json"), []byte(withRoot(r.file, root)))
	case r.seed || r.allow != nil || r.deny != nil || r.ask != nil:
		allow := withRootAll(r.allow, root)
		if r.seed {
			allow = append(SeedAllow(), allow...)
		}
		rules, err := NewRules("", allow, withRootAll(r.deny, root), withRootAll(r.ask, root))
		if err != nil {
			t.Fatalf("the row's rules do not compile: %v", err)
		}
		in.Rules = rules
	}
	if r.programs != nil {
		in.Programs = map[string]Program{}
		for k, p := range r.programs {
			p.Path, p.Real, p.ExecPath = withRoot(p.Path, root), withRoot(p.Real, root), withRoot(p.ExecPath, root)
			in.Programs[withRoot(k, root)] = p
		}
	}
	if r.agentAllow != nil {
		agent, err := NewRules("agent patterns", withRootAll(r.agentAllow, root), nil, nil)
		if err != nil {
			t.Fatalf("the row's agent patterns do not compile: %v", err)
		}
		in.AgentAllow = agent
	}
	return in
}

// runRows runs every row as a subtest, each in a project folder of its own.
func runRows(t *testing.T, rows []row) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rows {
		if r.name == "" || seen[r.name] {
			t.Fatalf("row names must be unique and say the rule they show: %q", r.name)
		}
		seen[r.name] = true
	}
	root := newProject(t)
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			in := r.input(t, root)
			d := Decide(in)
			checkRow(t, r, in, d, root, false)
		})
	}
}

// checkRow asserts everything a row states of a decision, and what holds
// of every decision. A strict row (loose false) states its reason and its
// segments ("" is none); a loose row states what it checks, and an empty
// reason or segs is not checked — but never taken from the decision.
func checkRow(t *testing.T, r row, in Input, d brabo.Decision, root string, loose bool) {
	t.Helper()
	show := func() string {
		var b strings.Builder
		b.WriteString("\n  decision: " + string(d.Policy) + " | " + d.Reason)
		for i, s := range d.Segments {
			b.WriteString("\n  seg " + string(rune('0'+i%10)) + ": " + string(s.Verdict) + " " +
				strings.Join(quoteAll(s.Tokens), " ") + " | " + s.Rule)
			if len(s.Notes) > 0 {
				b.WriteString(" | notes: " + strings.Join(s.Notes, "; "))
			}
		}
		for _, w := range d.Warnings {
			b.WriteString("\n  warning: " + w)
		}
		return b.String()
	}
	if strings.HasPrefix(d.Reason, "internal:") {
		t.Fatalf("Decide panicked:%s", show())
	}
	if d.Policy != r.want {
		t.Errorf("policy %s, want %s%s", d.Policy, r.want, show())
	}
	if want := withRoot(r.reason, root); (r.reason == "" && !loose) || !strings.HasPrefix(d.Reason, want) {
		t.Errorf("reason %q, want it to start with %q%s", d.Reason, want, show())
	}
	if d.ScopeRoot != (brabo.ScopeRoot{Mode: in.Scope.Mode, ID: in.Scope.ID}) {
		t.Errorf("scopeRoot %+v, want the mode and relative id of the scope %+v", d.ScopeRoot, testScope)
	}
	if in.Type != brabo.Terminal {
		if len(d.Segments) != 0 {
			t.Errorf("a %s action has segments:%s", in.Type, show())
		}
	} else {
		var got []string
		for _, s := range d.Segments {
			got = append(got, string(s.Verdict))
		}
		if (r.segs != "" || !loose) && strings.Join(got, " ") != r.segs {
			t.Errorf("segment verdicts %q, want %q%s", strings.Join(got, " "), r.segs, show())
		}
	}
	if r.verbs != "" {
		var got []string
		for _, s := range d.Segments {
			v := "-"
			if len(s.Tokens) > 0 {
				v = s.Tokens[0]
			}
			got = append(got, v)
		}
		if strings.Join(got, " ") != withRoot(r.verbs, root) {
			t.Errorf("segment verbs %q, want %q%s", strings.Join(got, " "), withRoot(r.verbs, root), show())
		}
	}
	if r.tokens != nil {
		var got []string
		for _, s := range d.Segments {
			got = append(got, strings.Join(s.Tokens, " "))
		}
		if want := withRootAll(r.tokens, root); !reflect.DeepEqual(got, want) {
			t.Errorf("segment tokens %q, want %q%s", got, want, show())
		}
	}
	if r.rules != nil {
		if len(r.rules) != len(d.Segments) {
			t.Errorf("%d segment rules stated for %d segments%s", len(r.rules), len(d.Segments), show())
		} else {
			for i, want := range r.rules {
				if want != "" && !strings.HasPrefix(d.Segments[i].Rule, withRoot(want, root)) {
					t.Errorf("segment %d rule %q, want it to start with %q%s", i, d.Segments[i].Rule, withRoot(want, root), show())
				}
			}
		}
	}
	if r.warn != "" {
		found := false
		for _, w := range d.Warnings {
			found = found || strings.Contains(w, r.warn)
		}
		if !found {
			t.Errorf("no warning holds %q%s", r.warn, show())
		}
	}
	// Whatever the row, what holds of every decision.
	if d.Policy == brabo.AutoApprove {
		for i, s := range d.Segments {
			switch s.Verdict {
			case brabo.VerdictDeny, brabo.VerdictAsk, brabo.VerdictOpaque:
				t.Errorf("auto_approve with segment %d of verdict %s%s", i, s.Verdict, show())
			}
		}
	}
	for i, s := range d.Segments {
		if s.Verdict == brabo.VerdictDeny && d.Policy != brabo.Deny {
			t.Errorf("segment %d is denied but the command is not%s", i, show())
		}
	}
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		if s == "" || strings.ContainsAny(s, " \t\n") {
			s = "'" + s + "'"
		}
		out[i] = s
	}
	return out
}

// TestDecideIsTotal: Decide never panics, and asks a human for what it does
// not understand (DESIGN §4: pure and total; never fails open).
func TestDecideIsTotal(t *testing.T) {
	runRows(t, []row{
		{name: "an unknown action type is require_approval naming it", typ: "git_rebase", want: brabo.RequireApproval,
			reason: `invalid action: unknown type "git_rebase"`},
		{name: "an empty action type is require_approval", typ: brabo.ActionType(" "), want: brabo.RequireApproval,
			reason: "invalid action: unknown type"},
		{name: "an unknown role is below every minimum", cmd: "ls", role: "admin", seed: true, want: brabo.Deny,
			reason: "iam: terminal requires developer"},
		{name: "no role is below every minimum", typ: brabo.GitCommit, role: noRole, want: brabo.Deny,
			reason: "iam: git_commit requires developer"},
		{name: "an unknown agent_autonomy mode asks instead of guessing", cmd: "ls", seed: true,
			specific: "yolo", want: brabo.RequireApproval, reason: `agent_autonomy: unknown mode "yolo"`},
		{name: "an unknown wildcard mode asks instead of guessing", typ: brabo.GitCommit, wildcard: "always",
			want: brabo.RequireApproval, reason: `agent_autonomy: unknown mode "always"`},
		{name: "nil Rules is the empty file", cmd: "ls", want: brabo.RequireApproval,
			reason: "default: no rule approves it", segs: "none"},
		{name: "an empty command is require_approval naming why", cmd: "", want: brabo.RequireApproval,
			reason: "command cannot be analysed: it is empty"},
		{name: "a blank command is require_approval", cmd: " \t\n ", seed: true, auto: true, container: true,
			want: brabo.RequireApproval, reason: "command cannot be analysed: it is empty"},
		{name: "a comment runs no program and is not approved by the file", cmd: "# ls", seed: true,
			want: brabo.RequireApproval, reason: "default: no rule approves it"},
		{name: "a bare assignment runs no program: no rule can allow it", cmd: "x=1", seed: true,
			want: brabo.RequireApproval, reason: "default: no rule approves it", segs: "none",
			rules: []string{"a variable assignment: no rule can allow it"}},
		{name: "a bare assignment next to an allowed program is a compound with no rule", cmd: "x=1; ls", seed: true,
			want: brabo.RequireApproval, reason: "compound: the segment \"x=1\" has no rule", segs: "none allow"},
		{name: "a bare assignment of an upper-case name may reach the programs after it", cmd: "X=1; ls", seed: true,
			want: brabo.RequireApproval, reason: "compound: the segment \"X=1\" has no rule", segs: "none allow opaque",
			rules: []string{"", "", "opaque: the line sets X, which changes what bash or its programs run"}},
		{name: "an invalid scope root never approves", cmd: "ls", seed: true, root: "/", want: brabo.RequireApproval,
			reason: "scope: invalid project folder: the project folder \"/\" is a system directory", segs: "allow"},
		{name: "an invalid scope root never approves in auto mode either", cmd: "ls", seed: true, root: "/etc", auto: true,
			want: brabo.RequireApproval, reason: "scope: invalid project folder", segs: "allow"},
		{name: "an empty scope root never approves", cmd: "ls", seed: true, root: " ", want: brabo.RequireApproval,
			reason: "scope: invalid project folder", segs: "allow"},
		{name: "a tampered scope root with .. never approves", cmd: "ls", seed: true, root: "<root>/../..",
			want: brabo.RequireApproval, reason: "scope: invalid project folder", segs: "allow"},
		{name: "an invalid scope root does not make an in-scope cd", cmd: "cd src", root: "/", want: brabo.RequireApproval,
			reason: "default: no rule approves it", segs: "none"},
		{name: "deny still wins with an invalid scope root", cmd: "rm -rf /", root: "/", want: brabo.Deny,
			reason: "built-in deny: Terminal(rm -rf /)", segs: "deny"},
	})
}

// TestDecideTypedActions: every type other than terminal is decided by its
// Label() patterns and agent_autonomy; the content of a typed pattern is
// never used (DESIGN §3.1).
func TestDecideTypedActions(t *testing.T) {
	var rows []row
	for _, typ := range brabo.ActionTypes() {
		if typ == brabo.Terminal {
			continue
		}
		label := typ.Label() + "()"
		rows = append(rows,
			row{name: string(typ) + ": no rule is require_approval", typ: typ, want: brabo.RequireApproval,
				reason: "default: no rule approves it"},
			row{name: string(typ) + ": deny " + label + " is deny", typ: typ, deny: []string{label},
				allow: []string{label}, auto: true, want: brabo.Deny, reason: "permissions.json deny: " + label},
			row{name: string(typ) + ": ask " + label + " is require_approval", typ: typ, ask: []string{label},
				allow: []string{label}, want: brabo.RequireApproval, reason: "permissions.json ask: " + label},
			row{name: string(typ) + ": agent_autonomy deny is deny before the file", typ: typ, specific: brabo.Deny,
				allow: []string{label}, want: brabo.Deny, reason: "agent_autonomy: deny (specific)"},
			row{name: string(typ) + ": a Terminal pattern says nothing of it", typ: typ,
				allow: []string{"Terminal(ls)"}, deny: []string{"Terminal(git)"}, want: brabo.RequireApproval,
				reason: "default: no rule approves it"},
			row{name: string(typ) + ": another type's label says nothing of it", typ: typ,
				deny: []string{otherLabel(typ)}, want: brabo.RequireApproval, reason: "default: no rule approves it"},
		)
		want, reason := brabo.AutoApprove, "permissions.json allow: "+label
		if c, ok := typedCap(typ); ok {
			want, reason = brabo.RequireApproval, c
		}
		rows = append(rows, row{name: string(typ) + ": allow " + label, typ: typ, allow: []string{label},
			target: "feature/x", want: want, reason: reason})
	}
	runRows(t, rows)
}

// typedCap returns how the reason of the cap of DESIGN §4.6 on an
// auto-approved typed action starts (a git_merge into a feature branch is
// not capped).
func typedCap(typ brabo.ActionType) (string, bool) {
	switch typ {
	case brabo.GitPush:
		return "cap: git_push leaves the machine", true
	case brabo.PrOpen:
		return "cap: pr_open leaves the machine", true
	case brabo.InstructionPatch:
		return "cap: instruction_patch", true
	case brabo.Parallelize:
		return "cap: parallelize", true
	case brabo.RaiseMaxParallel:
		return "cap: raise_max_parallel", true
	case brabo.ContainerRemove:
		return "cap: container_remove", true
	case brabo.ContainerHandoff:
		return "cap: container_handoff", true
	}
	return "", false
}

func otherLabel(typ brabo.ActionType) string {
	if typ == brabo.GitPush {
		return "PrOpen()"
	}
	return "GitPush()"
}

// TestDecideReasonNeverHoldsTheRootPath: reasons are stored in events every
// member reads; the scope root is named by mode and relative id (DESIGN §5).
func TestDecideReasonNeverHoldsTheRootPath(t *testing.T) {
	root := newProject(t)
	bad, _ := Parse(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Nope(x)"]}`))
	for _, in := range []Input{
		{Type: brabo.Terminal, Command: "ls", Rules: bad},
		{Type: brabo.GitCommit, Rules: bad},
		{Type: brabo.Terminal, Command: "cat /etc/passwd"},
		{Type: brabo.Terminal, Command: "cd src && ls", Cwd: "src"},
	} {
		in.Role, in.Scope = brabo.Owner, testScope
		in.Scope.Root = root
		in.Autonomy.Specific = brabo.AutoApprove
		d := Decide(in)
		if strings.Contains(d.Reason, root) {
			t.Errorf("%s %q: the reason holds the root path: %s", in.Type, in.Command, d.Reason)
		}
		if d.ScopeRoot.ID != testScope.ID || d.ScopeRoot.Mode != brabo.ModeLocal {
			t.Errorf("%s %q: scopeRoot %+v", in.Type, in.Command, d.ScopeRoot)
		}
	}
}

// TestDecideIsPure: the same input gives the same decision, and Decide does
// not change its input.
func TestDecideIsPure(t *testing.T) {
	root := newProject(t)
	rules, err := NewRules("", append(SeedAllow(), "Terminal(pnpm test)"), []string{"Terminal(curl)"}, []string{"Terminal(make)"})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"cd src && pnpm test | tee out", "ls && curl x", "make; git push", "$x", "cat /etc/x"} {
		in := Input{Type: brabo.Terminal, Command: cmd, Role: brabo.Developer, Rules: rules, Scope: Scope{Root: root}}
		first := Decide(in)
		for i := 0; i < 3; i++ {
			if again := Decide(in); !reflect.DeepEqual(first, again) {
				t.Fatalf("%q: %+v then %+v", cmd, first, again)
			}
		}
		if in.Command != cmd || in.Scope.Root != root {
			t.Fatalf("Decide changed its input")
		}
	}
}
