package policy

// Fuzz targets for the policy engine. `go test` runs them on their seed
// corpus only (testdata/fuzz/Fuzz*/ and the f.Add calls); to fuzz:
//
//	go test -run='^$' -fuzz='^FuzzDecide$' -fuzztime=60s ./policy/
//	go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=60s ./policy/
//
// The deny/ask/allow checks use an oracle written here on purpose without
// the trie or the matching code of the package: a linear scan of the
// patterns over each returned segment's tokens, token prefix, a trailing
// '*' as an in-token prefix, and the verb by basename for deny and ask.

import (
	"errors"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/brabo-dev/brabo"
)

// fuzzScope is the project folder every fuzzed terminal action runs in.
var fuzzScope = Scope{Root: "/srv/projects/acme-1234abcd", Mode: brabo.ModeContainer, ID: "acme-1234abcd"}

// fuzzFixed are the patterns every fuzzed Rules holds besides the fuzzed
// one. They are plain words so that the oracle can tokenize them alone.
var fuzzFixed = [3][]string{
	listAllow: append(SeedAllow(),
		"Terminal(pnpm test:*)", "Terminal(tee)", "Terminal(git commit -m)", "Terminal(rm build)",
		"Terminal(sed -n)", "Terminal(true)", "Terminal(bash -c)", "Terminal(env)", "Terminal(xargs)",
		"Terminal(git push)", "Terminal(sudo ls)", "Terminal(npm publish)", "Terminal(/usr/bin/git status)"),
	listDeny: {"Terminal(curl)", "Terminal(wget*)", "Terminal(git push --force)", "Terminal(rm -rf)",
		"Terminal(chmod 777)", "Terminal(dd if=*)"},
	listAsk: {"Terminal(docker)", "Terminal(git reset --hard)", "Terminal(npm install)", "Terminal(make deploy*)"},
}

// oracleTok is one pattern token as the oracle sees it.
type oracleTok struct {
	text   string
	prefix bool // the token ended in '*': any token starting with text
}

type oraclePattern struct {
	source string
	toks   []oracleTok
}

// oracleSimple reports whether the content of a Terminal pattern is made
// only of characters the shell leaves alone, so that splitting it on blanks
// is exactly its tokenization.
func oracleSimple(content string) bool {
	if strings.TrimSpace(content) == "" {
		return false
	}
	for _, field := range oracleFields(content) {
		if field[0] == '!' || field[0] == '~' || field[0] == '#' {
			return false
		}
		for i := 0; i < len(field); i++ {
			c := field[i]
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
				strings.IndexByte("_-./:=,+@%*", c) >= 0
			if !ok {
				return false
			}
		}
	}
	// blanks other than space and tab are not separators for the shell
	return !strings.ContainsAny(content, "\n\r\v\f")
}

// oracleFields splits on the shell's blanks, space and tab; every other
// character, a Unicode space included, is part of a field.
func oracleFields(content string) []string {
	return strings.FieldsFunc(content, func(r rune) bool { return r == ' ' || r == '\t' })
}

// oracleTokens splits simple pattern content on blanks; a token that ends
// in '*' and holds no '/' is a prefix (DESIGN §4.2).
func oracleTokens(content string) []oracleTok {
	var out []oracleTok
	for _, f := range oracleFields(content) {
		if strings.HasSuffix(f, "*") && !strings.Contains(f, "/") {
			out = append(out, oracleTok{text: f[:len(f)-1], prefix: true})
		} else {
			out = append(out, oracleTok{text: f})
		}
	}
	return out
}

func oracleContent(src string) string {
	return strings.TrimSuffix(strings.TrimPrefix(src, "Terminal("), ")")
}

// oracleBasename is the last path element of a verb written as a path; a
// verb that ends in '/' is left alone.
func oracleBasename(verb string) string {
	parts := strings.Split(verb, "/")
	if last := parts[len(parts)-1]; last != "" {
		return last
	}
	return verb
}

func oraclePrefixMatch(p oraclePattern, tokens []string) bool {
	if len(p.toks) == 0 || len(p.toks) > len(tokens) {
		return false
	}
	for i, pt := range p.toks {
		if pt.prefix {
			// x:* is x itself too (DESIGN §9)
			colonBare := len(pt.text) > 1 && strings.HasSuffix(pt.text, ":") && tokens[i] == pt.text[:len(pt.text)-1]
			if !strings.HasPrefix(tokens[i], pt.text) && !colonBare {
				return false
			}
		} else if tokens[i] != pt.text {
			return false
		}
	}
	return true
}

// oracleMatch reports whether any pattern matches the tokens by token
// prefix; byBase (deny and ask) also tries the verb by its basename and
// every reading of leading options as flags or as options with a value
// (DESIGN §9: deny and ask see through global options); allow sees only
// through git's harmless globals.
func oracleMatch(list []oraclePattern, tokens []string, byBase bool) (string, bool) {
	if len(tokens) == 0 {
		return "", false
	}
	var alts [][]string
	verbs := []string{tokens[0]}
	if byBase {
		if b := oracleBasename(tokens[0]); b != tokens[0] {
			verbs = append(verbs, b)
		}
		for _, v := range verbs {
			alts = append(alts, append([]string{v}, tokens[1:]...))
			for _, at := range oracleStarts(tokens) {
				alts = append(alts, append([]string{v}, tokens[at:]...))
			}
		}
	} else {
		alts = append(alts, tokens)
		if tokens[0] == "git" {
			i := 1
			for i < len(tokens) {
				if tokens[i] == "-C" {
					i += 2
				} else if oracleHarmless[tokens[i]] {
					i++
				} else {
					break
				}
			}
			if i > 1 && i < len(tokens) && !strings.HasPrefix(tokens[i], "-") {
				alts = append(alts, append([]string{"git"}, tokens[i:]...))
			}
		}
	}
	for _, p := range list {
		for _, alt := range alts {
			if oraclePrefixMatch(p, alt) {
				return p.source, true
			}
		}
	}
	return "", false
}

var oracleHarmless = map[string]bool{"--no-pager": true, "-P": true, "--no-optional-locks": true,
	"--literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true,
	"--icase-pathspecs": true, "--no-replace-objects": true, "--no-advice": true}

// oracleStarts enumerates every reading of the options before a
// subcommand: each option stands alone, or takes the next word when that
// word is no option and the option holds no '='; an option the tool's
// table says takes a value always takes it. It returns where the
// subcommand starts in each reading.
func oracleStarts(tokens []string) []int {
	seen := map[int]bool{}
	var out []int
	var walk func(i int)
	walk = func(i int) {
		if i >= len(tokens) {
			return
		}
		t := tokens[i]
		switch {
		case t == "--":
			if i+1 < len(tokens) && !seen[i+1] {
				seen[i+1] = true
				out = append(out, i+1)
			}
		case !strings.HasPrefix(t, "-") || t == "-":
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		case shell.ToolGlobals[oracleBasename(tokens[0])][t]:
			walk(i + 2)
		default:
			walk(i + 1)
			if i+1 < len(tokens) && !strings.HasPrefix(tokens[i+1], "-") && !strings.Contains(t, "=") {
				walk(i + 2)
			}
		}
	}
	start := 1
	if oracleBasename(tokens[0]) == "cargo" && len(tokens) > 1 && strings.HasPrefix(tokens[1], "+") {
		start = 2
	}
	walk(start)
	return out
}

// oracleRules holds the three lists of one fuzzed file, the built-in denies
// included in deny.
type oracleRules [3][]oraclePattern

func newOracleRules() oracleRules {
	var o oracleRules
	for _, src := range builtinDeny {
		o[listDeny] = append(o[listDeny], oraclePattern{source: src, toks: oracleTokens(oracleContent(src))})
	}
	for k, list := range fuzzFixed {
		for _, src := range list {
			if !strings.HasPrefix(src, "Terminal(") {
				continue
			}
			o[k] = append(o[k], oraclePattern{source: src, toks: oracleTokens(oracleContent(src))})
		}
	}
	return o
}

// fuzzRules compiles the fixed patterns plus Terminal(<pattern>) in the list
// the fuzzer chose, and the oracle's view of the same lists. A pattern that
// does not compile is left out.
func fuzzRules(t *testing.T, pattern string, list byte) (*Rules, oracleRules) {
	t.Helper()
	k := listKind(list % 3)
	lists := fuzzFixed
	lists[k] = append(append([]string(nil), lists[k]...), "Terminal("+pattern+")")
	oracle := newOracleRules()
	rules, err := NewRules("permissions.json", lists[listAllow], lists[listDeny], lists[listAsk])
	if err != nil {
		var fe *FileError
		if !errors.As(err, &fe) || len(fe.Entries) == 0 {
			t.Fatalf("NewRules error is not a *FileError with entries: %#v", err)
		}
		if _, perr := patternTokens(pattern); perr == nil {
			t.Fatalf("NewRules refused Terminal(%q) that patternTokens accepts: %v", pattern, err)
		}
		rules, err = NewRules("permissions.json", fuzzFixed[listAllow], fuzzFixed[listDeny], fuzzFixed[listAsk])
		if err != nil {
			t.Fatalf("the fixed patterns do not compile: %v", err)
		}
		return rules, oracle
	}
	src := "Terminal(" + pattern + ")"
	var compiled []patternToken
	for _, p := range rules.lists[k].patterns {
		if p.source == src {
			compiled = p.tokens
		}
	}
	if compiled == nil {
		t.Fatalf("Terminal(%q) compiled but is not in the %s list", pattern, listNames[k])
	}
	var toks []oracleTok
	if oracleSimple(pattern) {
		// Plain words: the oracle tokenizes alone, and the package must agree.
		toks = oracleTokens(pattern)
		if len(toks) != len(compiled) {
			t.Fatalf("Terminal(%q): package tokens %+v, oracle tokens %+v", pattern, compiled, toks)
		}
		for i := range toks {
			if toks[i].text != compiled[i].text || toks[i].prefix != compiled[i].wildcard {
				t.Fatalf("Terminal(%q): package tokens %+v, oracle tokens %+v", pattern, compiled, toks)
			}
		}
	} else {
		// Quoting the oracle does not decode: take the package's tokens; the
		// matching below is still the oracle's.
		for _, c := range compiled {
			toks = append(toks, oracleTok{text: c.text, prefix: c.wildcard})
		}
	}
	oracle[k] = append(oracle[k], oraclePattern{source: src, toks: toks})
	return rules, oracle
}

// fuzzVariant is one way of proposing the same command.
type fuzzVariant struct {
	name      string
	autonomy  Autonomy
	container bool
	cwd       string
}

var fuzzVariants = []fuzzVariant{
	{name: "plain"},
	{name: "plain-cwd", cwd: "sub/dir"},
	{name: "auto-mode", autonomy: Autonomy{Wildcard: brabo.AutoApprove}},
	{name: "specific", autonomy: Autonomy{Specific: brabo.AutoApprove}},
	{name: "container-floor", container: true},
	{name: "floor+auto-mode", container: true, autonomy: Autonomy{Wildcard: brabo.AutoApprove}},
}

func FuzzDecide(f *testing.F) {
	f.Add("cd src && pnpm test --filter x | tee out.txt && git status; ls -la && echo done", "pnpm test", byte(0))
	f.Add("ls -la", "rm -rf", byte(1))
	f.Add("/bin/rm -rf /", "ls", byte(0))
	f.Fuzz(func(t *testing.T, command, pattern string, list byte) {
		rules, oracle := fuzzRules(t, pattern, list)
		for _, v := range fuzzVariants {
			in := Input{
				Type: brabo.Terminal, Command: command, Cwd: v.cwd, Role: brabo.Developer,
				Autonomy: v.autonomy, Rules: rules, Scope: fuzzScope, ContainerRunning: v.container,
			}
			d := Decide(in)
			checkDecision(t, v, in, d, oracle)
		}
		// The guards: too large, or a NUL byte, is never approved, whatever
		// would have approved it.
		worst := Input{
			Type: brabo.Terminal, Role: brabo.Developer, Rules: rules, Scope: fuzzScope,
			Autonomy: Autonomy{Wildcard: brabo.AutoApprove}, ContainerRunning: true,
		}
		big := worst
		big.Command = command + "\n#" + strings.Repeat("x", MaxCommandBytes)
		nul := worst
		cut := len(command) / 2
		nul.Command = command[:cut] + "\x00" + command[cut:]
		for _, in := range []Input{big, nul} {
			d := Decide(in)
			if strings.HasPrefix(d.Reason, "internal:") {
				t.Fatalf("Decide panicked on a guarded command (%d bytes): %s", len(in.Command), d.Reason)
			}
			if d.Policy == brabo.AutoApprove || len(d.Segments) > 0 {
				t.Fatalf("guarded command (%d bytes, NUL %v) was analysed: %s (%s), %d segments",
					len(in.Command), strings.IndexByte(in.Command, 0) >= 0, d.Policy, d.Reason, len(d.Segments))
			}
		}
	})
}

// checkDecision asserts the properties every decision on a fuzzed command
// must have.
func checkDecision(t *testing.T, v fuzzVariant, in Input, d brabo.Decision, oracle oracleRules) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("[%s] command %q: %s (%s)\nsegments: %+v\n"+format,
			append([]any{v.name, in.Command, d.Policy, d.Reason, d.Segments}, args...)...)
	}
	if strings.HasPrefix(d.Reason, "internal:") {
		fail("Decide panicked")
	}
	if !d.Policy.Valid() {
		fail("invalid policy")
	}
	if len(in.Command) > MaxCommandBytes || strings.IndexByte(in.Command, 0) >= 0 {
		if d.Policy == brabo.AutoApprove {
			fail("a command over 64 KiB or with a NUL byte was auto-approved")
		}
	}
	autoMode := in.Autonomy.Specific == "" && in.Autonomy.Wildcard == brabo.AutoApprove
	startsAuto := in.ContainerRunning || in.Autonomy.Specific == brabo.AutoApprove || autoMode

	// Deny and ask, checked by the oracle on every segment.
	denied := false
	for i, s := range d.Segments {
		denyRule, deny := oracleMatch(oracle[listDeny], s.Tokens, true)
		askRule, ask := oracleMatch(oracle[listAsk], s.Tokens, true)
		switch {
		case deny:
			denied = true
			if s.Verdict != brabo.VerdictDeny {
				fail("segment %d %q matches the deny pattern %s but has the verdict %s (%s)", i, s.Tokens, denyRule, s.Verdict, s.Rule)
			}
		case s.Verdict == brabo.VerdictDeny:
			fail("segment %d %q has the verdict deny (%s) but no deny pattern matches it", i, s.Tokens, s.Rule)
		case ask:
			if s.Verdict != brabo.VerdictAsk {
				fail("segment %d %q matches the ask pattern %s but has the verdict %s (%s)", i, s.Tokens, askRule, s.Verdict, s.Rule)
			}
		case s.Verdict == brabo.VerdictAsk:
			fail("segment %d %q has the verdict ask (%s) but no ask pattern matches it", i, s.Tokens, s.Rule)
		case s.Verdict == brabo.VerdictAllow:
			// allow never compares the verb by basename
			if _, ok := oracleMatch(oracle[listAllow], s.Tokens, false); !ok {
				fail("segment %d %q has the verdict allow (%s) but no allow pattern matches it", i, s.Tokens, s.Rule)
			}
		}
	}
	if denied && d.Policy != brabo.Deny {
		fail("a segment matches deny but the command is not denied")
	}
	if d.Policy != brabo.AutoApprove {
		return
	}

	// auto_approve: what must hold of every approved command.
	if len(d.Segments) == 0 && !startsAuto {
		fail("auto-approved with no segment: nothing in the file approved it")
	}
	// The forms bash and the parser read differently (DESIGN §9) are never
	// approved: a carriage return before a line feed or after a backslash;
	// a backslash-newline after $ or another backslash, or glued to a word
	// in a line with a heredoc.
	if strings.Contains(in.Command, "\r\n") || strings.Contains(in.Command, "\\\r") {
		fail("auto-approved a line with a CR-LF or a backslash-CR")
	}
	for i := strings.Index(in.Command, "\\\n"); i >= 0; {
		if i > 0 && (in.Command[i-1] == '$' || in.Command[i-1] == '\\' ||
			strings.Contains(in.Command, "<<") && in.Command[i-1] != ' ' && in.Command[i-1] != '\t' && in.Command[i-1] != '\n') {
			fail("auto-approved a line with a backslash-newline bash joins differently")
		}
		j := strings.Index(in.Command[i+2:], "\\\n")
		if j < 0 {
			break
		}
		i += 2 + j
	}
	for i, s := range d.Segments {
		switch s.Verdict {
		case brabo.VerdictDeny, brabo.VerdictAsk, brabo.VerdictOpaque:
			fail("auto-approved with segment %d %q of verdict %s", i, s.Tokens, s.Verdict)
		case brabo.VerdictAllow, brabo.VerdictCd:
		default:
			if !startsAuto {
				fail("auto-approved from the file with segment %d %q of verdict %s", i, s.Tokens, s.Verdict)
			}
		}
		if len(s.Tokens) == 0 {
			continue
		}
		// A program name bash reads only by expanding it is never approved.
		// (Only where the program is written as it reads: '*' quoted is a
		// program named *.)
		raw, _, _ := strings.Cut(strings.TrimLeft(s.Text, " \t"), " ")
		if raw == s.Tokens[0] && oracleExpands(s.Tokens[0]) {
			fail("auto-approved segment %d %q whose program is an expansion", i, s.Tokens)
		}
		verb := oracleBasename(s.Tokens[0])
		if verb == "sudo" || verb == "doas" {
			fail("auto-approved the privileged segment %d %q", i, s.Tokens)
		}
		if e := oracleEffect(verb, s.Tokens[1:]); e != "" {
			fail("auto-approved the external effect %s in segment %d %q", e, i, s.Tokens)
		}
		if autoMode {
			continue // auto mode frees the path scope
		}
		for _, tok := range s.Tokens {
			if why := oracleOutside(tok); why != "" {
				fail("auto-approved segment %d %q with %s", i, s.Tokens, why)
			}
		}
	}
}

// oracleExpands reports whether a token as decoded still shows an
// expansion: a $ before a name or a bracket, a backtick, a glob character,
// a leading ~, or braces around a comma.
func oracleExpands(tok string) bool {
	for i := 0; i+1 < len(tok); i++ {
		if tok[i] == '$' && strings.IndexByte("{(_@*#?!$-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'\"", tok[i+1]) >= 0 {
			return true
		}
	}
	return strings.ContainsAny(tok, "`*?[") || strings.HasPrefix(tok, "~") ||
		strings.Contains(tok, "{") && strings.Contains(tok, ",") && strings.Contains(tok, "}")
}

// oracleEffect recognises the plainest spellings of the external-effect
// commands of DESIGN §4.6 (subcommand right after the verb).
func oracleEffect(verb string, rest []string) string {
	at := func(i int) string {
		if i < len(rest) {
			return rest[i]
		}
		return ""
	}
	two := map[string][]string{
		"git":       {"push", "merge", "send-pack"},
		"npm":       {"publish"},
		"pnpm":      {"publish"},
		"yarn":      {"publish"},
		"cargo":     {"publish"},
		"kubectl":   {"apply", "create", "delete", "patch", "replace"},
		"helm":      {"install", "upgrade", "uninstall"},
		"terraform": {"apply", "destroy"},
		"docker":    {"push"},
	}
	for _, sub := range two[verb] {
		if at(0) == sub {
			return verb + " " + sub
		}
	}
	three := map[string][][2]string{
		"git":  {{"remote", "add"}, {"remote", "set-url"}},
		"gh":   {{"pr", "create"}, {"pr", "merge"}, {"release", "create"}, {"workflow", "run"}},
		"glab": {{"mr", "create"}, {"mr", "merge"}, {"release", "create"}},
	}
	for _, sub := range three[verb] {
		if at(0) == sub[0] && at(1) == sub[1] {
			return verb + " " + sub[0] + " " + sub[1]
		}
	}
	return ""
}

// oracleOutside reports a token that plainly names a place outside the
// project folder: an absolute path elsewhere, the home directory.
func oracleOutside(tok string) string {
	switch {
	case strings.HasPrefix(tok, "~"):
		return "the home directory " + tok
	case strings.Contains(tok, "$HOME") || strings.Contains(tok, "${HOME"):
		return "the home directory " + tok
	case strings.HasPrefix(tok, "/"):
		p := path.Clean(tok)
		switch p {
		case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr":
			return ""
		}
		if p != fuzzScope.Root && !strings.HasPrefix(p, fuzzScope.Root+"/") {
			return "the path " + tok + " outside the project folder"
		}
	}
	return ""
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"allow": ["Terminal(pnpm test:*)", "Terminal(git status)"], "deny": ["Terminal(curl:*)"], "ask": ["GitPush()"]}`))
	f.Add([]byte(``))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"allow": "Terminal(ls)"}`))
	f.Add([]byte(`{"allow": [1, null, "Terminal()"], "deny": ["Nope(x)"], "ask": [")("]}`))
	f.Add([]byte(`{"allow": ["GitPush(x)", "Terminal(ls; rm -rf /)", "Terminal(a=b ls)", "Terminal(ls $(id))"]}`))
	f.Add([]byte(`{"allow": ["Terminal('pnpm' \"test\" $'\\x67it' rm\\ -rf)"], "extra": {"kept": true}}`))
	f.Add([]byte("{\"allow\": [\"Terminal(ls\u0000)\"]}"))
	f.Add([]byte(`{"allow": ["Terminal(ls`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := Parse("permissions.json", data)
		if rules == nil {
			t.Fatalf("Parse returned nil Rules (err %v)", err)
		}
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse error is %T, not *FileError: %v", err, err)
			}
			if len(fe.Entries) == 0 {
				t.Fatalf("Parse returned a *FileError with no entries: %v", err)
			}
			if fe.File != "permissions.json" {
				t.Fatalf("FileError names %q, not the file", fe.File)
			}
			if rules.Err() == nil {
				t.Fatalf("Parse returned an error but Rules.Err() is nil: %v", err)
			}
			if brabo.ErrorCode(err) != brabo.CodeInvalidPermissions {
				t.Fatalf("Parse error code %q", brabo.ErrorCode(err))
			}
			if !utf8.ValidString(err.Error()) && utf8.Valid(data) {
				t.Fatalf("error text is not UTF-8: %q", err.Error())
			}
		} else if rules.Err() != nil {
			t.Fatalf("Parse returned no error but Rules.Err() is %v", rules.Err())
		}
		// Whatever the file, Decide stays total, and an invalid file never
		// approves anything (it fails closed).
		for _, typ := range []brabo.ActionType{brabo.Terminal, brabo.GitCommit, brabo.GitPush, brabo.Spend} {
			for _, cmd := range []string{"ls -la", "cd src && pnpm test | tee out.txt", "rm -rf /"} {
				in := Input{Type: typ, Command: cmd, Role: brabo.Owner, Rules: rules, Scope: fuzzScope,
					ContainerRunning: true, Autonomy: Autonomy{Wildcard: brabo.AutoApprove}}
				d := Decide(in)
				if strings.HasPrefix(d.Reason, "internal:") {
					t.Fatalf("Decide(%s, %q) panicked: %s", typ, cmd, d.Reason)
				}
				if err != nil && d.Policy == brabo.AutoApprove {
					t.Fatalf("Decide(%s, %q) auto-approved with an invalid file: %s", typ, cmd, d.Reason)
				}
				if typ == brabo.Terminal && cmd == "rm -rf /" && d.Policy != brabo.Deny {
					t.Fatalf("the built-in deny did not hold: %s (%s)", d.Policy, d.Reason)
				}
			}
		}
	})
}
