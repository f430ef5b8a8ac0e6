package ruleimport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/policy"
)

// CodexRulesDir is where a project's Codex rules are, relative to the
// project folder (Codex reads rules/ beside each configuration layer).
const CodexRulesDir = ".codex/rules"

// maxAlternatives bounds the patterns one prefix_rule expands to.
const maxAlternatives = 64

// codexLists maps a prefix_rule decision to a permissions.json list.
var codexLists = map[string]string{"allow": "allow", "prompt": "ask", "forbidden": "deny"}

// codexVerdict is the verdict of brabo's file that a Codex decision is
// ("" for no rule).
var codexVerdict = map[string]brabo.Verdict{"allow": brabo.VerdictAllow, "prompt": brabo.VerdictAsk,
	"forbidden": brabo.VerdictDeny, "": brabo.VerdictNoRule}

// candidate is one expanded prefix pattern of a rule.
type candidate struct {
	list, pattern, from, rule string
	argv                      []string
}

// Codex reads the prefix_rules of the project's .codex/rules/*.rules and of
// the extra files named, and carries each over only when codex (the binary
// at codexBin) decides its pattern as brabo would with the carried entries:
// the pattern alone, and with one more word after it.
func Codex(ctx context.Context, dir string, extra []string, codexBin string) (*Result, error) {
	r := &Result{Agent: "codex"}
	files, _ := filepath.Glob(filepath.Join(dir, CodexRulesDir, "*.rules"))
	sort.Strings(files)
	files = append(files, extra...)
	var cands []candidate
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		name := rel(dir, f)
		r.Files = append(r.Files, name)
		calls, err := parseStarlark(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		for _, c := range calls {
			from := fmt.Sprintf("%s:%d", name, c.line)
			text := callText(c)
			if c.name != "prefix_rule" {
				r.skip(from, text, c.name+"(…) is not a rule of what runs: brabo resolves the program a name runs itself")
				continue
			}
			cs, why := prefixCandidates(c)
			if why != "" {
				r.skip(from, text, why)
				continue
			}
			for i := range cs {
				cs[i].from, cs[i].rule = from, text
			}
			cands = append(cands, cs...)
		}
	}
	if len(cands) == 0 {
		return r, nil
	}
	if codexBin == "" {
		return nil, fmt.Errorf("no codex to check the rules' meaning with: put codex in PATH or give --codex PATH")
	}
	var lists [3][]string
	for _, c := range cands {
		for k, n := range policy.ListNames {
			if n == c.list {
				lists[k] = append(lists[k], c.pattern)
			}
		}
	}
	rules, err := policy.NewRules("permissions.json", lists[0], lists[1], lists[2])
	if err != nil {
		return nil, fmt.Errorf("the rules read as an invalid permissions.json: %v", err)
	}
	home, err := os.MkdirTemp("", "brabo-import-codex-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	for _, c := range cands {
		why, err := checkCandidate(ctx, codexBin, home, files, rules, c)
		if err != nil {
			return nil, err
		}
		if why != "" {
			r.skip(c.from, c.rule, why)
			continue
		}
		r.Entries = append(r.Entries, Entry{List: c.list, Pattern: c.pattern, From: c.from, Rule: c.rule})
	}
	return r, nil
}

// prefixCandidates expands a prefix_rule's alternatives into patterns.
func prefixCandidates(c starCall) ([]candidate, string) {
	decision := "allow" // Codex's default
	if d, ok := c.kwargs["decision"]; ok {
		s, _ := d.(string)
		decision = s
	}
	list, ok := codexLists[decision]
	if !ok {
		return nil, fmt.Sprintf("decision %v is none of allow, prompt, forbidden", c.kwargs["decision"])
	}
	pat, _ := c.kwargs["pattern"].([]any)
	if len(pat) == 0 {
		return nil, "the rule has no pattern list"
	}
	for k := range c.kwargs {
		switch k {
		case "pattern", "decision", "justification", "match", "not_match":
		default:
			return nil, "the argument " + k + " is not read"
		}
	}
	argvs := [][]string{nil}
	for _, el := range pat {
		var alts []string
		switch v := el.(type) {
		case string:
			alts = []string{v}
		case []any:
			for _, a := range v {
				s, ok := a.(string)
				if !ok {
					return nil, "a pattern alternative is not a string"
				}
				alts = append(alts, s)
			}
		default:
			return nil, "a pattern element is not a string or a list of strings"
		}
		if len(alts) == 0 || len(argvs)*len(alts) > maxAlternatives {
			return nil, fmt.Sprintf("the pattern has no alternative or more than %d", maxAlternatives)
		}
		var next [][]string
		for _, a := range argvs {
			for _, s := range alts {
				next = append(next, append(append([]string(nil), a...), s))
			}
		}
		argvs = next
	}
	var out []candidate
	for _, argv := range argvs {
		out = append(out, candidate{list: list, argv: argv, pattern: "Terminal(" + quoteWords(argv) + ")"})
	}
	return out, ""
}

// checkCandidate asks codex and brabo about the pattern alone and with one
// more word; "" means both agree on both.
func checkCandidate(ctx context.Context, codexBin, home string, files []string, rules *policy.Rules, c candidate) (string, error) {
	for _, argv := range [][]string{c.argv, append(append([]string(nil), c.argv...), "brabo-probe")} {
		cd, err := codexCheck(ctx, codexBin, home, files, argv)
		if err != nil {
			return "", err
		}
		root := home
		d := policy.Decide(policy.Input{Type: brabo.Terminal, Command: quoteWords(argv), Cwd: root, Role: brabo.Owner,
			Rules: rules, Scope: policy.Scope{Root: root, Mode: brabo.ModeLocal, ID: "import"}})
		bv := brabo.VerdictNoRule
		if len(d.Segments) == 1 {
			bv = d.Segments[0].Verdict
		}
		if want := codexVerdict[cd]; bv != want {
			shown := cd
			if shown == "" {
				shown = "no rule"
			}
			return fmt.Sprintf("codex execpolicy check decides %s for %q, brabo would read %s", shown, strings.Join(argv, " "), bv), nil
		}
	}
	return "", nil
}

// codexCheck runs codex execpolicy check on argv and returns its decision
// ("" when no rule matched).
func codexCheck(ctx context.Context, codexBin, home string, files, argv []string) (string, error) {
	args := []string{"execpolicy", "check"}
	for _, f := range files {
		args = append(args, "--rules", f)
	}
	args = append(append(args, "--"), argv...)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, codexBin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("codex execpolicy check %s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(lastLine(stderr.String())))
	}
	var out struct {
		Decision string `json:"decision"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return "", fmt.Errorf("codex execpolicy check printed no decision: %q", stdout.String())
	}
	return out.Decision, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// plainWord reports whether a word needs no quotes in a shell: letters,
// digits and _./:=@%+,- only (no regular expression: brabo hook links this
// package, and a package-level one is paid at every start).
func plainWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && !strings.ContainsRune("./:=@%+,-", rune(c)) {
			return false
		}
	}
	return true
}

// quoteWords writes argv as shell words, quoting where needed.
func quoteWords(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if plainWord(a) {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// callText is a call on one line for the report: its arguments but the
// examples (match, not_match) and the justification, comments left out.
func callText(c starCall) string {
	var parts []string
	for _, a := range c.args {
		parts = append(parts, starShow(a))
	}
	keys := make([]string, 0, len(c.kwargs))
	for k := range c.kwargs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "match", "not_match", "justification":
			continue
		}
		parts = append(parts, k+"="+starShow(c.kwargs[k]))
	}
	return c.name + "(" + strings.Join(parts, ", ") + ")"
}

func starShow(v any) string {
	switch v := v.(type) {
	case string:
		b, _ := json.Marshal(v)
		return string(b)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = starShow(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(v)
}
