package policy

// Matching a segment against the lists (DESIGN §4.2) and combining the
// segments' verdicts into the file's opinion on a line (§4.4).

import (
	"fmt"
	"github.com/brabo-dev/brabo/policy/internal/shell"
	"strings"

	"github.com/brabo-dev/brabo"
)

// agentLabel is how reasons name the agent's own allow patterns.
const agentLabel = "agent"

// judge gives one segment its verdict from the built-in denies, the file,
// and the agent's own allow patterns (tried after the file's allow).
// rootErr is CheckRoot(root), found once per line.
func judge(s *shell.Segment, rules, agent *Rules, root string, rootErr error, progs map[string]Program) brabo.Segment {
	v := brabo.Segment{Text: s.Text, Tokens: s.Tokens()}
	if s.Bare && s.Opaque == "" {
		v.Verdict, v.Rule = brabo.VerdictNoRule, "a variable assignment: no rule can allow it"
		if len(s.Assigns) == 0 {
			v.Verdict, v.Rule = brabo.VerdictNoRule, "a redirection with no program: no rule can allow it"
		}
		return v
	}
	if rule, ok := matchAny(builtinRules, listDeny, s, v.Tokens); ok {
		v.Verdict, v.Rule = brabo.VerdictDeny, "built-in deny: "+rule
		return v
	}
	if rule, ok := matchAny(rules, listDeny, s, v.Tokens); ok {
		v.Verdict, v.Rule = brabo.VerdictDeny, fileLabel+" deny: "+rule
		return v
	}
	if rule, ok := matchAny(rules, listAsk, s, v.Tokens); ok {
		v.Verdict, v.Rule = brabo.VerdictAsk, fileLabel+" ask: "+rule
		return v
	}
	if rules.Err() != nil {
		v.Verdict, v.Rule = brabo.VerdictNoRule, "permissions.json invalid"
		return v
	}
	if s.Opaque != "" {
		v.Verdict, v.Rule = brabo.VerdictOpaque, "opaque: "+s.Opaque
		return v
	}
	if shell.Base(s.Verb()) == "cd" && s.Verb() == "cd" {
		if _, known := shell.CdTarget(s); known && outside(s, root) == "" && rootErr == nil {
			v.Verdict, v.Rule = brabo.VerdictCd, "scope: cd inside the project folder"
			return v
		}
	}
	if s.ProgEnv != "" {
		v.Verdict, v.Rule = brabo.VerdictNoRule, s.ProgEnv+" set on the line may change what the program does: no allow pattern covers it"
		return v
	}
	toks, notIt := identity(s, v.Tokens, progs, root)
	if notIt != "" {
		v.Verdict, v.Rule = brabo.VerdictNoRule, notIt
		return v
	}
	rule, why, ok := matchAllow(rules, s, toks)
	if ok {
		v.Verdict, v.Rule = brabo.VerdictAllow, fileLabel+" allow: "+rule
		return v
	}
	if rule, agentWhy, ok := matchAllow(agent, s, toks); ok {
		v.Verdict, v.Rule = brabo.VerdictAllow, agentLabel+" allow: "+rule
		return v
	} else if why == "" {
		why = agentWhy
	}
	if why != "" {
		v.Verdict, v.Rule = brabo.VerdictNoRule, why
		return v
	}
	v.Verdict, v.Rule = brabo.VerdictNoRule, "no rule"
	return v
}

// matchAny finds the first pattern (in file order) of list k that matches the
// segment, comparing a verb written as a path by its basename too, and
// skipping leading options wherever a subcommand may start: deny and ask
// see through global options at least as widely as allow does (git -C .
// reset --hard meets Terminal(git reset --hard)).
func matchAny(r *Rules, k listKind, s *shell.Segment, tokens []string) (string, bool) {
	l := r.list(k)
	if l == nil || len(tokens) == 0 {
		return "", false
	}
	best := -1
	visit := func(i int) bool {
		if best < 0 || i < best {
			best = i
		}
		return true
	}
	l.terminal.match(tokens, visit)
	b := shell.Base(tokens[0])
	if b != tokens[0] {
		alt := append([]string{b}, tokens[1:]...)
		l.terminal.match(alt, visit)
	}
	if len(tokens) > 2 && strings.HasPrefix(tokens[1], "-") {
		// Options before the subcommand: every reading of them.
		alt := make([]string, 0, len(tokens))
		for _, v := range []string{tokens[0], b} {
			for _, at := range shell.SubcommandStarts(tokens) {
				if at > 1 {
					alt = append(append(alt[:0], v), tokens[at:]...)
					l.terminal.match(alt, visit)
				}
			}
			if b == tokens[0] {
				break
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return l.patterns[best].source, true
}

// matchAllow finds the first allow pattern that matches the segment as
// written (never by basename) and, for a seeded read-only pattern, only if
// the segment just reads. When only guarded patterns matched, why says what
// they do not cover.
func matchAllow(r *Rules, s *shell.Segment, tokens []string) (rule, why string, ok bool) {
	l := r.list(listAllow)
	if l == nil || len(tokens) == 0 {
		return "", "", false
	}
	best, shift := -1, 0
	visit := func(i int) bool {
		if best >= 0 && i > best {
			return true
		}
		p := &l.patterns[i]
		if v := uncoveredOption(s, len(p.tokens), shift); v != "" {
			why = v
			return true
		}
		if p.readOnly {
			if v := readOnlyViolation(s); v != "" {
				why = fmt.Sprintf("%s only covers reading: %s", p.source, v)
				return true
			}
		}
		best = i
		return true
	}
	l.terminal.match(tokens, visit)
	if at := harmlessGlobals(tokens); at > 1 {
		// git --no-pager log, git -C src status: the options do not change
		// what runs (-C's folder is checked as a path).
		shift = at - 1
		l.terminal.match(append([]string{tokens[0]}, tokens[at:]...), visit)
	}
	if best < 0 {
		return "", why, false
	}
	return l.patterns[best].source, "", true
}

// gitHarmlessGlobals are git's options before the subcommand that change
// neither the program that runs nor the configuration it reads; the value
// says whether the option takes the next word (-C's folder).
var gitHarmlessGlobals = map[string]bool{
	"--no-pager": false, "-P": false, "-C": true, "--no-optional-locks": false,
	"--literal-pathspecs": false, "--glob-pathspecs": false, "--noglob-pathspecs": false,
	"--icase-pathspecs": false, "--no-replace-objects": false, "--no-advice": false,
}

// harmlessGlobals returns where git's subcommand starts when only harmless
// global options stand before it, or 0.
func harmlessGlobals(tokens []string) int {
	if tokens[0] != "git" {
		return 0
	}
	i := 1
	for i < len(tokens) {
		takesNext, ok := gitHarmlessGlobals[tokens[i]]
		if !ok {
			break
		}
		i++
		if takesNext {
			i++
		}
	}
	if i == 1 || i >= len(tokens) || strings.HasPrefix(tokens[i], "-") {
		return 0
	}
	return i
}

// fileOpinion combines the segments' verdicts (DESIGN §4.4). It returns
// the compound rule's reason when the rule is still to apply: a compound
// line that is not all allowed asks, whatever the base (the container
// floor, a specific autonomy rule) — only auto mode drops this synthesised
// opinion (DESIGN §9, "Compound rule"). When no segment matched anything,
// the rule is applied after the caps, whose reasons say more.
func fileOpinion(d *brabo.Decision, verdicts []brabo.Segment, autoMode bool) (compound string) {
	var ask, unmatched *brabo.Segment
	allowRules := make([]string, 0, len(verdicts))
	cd := false
	for i := range verdicts {
		v := &verdicts[i]
		switch v.Verdict {
		case brabo.VerdictAsk:
			if ask == nil {
				ask = v
			}
		case brabo.VerdictAllow:
			if !shell.ContainsString(allowRules, v.Rule) {
				allowRules = append(allowRules, v.Rule)
			}
		case brabo.VerdictCd:
			cd = true
		default:
			if unmatched == nil {
				unmatched = v
			}
		}
	}
	if unmatched != nil && !autoMode && len(verdicts) > 1 {
		compound = fmt.Sprintf("compound: the segment %q has no rule", shell.Clip(unmatched.Text, 200))
		if unmatched.Rule != "no rule" {
			compound += " (" + unmatched.Rule + ")"
		}
	}
	switch {
	case ask != nil:
		d.Policy, d.Reason = brabo.RequireApproval, ask.Rule
	case unmatched == nil && len(verdicts) > 0:
		// A line that runs no program (a comment, [[ … ]]) matched nothing:
		// the file is silent on it, it does not approve it.
		d.Policy, d.Reason = brabo.AutoApprove, allowReason(allowRules, cd)
	case (len(allowRules) > 0 || cd) && compound != "":
		// Some segments matched: the rule applies at once.
		d.Policy, d.Reason = brabo.RequireApproval, compound
	default:
		return compound
	}
	return ""
}

func allowReason(rules []string, cd bool) string {
	if len(rules) == 0 {
		return "scope: cd inside the project folder"
	}
	if len(rules) == 1 && !cd {
		return rules[0]
	}
	// "permissions.json allow: A", "permissions.json allow: B" → one list
	const cdReason = "; scope: cd inside the project folder"
	n := len(cdReason)
	for _, r := range rules {
		n += len(r) + 2
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(rules[0])
	from, _, _ := strings.Cut(rules[0], " allow: ")
	for _, r := range rules[1:] {
		src, after, ok := strings.Cut(r, " allow: ")
		switch {
		case ok && src == from:
			b.WriteString(", ")
			b.WriteString(after)
		case ok:
			// The agent's own patterns after the file's: the reason keeps
			// saying which list allowed what.
			b.WriteString("; ")
			b.WriteString(r)
			from = src
		}
	}
	if cd {
		b.WriteString(cdReason)
	}
	return b.String()
}
